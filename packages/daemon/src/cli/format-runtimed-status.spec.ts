import { describe, expect, it } from 'vitest';
import { formatRuntimedStatus } from './format-runtimed-status.js';

const daemon = { version: '0.1.0', pid: 4100, started_at: '2026-12-01T10:00:00.000Z' };

describe(formatRuntimedStatus, () => {
  it('lists each room with its peers by label, its kernel state and kernelspec, and its last save', () => {
    const text = formatRuntimedStatus(
      daemon,
      '/run/runt/runtimed.sock',
      [
        {
          notebook_id: '6f1c2a9e-0000-4000-8000-000000000001',
          active_peers: 2,
          has_kernel: true,
          kernel_status: 'busy',
          ephemeral: false,
          notebook_path: '/home/ada/analysis.ipynb',
          peer_labels: ['Claude Code agent:ada:s1', 'Cursor agent:ada:s2'],
          runtime: { state: 'ready', kernel_status: 'busy' },
          kernel_name: 'python3',
          kernel_pid: 4242,
          last_saved: { at: '2026-12-01T10:05:00.000Z', path: '/home/ada/analysis.ipynb' },
        },
        {
          notebook_id: '6f1c2a9e-0000-4000-8000-000000000002',
          active_peers: 0,
          has_kernel: false,
          kernel_status: null,
          ephemeral: true,
          notebook_path: null,
          peer_labels: [],
          runtime: { state: 'unavailable', kernel_status: null, reason: 'no kernelspec ir is installed' },
          kernel_name: 'ir',
          last_saved: null,
        },
      ],
      'http://127.0.0.1:8765/',
    );
    expect(text).toBe(
      [
        'runtimed 0.1.0 running (pid 4100, started 2026-12-01T10:00:00.000Z)',
        'socket: /run/runt/runtimed.sock',
        "page: http://127.0.0.1:8765/ ('runtimed open' prints an address that opens it)",
        'rooms: 2',
        '  /home/ada/analysis.ipynb  6f1c2a9e-0000-4000-8000-000000000001',
        '    peers: 2 (Claude Code agent:ada:s1, Cursor agent:ada:s2)',
        '    kernel: ready, busy (python3, pid 4242)',
        '    last save: 2026-12-01T10:05:00.000Z to /home/ada/analysis.ipynb',
        '  untitled (ephemeral)  6f1c2a9e-0000-4000-8000-000000000002',
        '    peers: 0',
        '    kernel: unavailable: no kernelspec ir is installed (ir)',
        '    last save: none yet',
        '',
      ].join('\n'),
    );
  });

  it('shows what an older daemon sends (no labels, runtime or save), and a file conflict', () => {
    const text = formatRuntimedStatus(daemon, '/s', [
      {
        notebook_id: 'n-1',
        active_peers: 1,
        has_kernel: true,
        kernel_status: 'idle',
        ephemeral: false,
        notebook_path: '/a.ipynb',
        file_conflict: '/a.ipynb was changed on disk by another program',
      },
    ]);
    expect(text.split('\n')[2]).toBe('page: none');
    expect(text.split('\n').slice(4)).toEqual([
      '  /a.ipynb  n-1',
      '    peers: 1',
      '    kernel: idle',
      '    file conflict: /a.ipynb was changed on disk by another program',
      '',
    ]);
  });
});
