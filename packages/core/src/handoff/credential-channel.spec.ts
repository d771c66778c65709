import { describe, expect, it } from 'vitest';
import { decodeCredentialMessage, encodeCredentialMessage } from './credential-channel.js';

describe('the credential channel contract', () => {
  it('round-trips both messages as one line each', () => {
    const handed = { kind: 'handed', credentials: [{ scope: 'http://h:8888/', token: 't1' }] } as const;
    const keep = { kind: 'keep', scope: 'https://hub/user/ada/', token: 't2' } as const;
    for (const message of [handed, keep, { kind: 'handed', credentials: [] } as const]) {
      const line = encodeCredentialMessage(message);
      expect(line.endsWith('\n')).toBe(true);
      expect(line.slice(0, -1)).not.toContain('\n');
      expect(decodeCredentialMessage(line.slice(0, -1))).toEqual(message);
    }
  });

  it('reads anything else as no message, never throwing', () => {
    for (const line of [
      '',
      'not json',
      'null',
      '[]',
      '{"kind":"keep","scope":"http://h/"}',
      '{"kind":"keep","scope":"","token":"t"}',
      '{"kind":"keep","scope":"http://h/","token":7}',
      '{"kind":"handed","credentials":[{"scope":"http://h/"}]}',
      '{"kind":"handed"}',
      '{"kind":"other","scope":"http://h/","token":"t"}',
    ]) {
      expect(decodeCredentialMessage(line)).toBeUndefined();
    }
  });
});
