import { describe, expect, it } from 'vitest';
import { buildKernelEnvironment } from './build-kernel-environment.js';

describe(buildKernelEnvironment, () => {
  it("is the client's environment without internal variables, never the daemon's", () => {
    const choice = buildKernelEnvironment(
      { PATH: '/client/bin', HOME: '/home/client', API_KEY: 'k', NTERACT_MCP_X: '1', RUNTIMED_SOCKET_PATH: '/s' },
      { PATH: '/daemon/bin', DAEMON_ONLY: 'd' },
    );
    expect(choice.env).toEqual({
      PATH: '/client/bin',
      HOME: '/home/client',
      API_KEY: 'k',
      PYDEVD_DISABLE_FILE_VALIDATION: '1',
    });
    expect(choice.withheld).toEqual(['NTERACT_MCP_X', 'RUNTIMED_SOCKET_PATH']);
  });

  it("takes only the basics of the daemon's environment when the client sent none", () => {
    const choice = buildKernelEnvironment(undefined, {
      PATH: '/daemon/bin',
      HOME: '/home/d',
      LC_ALL: 'C.UTF-8',
      AWS_SECRET_ACCESS_KEY: 'secret',
      JUPYTER_TOKEN: 't',
      NTERACT_MCP_LOG_LEVEL: 'debug',
    });
    expect(choice.env).toEqual({
      PATH: '/daemon/bin',
      HOME: '/home/d',
      LC_ALL: 'C.UTF-8',
      PYDEVD_DISABLE_FILE_VALIDATION: '1',
    });
  });

  it('keeps a PYDEVD_DISABLE_FILE_VALIDATION the client set', () => {
    expect(buildKernelEnvironment({ PYDEVD_DISABLE_FILE_VALIDATION: '0' }, {}).env).toEqual({
      PYDEVD_DISABLE_FILE_VALIDATION: '0',
    });
  });
});
