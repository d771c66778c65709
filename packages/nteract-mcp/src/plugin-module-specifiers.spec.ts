import { describe, expect, it } from 'vitest';
import {
  namesPluginModules,
  pluginModuleSpecifiers,
  pluginModulesEnvironmentVariable,
} from './plugin-module-specifiers.js';

describe(pluginModuleSpecifiers, () => {
  it('takes --plugin arguments first, then the PATH-like variable, dropping blanks', () => {
    expect(
      pluginModuleSpecifiers(['./a.js'], { [pluginModulesEnvironmentVariable]: ' /x/b.js::acme-plugin ' }),
    ).toEqual(['./a.js', '/x/b.js', 'acme-plugin']);
    expect(pluginModuleSpecifiers([], {})).toEqual([]);
  });
});

describe(namesPluginModules, () => {
  it('is true for a --plugin argument (even one missing its module) or a non-blank variable', () => {
    expect(namesPluginModules(['--plugin', './a.js'], {})).toBe(true);
    expect(namesPluginModules(['--check', '--plugin'], {})).toBe(true);
    expect(namesPluginModules([], { [pluginModulesEnvironmentVariable]: 'acme-plugin' })).toBe(true);
  });

  it('is false without either, a blank variable included', () => {
    expect(namesPluginModules([], {})).toBe(false);
    expect(namesPluginModules(['--check'], { [pluginModulesEnvironmentVariable]: ' : ' })).toBe(false);
  });
});
