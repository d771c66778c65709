import { describe, expect, it } from 'vitest';
import { kernelEnvironmentOf } from './kernel-environment-of.js';

describe('kernelEnvironmentOf', () => {
  it('keeps the client environment but withholds internal variables and hosted tokens', () => {
    const { env, withheld } = kernelEnvironmentOf({
      PATH: '/usr/bin',
      HOME: '/home/me',
      MY_API_KEY: 'secret-value',
      NTERACT_MCP_REJOIN_NOTEBOOK: 'x',
      RUNTIMED_SOCKET_PATH: '/run/sock',
      JUPYTER_TOKEN: 'tok',
      JUPYTERHUB_API_TOKEN: 'tok2',
      UNSET: undefined,
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/me', MY_API_KEY: 'secret-value' });
    expect(withheld).toEqual([
      'JUPYTERHUB_API_TOKEN',
      'JUPYTER_TOKEN',
      'NTERACT_MCP_REJOIN_NOTEBOOK',
      'RUNTIMED_SOCKET_PATH',
    ]);
  });

  it('drops the names and prefixes of NTERACT_MCP_KERNEL_ENV_DROP', () => {
    const { env, withheld } = kernelEnvironmentOf({
      PATH: '/usr/bin',
      AWS_PROFILE: 'prod',
      AWS_REGION: 'eu',
      OTHER: '1',
      NTERACT_MCP_KERNEL_ENV_DROP: ' AWS_* , OTHER,',
    });
    expect(env).toEqual({ PATH: '/usr/bin' });
    expect(withheld).toEqual(['AWS_PROFILE', 'AWS_REGION', 'NTERACT_MCP_KERNEL_ENV_DROP', 'OTHER']);
  });

  it('passes a hosted token that NTERACT_MCP_KERNEL_ENV_KEEP names, but never an internal variable', () => {
    const { env } = kernelEnvironmentOf({
      JUPYTER_TOKEN: 'tok',
      NTERACT_MCP_LOG_LEVEL: 'debug',
      NTERACT_MCP_KERNEL_ENV_KEEP: 'JUPYTER_TOKEN,NTERACT_MCP_LOG_LEVEL',
    });
    expect(env).toEqual({ JUPYTER_TOKEN: 'tok' });
  });

  it('lets a drop win over a keep', () => {
    const { env } = kernelEnvironmentOf({
      JUPYTER_TOKEN: 'tok',
      NTERACT_MCP_KERNEL_ENV_KEEP: 'JUPYTER_TOKEN',
      NTERACT_MCP_KERNEL_ENV_DROP: 'JUPYTER_*',
    });
    expect(env).toEqual({});
  });
});
