import { describe, expect, it } from 'vitest';
import type { ChannelCredential } from '../handoff/credential-channel.js';
import { SecretToken } from '../notebook-target/secret-token.js';
import { SessionCredentials } from '../ports/session-credentials.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { KeptCredentials, maxKeptCredentials } from './kept-credentials.js';

describe(KeptCredentials, () => {
  it('is the container’s SessionCredentials, keeping tokens by scope in memory', () => {
    const container = createTestContainer().build();
    const credentials = container.get(SessionCredentials);
    expect(credentials).toBe(container.get(KeptCredentials));
    credentials.keep('http://h:8888/', new SecretToken('t1'));
    expect(credentials.find('http://h:8888/')?.reveal()).toBe('t1');
    expect(credentials.find('http://other/')).toBeUndefined();
  });

  it('adopts what the proxy handed over, then sends only new or changed tokens', () => {
    const kept = new KeptCredentials();
    const sent: ChannelCredential[] = [];
    kept.keep('http://before/', new SecretToken('b'));
    kept.connect([{ scope: 'http://h/', token: 'handed' }], (credential) => sent.push(credential));
    expect(kept.find('http://h/')?.reveal()).toBe('handed');
    kept.keep('http://h/', new SecretToken('handed'));
    kept.keep('http://h/', new SecretToken('newer'));
    kept.keep('http://two/', new SecretToken('t2'));
    expect(sent).toEqual([
      { scope: 'http://h/', token: 'newer' },
      { scope: 'http://two/', token: 't2' },
    ]);
    expect(kept.list()).toEqual([
      { scope: 'http://before/', token: 'b' },
      { scope: 'http://h/', token: 'newer' },
      { scope: 'http://two/', token: 't2' },
    ]);
  });

  it(`keeps at most ${maxKeptCredentials} scopes, forgetting the least recently kept`, () => {
    const kept = new KeptCredentials();
    for (let index = 0; index <= maxKeptCredentials; index++)
      kept.keep(`http://h${index}/`, new SecretToken(`t${index}`));
    expect(kept.size).toBe(maxKeptCredentials);
    expect(kept.find('http://h0/')).toBeUndefined();
    expect(kept.find(`http://h${maxKeptCredentials}/`)?.reveal()).toBe(`t${maxKeptCredentials}`);
  });

  it('never shows a token when printed or serialised', () => {
    const kept = new KeptCredentials();
    kept.keep('http://h/', new SecretToken('s3cret'));
    expect(JSON.stringify({ token: kept.find('http://h/') })).not.toContain('s3cret');
    expect(String(kept.find('http://h/'))).not.toContain('s3cret');
  });
});
