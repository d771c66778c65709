import { describe, expect, it } from 'vitest';
import { parseRuntimedOptions } from './runtimed-options.js';

describe('parseRuntimedOptions: keep-alive and journal', () => {
  it('keeps a vanished peer’s kernel 180 s by default, well past the normal 30 s, and journals without fdatasync', () => {
    expect(parseRuntimedOptions(['start'])).toMatchObject({
      keepAliveMs: 30_000,
      vanishedPeerKeepAliveMs: 180_000,
      journalFsync: false,
    });
  });

  it('takes the vanished keep-alive in seconds or milliseconds, and --journal-fsync', () => {
    expect(parseRuntimedOptions(['start', '--vanished-keep-alive-secs', '300'])).toMatchObject({
      vanishedPeerKeepAliveMs: 300_000,
    });
    expect(
      parseRuntimedOptions(['start', '--vanished-keep-alive-ms=1500', '--journal-fsync', '--keep-alive-ms', '10']),
    ).toMatchObject({ vanishedPeerKeepAliveMs: 1500, keepAliveMs: 10, journalFsync: true });
  });

  it('refuses a bad value naming the option', () => {
    expect(() => parseRuntimedOptions(['start', '--vanished-keep-alive-ms', 'soon'])).toThrow(
      "--vanished-keep-alive-ms must be a whole number from 0 to 604800000, got 'soon'",
    );
  });
});

describe('parseRuntimedOptions: page --rotate', () => {
  it('takes page --rotate with the daemon’s socket and data dir', () => {
    expect(parseRuntimedOptions(['page', '--rotate'])).toMatchObject({ command: 'page', rotate: true });
    expect(
      parseRuntimedOptions(['page', '--socket', '/run/x/runtimed.sock', '--rotate', '--data-dir=/d']),
    ).toMatchObject({ command: 'page', rotate: true, socketPath: '/run/x/runtimed.sock', dataDir: '/d' });
    expect(parseRuntimedOptions(['status'])).toMatchObject({ rotate: false });
  });

  it('refuses page without --rotate, saying what it needs, and --rotate for another command', () => {
    expect(() => parseRuntimedOptions(['page'])).toThrow("'runtimed page' needs --rotate");
    expect(() => parseRuntimedOptions(['page', '--socket', '/s'])).toThrow("'runtimed page' needs --rotate");
    expect(() => parseRuntimedOptions(['page', 'x.ipynb', '--rotate'])).toThrow(
      "Unknown option 'x.ipynb' for 'runtimed page'",
    );
    expect(() => parseRuntimedOptions(['open', '--rotate'])).toThrow("Unknown option '--rotate' for 'runtimed open'");
  });

  it('shows the help for page --help rather than refusing it', () => {
    expect(parseRuntimedOptions(['page', '--help'])).toMatchObject({ command: 'help' });
  });
});
