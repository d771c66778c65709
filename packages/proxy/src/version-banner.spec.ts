import { type SessionReport, sessionReportMetaKey } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import { BannerQueue, bannerPrefix, type RestartNotice, restartBanner, restartHeadline } from './version-banner.js';

const result = (...texts: string[]) => ({ content: texts.map((text) => ({ type: 'text', text })) });

const target = '/home/me/analysis.ipynb';
const restarted: RestartNotice = { previousVersion: '2.1.2', newVersion: '2.1.2', handedOff: target };
const upgraded: RestartNotice = { previousVersion: '2.1.2', newVersion: '2.1.3', handedOff: target };
const noHandoff: RestartNotice = { previousVersion: undefined, newVersion: undefined, handedOff: undefined };

/** A session report whose rejoin of `target` went as `outcome`. */
const report = (outcome: 'rejoined' | 'pending' | 'failed', reason?: string, requested = target): SessionReport => ({
  target,
  notebookId: 'nb-1',
  rejoin: reason === undefined ? { requested, outcome } : { requested, outcome, reason },
});

/** A tool result carrying `session` in its `_meta`. */
const reported = (session: SessionReport, text = 'tool output', isError = false) => ({
  ...result(text),
  ...(isError ? { isError: true } : {}),
  _meta: { [sessionReportMetaKey]: session },
});

describe(restartHeadline, () => {
  it('announces an upgrade only when both versions are known and differ, with the arrow character', () => {
    const text = restartHeadline({ previousVersion: '2.1.2+abc1234', newVersion: '2.1.3+def5678' });
    expect(text).toBe('Daemon upgraded (2.1.2+abc1234 → 2.1.3+def5678)');
    expect(text).toContain('\u2192');
    expect(text).not.toContain('->');
    expect(restartHeadline({ previousVersion: '2.1.2', newVersion: '2.1.2' })).toBe('MCP server restarted');
    expect(restartHeadline({ previousVersion: undefined, newVersion: '2.1.3' })).toBe('MCP server restarted');
    expect(restartHeadline({ previousVersion: '2.1.2', newVersion: undefined })).toBe('MCP server restarted');
  });
});

describe(restartBanner, () => {
  it('says the session reconnected, naming the notebook, only when the report says rejoined', () => {
    expect(restartBanner(restarted, report('rejoined'))).toBe(`MCP server restarted, session reconnected to ${target}`);
    expect(restartBanner(upgraded, report('rejoined'))).toBe(
      `Daemon upgraded (2.1.2 → 2.1.3), session reconnected to ${target}`,
    );
  });

  it('names a bare notebook id as a notebook', () => {
    const id = '7cad5bab-88fc-48c7-8df8-37e4bcba1f43';
    const handedOff: RestartNotice = { ...restarted, handedOff: id };
    expect(restartBanner(handedOff, { target: id, rejoin: { requested: id, outcome: 'rejoined' } })).toBe(
      `MCP server restarted, session reconnected to notebook ${id}`,
    );
  });

  it('says a pending rejoin is still in progress and tells the agent to retry', () => {
    const text = restartBanner(restarted, report('pending'));
    expect(text).toMatch(/^MCP server restarted; the session is not reconnected yet/);
    expect(text).toContain(`rejoining ${target} is still in progress`);
    expect(text).toContain('retry');
    expect(text).not.toContain('session reconnected');
  });

  it('says a failed rejoin could not reconnect and names the reason', () => {
    expect(restartBanner(restarted, report('failed', 'the notebook file was deleted'))).toBe(
      `MCP server restarted; the session could not be reconnected to ${target}: the notebook file was deleted`,
    );
    expect(restartBanner(restarted, report('failed'))).toBe(
      `MCP server restarted; the session could not be reconnected to ${target} (no reason given)`,
    );
  });

  it('says nothing about the session without a report, without a handoff, or for another target', () => {
    expect(restartBanner(restarted, undefined)).toBe('MCP server restarted');
    expect(restartBanner(upgraded, undefined)).toBe('Daemon upgraded (2.1.2 → 2.1.3)');
    expect(restartBanner(restarted, { target })).toBe('MCP server restarted');
    expect(restartBanner(noHandoff, report('rejoined'))).toBe('MCP server restarted');
    expect(restartBanner(restarted, report('rejoined', undefined, '/elsewhere.ipynb'))).toBe('MCP server restarted');
  });
});

describe(BannerQueue, () => {
  it('appends the pending banner as a new last text item, built from that result, leaving the rest unchanged', () => {
    const queue = new BannerQueue();
    queue.queue(upgraded);
    const original = reported(report('rejoined'));
    const delivered = queue.appendTo(original);
    expect(delivered.content).toEqual([
      { type: 'text', text: 'tool output' },
      { type: 'text', text: `[nteract] Daemon upgraded (2.1.2 → 2.1.3), session reconnected to ${target}\n` },
    ]);
    expect(delivered._meta).toEqual(original._meta);
    expect(original).toEqual(reported(report('rejoined')));
    expect(bannerPrefix).toBe('[nteract] ');
  });

  it("keeps a third-party result's shape: content[0], every item, structuredContent and isError stay as the child sent them", () => {
    const queue = new BannerQueue();
    queue.queue(noHandoff);
    const json = { type: 'text', text: '{"sum":3}' };
    const image = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' };
    const original = { content: [json, image], structuredContent: { sum: 3 }, isError: false };
    const delivered = queue.appendTo(original);
    expect(delivered.content[0]).toBe(json);
    expect(delivered.content.slice(0, 2)).toEqual([json, image]);
    expect(delivered.content[2]).toEqual({ type: 'text', text: '[nteract] MCP server restarted\n' });
    expect(delivered.structuredContent).toBe(original.structuredContent);
    expect(delivered.isError).toBe(false);
    expect(Object.keys(delivered).sort()).toEqual(['content', 'isError', 'structuredContent']);
  });

  it('delivers a banner only once', () => {
    const queue = new BannerQueue();
    queue.queue(noHandoff);
    expect(queue.appendTo(result('first')).content).toHaveLength(2);
    expect(queue.pending()).toBeUndefined();
    const second = result('second');
    expect(queue.appendTo(second)).toBe(second);
  });

  it('leaves a result alone when nothing is pending', () => {
    const queue = new BannerQueue();
    const plain = result('a', 'b');
    expect(queue.appendTo(plain)).toBe(plain);
    expect(plain.content).toHaveLength(2);
  });

  it('puts the banner on a tool error too, so a failed rejoin is explained on the error it caused', () => {
    const queue = new BannerQueue();
    queue.queue(restarted);
    const failed = reported(report('failed', 'gone'), 'No active notebook session (gone).', true);
    const delivered = queue.appendTo(failed);
    expect(delivered.isError).toBe(true);
    expect(delivered.content).toEqual([
      { type: 'text', text: 'No active notebook session (gone).' },
      {
        type: 'text',
        text: `[nteract] MCP server restarted; the session could not be reconnected to ${target}: gone\n`,
      },
    ]);
    expect(queue.pending()).toBeUndefined();
  });

  it('follows a delivered pending rejoin up once, when a later report settles it', () => {
    const queue = new BannerQueue();
    queue.queue(restarted);
    expect(queue.appendTo(reported(report('pending'))).content.at(-1)?.text).toContain('still in progress');
    const stillPending = reported(report('pending'));
    expect(queue.appendTo(stillPending)).toBe(stillPending);
    const unreported = result('no report');
    expect(queue.appendTo(unreported)).toBe(unreported);
    expect(queue.appendTo(reported(report('rejoined'))).content).toEqual([
      { type: 'text', text: 'tool output' },
      { type: 'text', text: `[nteract] Session reconnected to ${target}\n` },
    ]);
    const later = reported(report('rejoined'));
    expect(queue.appendTo(later)).toBe(later);

    queue.queue(restarted);
    queue.appendTo(reported(report('pending')));
    expect(queue.appendTo(reported(report('failed', 'kernel lost'))).content.at(-1)?.text).toBe(
      `[nteract] The session could not be reconnected to ${target}: kernel lost\n`,
    );
  });

  it('holds exactly one notice: a newer one replaces the older and cancels a pending follow-up', () => {
    const queue = new BannerQueue();
    queue.queue(restarted);
    queue.appendTo(reported(report('pending')));
    queue.queue(noHandoff);
    queue.queue(upgraded);
    expect(queue.appendTo(result('x')).content).toEqual([
      { type: 'text', text: 'x' },
      { type: 'text', text: '[nteract] Daemon upgraded (2.1.2 → 2.1.3)\n' },
    ]);
    const settled = reported(report('rejoined'));
    expect(queue.appendTo(settled)).toBe(settled);
  });

  it('can be taken directly for a given report (the reconnect answer), which consumes it; clear drops it', () => {
    const queue = new BannerQueue();
    queue.queue(restarted);
    expect(queue.take(report('rejoined'))).toBe(`MCP server restarted, session reconnected to ${target}`);
    expect(queue.take(undefined)).toBeUndefined();
    queue.queue(restarted);
    queue.clear();
    expect(queue.pending()).toBeUndefined();
  });

  it('passes on a result with no content item (structuredContent only) or malformed content as it is, and keeps the notice for the next', () => {
    const queue = new BannerQueue();
    queue.queue(noHandoff);
    const odd = { content: 'not a list' };
    expect(queue.appendTo(odd)).toBe(odd);
    const structuredOnly: Record<string, unknown> = { structuredContent: { sum: 3 } };
    expect(queue.appendTo(structuredOnly)).toBe(structuredOnly);
    const empty = { content: [], structuredContent: { sum: 3 } };
    expect(queue.appendTo(empty)).toBe(empty);
    expect(queue.pending()).toBe(noHandoff);
    expect(queue.appendTo(result('next')).content).toEqual([
      { type: 'text', text: 'next' },
      { type: 'text', text: '[nteract] MCP server restarted\n' },
    ]);
  });
});
