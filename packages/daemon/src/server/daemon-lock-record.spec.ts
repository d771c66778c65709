import { describe, expect, it } from 'vitest';
import { formatDaemonLockRecord, parseDaemonLockRecord } from './daemon-lock-record.js';

describe(parseDaemonLockRecord, () => {
  it('reads back what it wrote', () => {
    const record = {
      pid: 12,
      startTime: 'proc:99',
      bootId: 'b',
      nonce: 'n',
      socket: '/run/s.sock',
      startedAt: '2026-01-01T00:00:00.000Z',
      state: 'serving' as const,
    };
    expect(parseDaemonLockRecord(formatDaemonLockRecord(record))).toEqual(record);
  });

  it("reads an older version's pid-only lock", () => {
    expect(parseDaemonLockRecord('4242\n')).toEqual({ pid: 4242 });
  });

  it('rejects empty, garbage and pid-less text, and ignores fields of the wrong type', () => {
    for (const text of ['', '0', 'abc', '{"pid":"7"}', '{"pid":-1}', '[1]', 'null']) {
      expect(parseDaemonLockRecord(text)).toBeUndefined();
    }
    expect(parseDaemonLockRecord('{"pid":5,"start_time":5,"state":"weird"}')).toEqual({ pid: 5 });
  });
});
