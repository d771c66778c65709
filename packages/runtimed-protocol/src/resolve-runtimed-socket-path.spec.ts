import { describe, expect, it } from 'vitest';
import { resolveRuntimedSocketPath } from './resolve-runtimed-socket-path.js';

describe(resolveRuntimedSocketPath, () => {
  it('prefers RUNTIMED_SOCKET_PATH, trimmed', () => {
    expect(resolveRuntimedSocketPath({ RUNTIMED_SOCKET_PATH: ' /tmp/x.sock ', XDG_RUNTIME_DIR: '/run/user/1' })).toBe(
      '/tmp/x.sock',
    );
  });

  it('then the XDG runtime dir', () => {
    expect(resolveRuntimedSocketPath({ RUNTIMED_SOCKET_PATH: '  ', XDG_RUNTIME_DIR: '/run/user/1' })).toBe(
      '/run/user/1/runt/runtimed.sock',
    );
  });

  it('then the user cache dir, per platform', () => {
    expect(resolveRuntimedSocketPath({ XDG_CACHE_HOME: '/c' }, 'linux')).toBe('/c/runt/runtimed.sock');
    expect(resolveRuntimedSocketPath({ HOME: '/home/ada' }, 'linux')).toBe('/home/ada/.cache/runt/runtimed.sock');
    expect(resolveRuntimedSocketPath({ HOME: '/Users/ada' }, 'darwin')).toBe(
      '/Users/ada/Library/Caches/runt/runtimed.sock',
    );
  });
});
