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
  it('prepends the pending banner as a new first text item, built from that result, leaving the rest unchanged', () => {
    const queue = new BannerQueue();
    queue.queue(upgraded);
    const original = reported(report('rejoined'));
    const delivered = queue.prependTo(original);
    expect(delivered.content).toEqual([
      { type: 'text', text: `[nteract] Daemon upgraded (2.1.2 → 2.1.3), session reconnected to ${target}\n` },
      { type: 'text', text: 'tool output' },
    ]);
    expect(delivered._meta).toEqual(original._meta);
    expect(original).toEqual(reported(report('rejoined')));
    expect(bannerPrefix).toBe('[nteract] ');
  });

  it('delivers a banner only once', () => {
    const queue = new BannerQueue();
    queue.queue(noHandoff);
    expect(queue.prependTo(result('first')).content).toHaveLength(2);
    expect(queue.pending()).toBeUndefined();
    const second = result('second');
    expect(queue.prependTo(second)).toBe(second);
  });

  it('leaves a result alone when nothing is pending', () => {
    const queue = new BannerQueue();
    const plain = result('a', 'b');
    expect(queue.prependTo(plain)).toBe(plain);
    expect(plain.content).toHaveLength(2);
  });

  it('puts the banner on a tool error too, so a failed rejoin is explained on the error it caused', () => {
    const queue = new BannerQueue();
    queue.queue(restarted);
    const failed = reported(report('failed', 'gone'), 'No active notebook session (gone).', true);
    expect(queue.prependTo(failed).content[0]).toEqual({
      type: 'text',
      text: `[nteract] MCP server restarted; the session could not be reconnected to ${target}: gone\n`,
    });
    expect(queue.pending()).toBeUndefined();
  });

  it('follows a delivered pending rejoin up once, when a later report settles it', () => {
    const queue = new BannerQueue();
    queue.queue(restarted);
    expect(queue.prependTo(reported(report('pending'))).content[0]?.text).toContain('still in progress');
    const stillPending = reported(report('pending'));
    expect(queue.prependTo(stillPending)).toBe(stillPending);
    const unreported = result('no report');
    expect(queue.prependTo(unreported)).toBe(unreported);
    expect(queue.prependTo(reported(report('rejoined'))).content[0]).toEqual({
      type: 'text',
      text: `[nteract] Session reconnected to ${target}\n`,
    });
    const later = reported(report('rejoined'));
    expect(queue.prependTo(later)).toBe(later);

    queue.queue(restarted);
    queue.prependTo(reported(report('pending')));
    expect(queue.prependTo(reported(report('failed', 'kernel lost'))).content[0]?.text).toBe(
      `[nteract] The session could not be reconnected to ${target}: kernel lost\n`,
    );
  });

  it('holds exactly one notice: a newer one replaces the older and cancels a pending follow-up', () => {
    const queue = new BannerQueue();
    queue.queue(restarted);
    queue.prependTo(reported(report('pending')));
    queue.queue(noHandoff);
    queue.queue(upgraded);
    expect(queue.prependTo(result('x')).content).toEqual([
      { type: 'text', text: '[nteract] Daemon upgraded (2.1.2 → 2.1.3)\n' },
      { type: 'text', text: 'x' },
    ]);
    const settled = reported(report('rejoined'));
    expect(queue.prependTo(settled)).toBe(settled);
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

  it('adds the banner to a result without content, but not to one whose content is malformed', () => {
    const queue = new BannerQueue();
    queue.queue(noHandoff);
    const odd = { content: 'not a list' };
    expect(queue.prependTo(odd)).toBe(odd);
    expect(queue.pending()).toBe(noHandoff);
    const withoutContent: Record<string, unknown> = { structuredContent: {} };
    expect(queue.prependTo(withoutContent)).toEqual({
      structuredContent: {},
      content: [{ type: 'text', text: '[nteract] MCP server restarted\n' }],
    });
  });
});
