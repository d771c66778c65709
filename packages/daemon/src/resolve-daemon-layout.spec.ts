import { describe, expect, it } from 'vitest';
import { DaemonError } from './daemon-error.js';
import { resolveDaemonLayout } from './resolve-daemon-layout.js';

describe(resolveDaemonLayout, () => {
  it('puts lock and daemon.json beside the discovered socket, and state under the XDG data dir', () => {
    expect(resolveDaemonLayout({ env: { XDG_RUNTIME_DIR: '/run/user/5', XDG_DATA_HOME: '/home/a/.data' } })).toEqual({
      socketPath: '/run/user/5/runt/runtimed.sock',
      socketDir: '/run/user/5/runt',
      lockPath: '/run/user/5/runt/daemon.lock',
      infoPath: '/run/user/5/runt/daemon.json',
      pagePath: '/run/user/5/runt/page.json',
      dataDir: '/home/a/.data/runt',
      registryPath: '/home/a/.data/runt/registry.json',
      untitledDir: '/home/a/.data/runt/untitled',
      kernelsDir: '/home/a/.data/runt/kernels',
      connectionsDir: '/run/user/5/runt/kernels',
      probeCachePath: '/home/a/.data/runt/cache/python-probes.json',
    });
  });

  it('honours explicit paths and falls back to ~/.local/share', () => {
    const layout = resolveDaemonLayout({ socketPath: '/tmp/t/d.sock', env: { HOME: '/home/b' } });
    expect(layout.socketPath).toBe('/tmp/t/d.sock');
    expect(layout.dataDir).toBe('/home/b/.local/share/runt');
    expect(resolveDaemonLayout({ dataDir: '/srv/runt', socketPath: '/tmp/x.sock' }).registryPath).toBe(
      '/srv/runt/registry.json',
    );
  });

  it('refuses a socket path longer than a Unix socket allows', () => {
    const run = () => resolveDaemonLayout({ socketPath: `/tmp/${'x'.repeat(120)}.sock` });
    expect(run).toThrowError(/too long for a Unix socket/);
    try {
      run();
    } catch (error) {
      expect(DaemonError.is(error, 'invalidOption')).toBe(true);
    }
  });
});
