import { describe, expect, it } from 'vitest';
import {
  createJupyterMessage,
  decodeJupyterMessage,
  encodeJupyterMessage,
  signJupyterParts,
} from './jupyter-message.js';

const sender = { session: 'session-1', username: 'tester' };
const key = 'a-secret-key';

describe(createJupyterMessage, () => {
  it('makes a 5.3 header with a fresh msg_id each time', () => {
    const first = createJupyterMessage(sender, 'kernel_info_request', {});
    const second = createJupyterMessage(sender, 'kernel_info_request', {});
    expect(first.header).toMatchObject({
      session: 'session-1',
      username: 'tester',
      msg_type: 'kernel_info_request',
      version: '5.3',
    });
    expect(first.header.msg_id).not.toBe(second.header.msg_id);
    expect(Number.isNaN(Date.parse(first.header.date))).toBe(false);
    expect(first.parentHeader).toEqual({});
  });
});

describe(encodeJupyterMessage, () => {
  it('signs header, parent header, metadata and content with HMAC-SHA256', () => {
    const message = createJupyterMessage(sender, 'execute_request', { code: '1' });
    const frames = encodeJupyterMessage(message, key);
    expect(frames[0]?.toString()).toBe('<IDS|MSG>');
    expect(frames[1]?.toString()).toBe(signJupyterParts(key, frames.slice(2, 6)));
    expect(frames[1]?.toString()).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(frames[5]?.toString() ?? '')).toEqual({ code: '1' });
  });

  it('leaves the signature empty without a key', () => {
    const frames = encodeJupyterMessage(createJupyterMessage(sender, 'x', {}), '');
    expect(frames[1]?.length).toBe(0);
    expect(decodeJupyterMessage(frames, '')?.header.msg_type).toBe('x');
  });
});

describe(decodeJupyterMessage, () => {
  it('round-trips a message, skipping identities or a PUB topic before the delimiter', () => {
    const parent = createJupyterMessage(sender, 'execute_request', { code: 'print(1)' });
    const message = createJupyterMessage(sender, 'stream', { name: 'stdout', text: '1\n' }, parent.header);
    const frames = [Buffer.from('kernel.abc.stream'), ...encodeJupyterMessage(message, key)];
    const decoded = decodeJupyterMessage(frames, key);
    expect(decoded?.header).toEqual(message.header);
    expect(decoded?.parentHeader.msg_id).toBe(parent.header.msg_id);
    expect(decoded?.content).toEqual({ name: 'stdout', text: '1\n' });
    expect(decoded?.buffers).toEqual([]);
  });

  it('drops messages with a wrong key, a tampered part, or no delimiter', () => {
    const frames = encodeJupyterMessage(createJupyterMessage(sender, 'status', { execution_state: 'idle' }), key);
    expect(decodeJupyterMessage(frames, 'another-key')).toBeUndefined();
    const tampered = [...frames];
    tampered[5] = Buffer.from(JSON.stringify({ execution_state: 'busy' }));
    expect(decodeJupyterMessage(tampered, key)).toBeUndefined();
    expect(decodeJupyterMessage(frames.slice(1), key)).toBeUndefined();
    expect(decodeJupyterMessage(frames, key)?.content).toEqual({ execution_state: 'idle' });
  });

  it('drops correctly signed frames that are not JSON objects with a header', () => {
    const parts = ['[]', '{}', '{}', '{}'].map((text) => Buffer.from(text));
    const frames = [Buffer.from('<IDS|MSG>'), Buffer.from(signJupyterParts(key, parts)), ...parts];
    expect(decodeJupyterMessage(frames, key)).toBeUndefined();
  });
});
