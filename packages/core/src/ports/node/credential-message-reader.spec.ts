import { describe, expect, it } from 'vitest';
import { encodeCredentialMessage } from '../../handoff/credential-channel.js';
import { CredentialMessageReader } from './credential-message-reader.js';

const keep = (scope: string, token: string) => encodeCredentialMessage({ kind: 'keep', scope, token });

describe(CredentialMessageReader, () => {
  it('reads one message per line however the bytes are chunked, CRLF included', () => {
    const reader = new CredentialMessageReader();
    const bytes = Buffer.from(
      `${encodeCredentialMessage({ kind: 'handed', credentials: [{ scope: 'http://h/', token: 'tö' }] })}${keep('http://a/', 'x').replace('\n', '\r\n')}`,
    );
    const messages = [];
    // Byte by byte: a multi-byte character split across chunks stays whole.
    for (const byte of bytes) messages.push(...reader.push(Buffer.from([byte])));
    expect(messages).toEqual([
      { kind: 'handed', credentials: [{ scope: 'http://h/', token: 'tö' }] },
      { kind: 'keep', scope: 'http://a/', token: 'x' },
    ]);
  });

  it('skips lines that are not messages and drops an overlong line whole, reading on after it', () => {
    const reader = new CredentialMessageReader(64);
    const long = keep('http://long/', 'y'.repeat(100));
    const messages = [
      ...reader.push(
        Buffer.from('not json\n\n{"jsonrpc":"2.0","method":"x"}\n{"kind":"keep","scope":"","token":"t"}\n'),
      ),
      ...reader.push(Buffer.from(long.slice(0, 70))),
      ...reader.push(Buffer.from(long.slice(70))),
      ...reader.push(Buffer.from(keep('http://b/', 'z'))),
    ];
    expect(messages).toEqual([{ kind: 'keep', scope: 'http://b/', token: 'z' }]);
  });
});
