import { performance } from 'node:perf_hooks';
import { Client as NativeClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as NativeStdioTransport } from '@modelcontextprotocol/client/stdio';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  childrenOf,
  isAlive,
  spawnShippedProxy,
  startUserSession,
  type UserSession,
  waitFor,
} from './support/index.js';

// Cells as MCP resources with pushed change notices, through the shipped bins: two MCP clients of
// one user (two nteract-mcp proxies, one HOME, one daemon) on one notebook. Client A subscribes to
// a cell and to the notebook; client B edits the cell; A is told (`notifications/resources/updated`)
// and reads the edit. Then A's child is SIGKILLed: B edits again and A is told again, without
// subscribing again. Once in the legacy era (resources/subscribe), once in the 2026-07-28 era
// (a subscriptions/listen stream).

/** A subclass of the v2 stdio transport: the v2 client then probes the era on this process (no sibling spawn). */
class InPlace extends NativeStdioTransport {}

/** A notice as the client got it, with when (performance.now()). */
interface Notice {
  readonly uri: string;
  readonly subscriptionId: unknown;
  readonly at: number;
}

/** How long each edit took to reach the subscribed client (ms), printed after the run. */
const measured: { readonly era: string; readonly when: string; readonly ms: number }[] = [];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  if (measured.length > 0) {
    process.stderr.write(
      `resources/updated latency (edit sent by B → notice at A): ${measured.map((m) => `${m.era} ${m.when} ${m.ms.toFixed(1)} ms`).join('; ')}\n`,
    );
    measured.splice(0);
  }
});

const cellUri = (notebookId: string, cellId: string) => `nteract://notebook/${notebookId}/cells/${cellId}`;
const notebookUri = (notebookId: string) => `nteract://notebook/${notebookId}`;

/** B sets the cell's source; resolves with when the call was sent. */
async function edit(b: UserSession, cellId: string, source: string): Promise<number> {
  const sent = performance.now();
  const answer = await b.call('set_cell', { cell_id: cellId, source });
  expect(answer.isError, answer.text).toBe(false);
  return sent;
}

/** The first notice for `uri` that came at or after `since`. */
function noticeFor(notices: readonly Notice[], uri: string, since: number): Promise<Notice> {
  return waitFor(`a notices/resources/updated for ${uri}`, () =>
    notices.find((notice) => notice.uri === uri && notice.at >= since),
  );
}

/** A creates a notebook with one cell, B joins it: `{ notebookId, cellId }`. */
async function sharedNotebook(
  owner: UserSession,
  joining: UserSession,
): Promise<{ notebookId: string; cellId: string }> {
  const created = await owner.call('create_notebook', {});
  expect(created.isError, created.text).toBe(false);
  const notebookId = String(created.json?.notebook_id);
  const cell = await owner.call('create_cell', { source: 'x = 1' });
  expect(cell.isError, cell.text).toBe(false);
  const joined = await joining.call('connect_notebook', { notebook_id: notebookId });
  expect(joined.isError, joined.text).toBe(false);
  return { notebookId, cellId: String(cell.json?.cell_id) };
}

describe('cells as MCP resources: change notices pushed to a subscribed client', () => {
  it('legacy era: A is told of B’s edit of a subscribed cell and reads it; after A’s child is SIGKILLed, and after an upgrade handoff (exit 75), told again without subscribing again', {
    timeout: 240_000,
  }, async () => {
    const a = await startUserSession({ faultHooks: true });
    cleanups.push(() => a.stop());
    const b = await startUserSession({ joining: a });
    cleanups.push(() => b.stop());
    const { notebookId, cellId } = await sharedNotebook(a, b);
    const cell = cellUri(notebookId, cellId);
    const notebook = notebookUri(notebookId);

    const notices: Notice[] = [];
    a.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      notices.push({ uri: notification.params.uri, subscriptionId: undefined, at: performance.now() });
    });
    expect(a.client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    await a.client.subscribeResource({ uri: cell });
    await a.client.subscribeResource({ uri: notebook });
    const unknown = cellUri(notebookId, 'no-such-cell');
    await expect(a.client.subscribeResource({ uri: unknown })).rejects.toThrow(`Unknown resource: ${unknown}`);

    const sent = await edit(b, cellId, 'x = 2');
    const told = await noticeFor(notices, cell, sent);
    await noticeFor(notices, notebook, sent);
    measured.push({ era: 'legacy', when: 'live', ms: told.at - sent });
    const read = await a.client.readResource({ uri: cell });
    const [content] = read.contents;
    const json = JSON.parse(String(content && 'text' in content ? content.text : '')) as Record<string, unknown>;
    expect(json).toMatchObject({ id: cellId, cell_type: 'code', source: 'x = 2' });
    expect(String(json.edited_by)).toMatch(/agent:/);

    // A's child dies; the proxy starts another, which rejoins the notebook and is given A's
    // subscriptions: one notice for each (what changed meanwhile is unknown to it), then B's next edit.
    const killedAt = performance.now();
    const killed = await a.faults.killChild();
    await a.pids.waitForChild(killed);
    await noticeFor(notices, cell, killedAt);
    const again = await edit(b, cellId, 'x = 3');
    const toldAgain = await noticeFor(notices, cell, again);
    measured.push({ era: 'legacy', when: 'after SIGKILL', ms: toldAgain.at - again });
    const reread = await a.client.readResource({ uri: cell });
    const [recontent] = reread.contents;
    expect(JSON.parse(String(recontent && 'text' in recontent ? recontent.text : '')).source).toBe('x = 3');

    // The same across an upgrade handoff: the child exits 75 and the proxy starts the next at once.
    const handedOffAt = performance.now();
    const handedOff = await a.faults.childExit75();
    await a.pids.waitForChild(handedOff);
    await noticeFor(notices, cell, handedOffAt);
    const third = await edit(b, cellId, 'x = 4');
    const toldThird = await noticeFor(notices, cell, third);
    measured.push({ era: 'legacy', when: 'after exit 75', ms: toldThird.at - third });
    // A did nothing for it: its two subscriptions (and the refused one) are all it ever sent.
    expect(a.transport.requests().filter((request) => request.method === 'resources/subscribe')).toHaveLength(3);
  });

  it('2026-07-28 era: a listen stream naming the cell gets B’s edit, tagged with its id, also after A’s child is SIGKILLed, without listening again', {
    timeout: 240_000,
  }, async () => {
    // B owns the user's machine; A, the v2 client, is the user's second client there.
    const b = await startUserSession();
    cleanups.push(() => b.stop());
    const { transport, stderr } = spawnShippedProxy(InPlace, { env: b.env, cwd: b.dirs.project });
    const a = new NativeClient(
      { name: 'v2-peer', version: '2.4.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const childOfA = (): number | undefined => {
      const proxy = transport.pid;
      return proxy === null ? undefined : childrenOf(proxy).find((info) => info.cmdline.includes('runt-mcp'))?.pid;
    };
    cleanups.push(async () => {
      const started = [transport.pid, childOfA()].filter((pid): pid is number => typeof pid === 'number');
      await a.close().catch(() => undefined);
      for (const pid of started) {
        await waitFor(`process ${pid} to exit`, () => !isAlive(pid), { timeoutMs: 15_000 }).catch(() => {
          if (isAlive(pid)) process.kill(pid, 'SIGKILL');
        });
      }
    });
    await a.connect(transport).catch((error: unknown) => {
      throw new Error(`the v2 client did not connect: ${(error as Error).message}\n${stderr()}`);
    });
    expect(a.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = (await a.callTool({ name, arguments: args }, { timeout: 180_000 })) as {
        content?: { type: string; text?: string }[];
        isError?: boolean;
      };
      const text = (result.content ?? []).map((item) => item.text ?? '').join('\n');
      expect(result.isError, text).not.toBe(true);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const created = await b.call('create_notebook', {});
    const notebookId = String(created.json?.notebook_id);
    const cellId = String((await b.call('create_cell', { source: 'x = 1' })).json?.cell_id);
    await call('connect_notebook', { notebook_id: notebookId });
    const cell = cellUri(notebookId, cellId);
    const notebook = notebookUri(notebookId);

    const notices: Notice[] = [];
    a.setNotificationHandler('notifications/resources/updated', (notification) => {
      const meta = notification.params._meta as Record<string, unknown> | undefined;
      notices.push({
        uri: notification.params.uri,
        subscriptionId: meta?.['io.modelcontextprotocol/subscriptionId'],
        at: performance.now(),
      });
    });
    const subscription = await a.listen({ resourceSubscriptions: [cell, notebook] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual([cell, notebook]);
    let closed: string | undefined;
    void subscription.closed.then((how) => {
      closed = how;
    });
    const sent = await edit(b, cellId, 'x = 2');
    const told = await noticeFor(notices, cell, sent);
    measured.push({ era: '2026-07-28', when: 'live', ms: told.at - sent });
    await noticeFor(notices, notebook, sent);
    const listenId = told.subscriptionId;
    expect(typeof listenId === 'string' || typeof listenId === 'number').toBe(true);
    const read = await a.readResource({ uri: cell });
    const [content] = read.contents;
    expect(JSON.parse(String(content && 'text' in content ? content.text : '')).source).toBe('x = 2');

    const killedAt = performance.now();
    const killed = await waitFor("A's child", childOfA);
    process.kill(killed, 'SIGKILL');
    await waitFor("A's next child", () => {
      const pid = childOfA();
      return pid !== undefined && pid !== killed ? pid : undefined;
    });
    await noticeFor(notices, cell, killedAt);
    const again = await edit(b, cellId, 'x = 3');
    const toldAgain = await noticeFor(notices, cell, again);
    measured.push({ era: '2026-07-28', when: 'after SIGKILL', ms: toldAgain.at - again });
    // Still the same stream: the client neither listened again nor saw it end.
    expect(toldAgain.subscriptionId).toEqual(listenId);
    expect(closed).toBeUndefined();
    const reread = await a.readResource({ uri: cell });
    const [recontent] = reread.contents;
    expect(JSON.parse(String(recontent && 'text' in recontent ? recontent.text : '')).source).toBe('x = 3');
    await subscription.close();
  });
});
