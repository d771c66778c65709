import { Duplex, PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CredentialRelay } from './credential-relay.js';

/** A channel as the proxy holds it: what it writes goes to `written`, `fromChild` is what the child sends. */
function channel(): { end: Duplex; fromChild: PassThrough; written: () => string } {
  const fromChild = new PassThrough();
  const toChild = new PassThrough();
  let text = '';
  toChild.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  return { end: Duplex.from({ readable: fromChild, writable: toChild }), fromChild, written: () => text };
}

describe(CredentialRelay, () => {
  it('hands every kept token to the next channel, the latest per scope, and ignores malformed lines', async () => {
    const relay = new CredentialRelay();
    const first = channel();
    relay.attach(first.end);
    expect(first.written()).toBe('{"kind":"handed","credentials":[]}\n');
    first.fromChild.write('not json\n{"kind":"keep","scope":"http://h/","token":"a"}\n');
    first.fromChild.write('{"kind":"keep","scope":"http://h/","token":"b"}\n{"kind":"handed","credentials":[]}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(relay.size).toBe(1);
    const second = channel();
    relay.attach(second.end);
    expect(JSON.parse(second.written())).toEqual({ kind: 'handed', credentials: [{ scope: 'http://h/', token: 'b' }] });
  });

  it('survives a channel that fails (a child that never reads it resets it when it exits)', async () => {
    const relay = new CredentialRelay();
    const failing = channel();
    relay.attach(failing.end);
    failing.end.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    await new Promise((resolve) => setImmediate(resolve));
    const next = channel();
    relay.attach(next.end);
    expect(next.written()).toBe('{"kind":"handed","credentials":[]}\n');
  });
});
