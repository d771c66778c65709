import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userCacheDir } from './user-cache-dir.js';

describe(userCacheDir, () => {
  it('is an absolute XDG_CACHE_HOME as given', () => {
    expect(userCacheDir({ XDG_CACHE_HOME: '/var/cache/me', HOME: '/home/me' }, 'linux')).toBe('/var/cache/me');
  });

  it('ignores a relative or blank XDG_CACHE_HOME, as the XDG rule says', () => {
    expect(userCacheDir({ XDG_CACHE_HOME: 'cache', HOME: '/home/me' }, 'linux')).toBe('/home/me/.cache');
    expect(userCacheDir({ XDG_CACHE_HOME: '  ', HOME: '/home/me' }, 'linux')).toBe('/home/me/.cache');
  });

  it('is ~/Library/Caches on macOS, and the OS home without HOME', () => {
    expect(userCacheDir({ HOME: '/Users/me' }, 'darwin')).toBe('/Users/me/Library/Caches');
    expect(userCacheDir({}, 'linux')).toBe(join(homedir(), '.cache'));
  });
});
