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
