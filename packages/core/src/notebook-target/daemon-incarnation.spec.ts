import { describe, expect, it } from 'vitest';
import { CoreError } from '../errors/core-error.js';
import { DaemonIncarnation } from './daemon-incarnation.js';

describe(DaemonIncarnation, () => {
  const startedAt = '2026-11-29T10:00:00.123456Z';

  it('is equal for the same pid and start time, whatever the instance', () => {
    expect(DaemonIncarnation.of(100, startedAt).equals(DaemonIncarnation.of(100, startedAt))).toBe(true);
  });

  it('differs when the pid or the start time differs (a same-version restart is a new life)', () => {
    const a = DaemonIncarnation.of(100, startedAt);
    expect(a.equals(DaemonIncarnation.of(101, startedAt))).toBe(false);
    expect(a.equals(DaemonIncarnation.of(100, '2026-11-29T10:00:01Z'))).toBe(false);
    expect(a.equals(undefined)).toBe(false);
  });

  it('refuses a malformed pid or start time', () => {
    for (const make of [
      () => DaemonIncarnation.of(0, startedAt),
      () => DaemonIncarnation.of(1.5, startedAt),
      () => DaemonIncarnation.of(5, 'yesterday'),
    ]) {
      expect(make).toThrowError(expect.objectContaining({ kind: 'invalidIncarnation' }));
      try {
        make();
      } catch (error) {
        expect(CoreError.is(error, 'invalidIncarnation')).toBe(true);
      }
    }
  });

  it('serialises as the daemon spells it and is immutable', () => {
    const a = DaemonIncarnation.of(7, startedAt);
    expect(JSON.parse(JSON.stringify(a))).toEqual({ pid: 7, started_at: startedAt });
    expect(Object.isFrozen(a)).toBe(true);
  });
});
