import { describe, expect, it } from 'vitest';
import { BannerQueue, bannerPrefix, daemonVersionFromTitle, restartBanner } from './version-banner.js';

const result = (...texts: string[]) => ({ content: texts.map((text) => ({ type: 'text', text })) });

describe(daemonVersionFromTitle, () => {
  it.each([
    ['nteract (daemon 2.3.2)', '2.3.2'],
    ['nteract (daemon 2.3.2+abc1234)', '2.3.2+abc1234'],
    ['nteract (daemon  2.3.2 )', '2.3.2'],
    ['nteract (daemon 2.3.2 (nightly))', '2.3.2 (nightly)'],
    ['nteract', undefined],
    ['nteract (daemon )', undefined],
    ['nteract (daemon 2.3.2', undefined],
    ['', undefined],
  ])('reads %j as %j', (title, version) => {
    expect(daemonVersionFromTitle(title)).toBe(version);
  });

  it('has no version without a title', () => {
    expect(daemonVersionFromTitle(undefined)).toBeUndefined();
    expect(daemonVersionFromTitle(null)).toBeUndefined();
  });
});

describe(restartBanner, () => {
  it('announces an upgrade, with and without a handed-off session', () => {
    expect(restartBanner({ previousVersion: '2.1.2', newVersion: '2.1.3', handedOff: true })).toBe(
      'Daemon upgraded (2.1.2 → 2.1.3), session reconnected',
    );
    expect(restartBanner({ previousVersion: '2.1.2', newVersion: '2.1.3', handedOff: false })).toBe(
      'Daemon upgraded (2.1.2 → 2.1.3)',
    );
  });

  it('keeps build metadata and uses the arrow character, never ->', () => {
    const text = restartBanner({ previousVersion: '2.1.2+abc1234', newVersion: '2.1.3+def5678', handedOff: false });
    expect(text).toBe('Daemon upgraded (2.1.2+abc1234 → 2.1.3+def5678)');
    expect(text).toContain('\u2192');
    expect(text).not.toContain('->');
  });

  it('says the server restarted when the version is unchanged or unknown', () => {
    expect(restartBanner({ previousVersion: '2.1.2', newVersion: '2.1.2', handedOff: true })).toBe(
      'MCP server restarted, session reconnected',
    );
    expect(restartBanner({ previousVersion: undefined, newVersion: '2.1.3', handedOff: false })).toBe(
      'MCP server restarted',
    );
    expect(restartBanner({ previousVersion: '2.1.2', newVersion: undefined, handedOff: false })).toBe(
      'MCP server restarted',
    );
  });
});

describe(BannerQueue, () => {
  it('prepends the pending banner as a new first text item, leaving the rest unchanged', () => {
    const queue = new BannerQueue();
    queue.queue('Daemon upgraded (2.1.2 → 2.1.3)');
    const original = result('tool output');
    const delivered = queue.prependTo(original);
    expect(delivered.content).toEqual([
      { type: 'text', text: '[nteract] Daemon upgraded (2.1.2 → 2.1.3)\n' },
      { type: 'text', text: 'tool output' },
    ]);
    expect(original).toEqual(result('tool output'));
    expect(bannerPrefix).toBe('[nteract] ');
  });

  it('delivers a banner only once', () => {
    const queue = new BannerQueue();
    queue.queue('MCP server restarted');
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

  it('keeps the banner queued past an error result, for the next successful one', () => {
    const queue = new BannerQueue();
    queue.queue('MCP server restarted, session reconnected');
    const failed = { ...result('Failed to open notebook'), isError: true };
    expect(queue.prependTo(failed)).toBe(failed);
    expect(queue.pending()).toBe('MCP server restarted, session reconnected');
    expect(queue.prependTo({ ...result('ok'), isError: false }).content[0]).toEqual({
      type: 'text',
      text: '[nteract] MCP server restarted, session reconnected\n',
    });
  });

  it('holds exactly one banner: a newer one replaces the older', () => {
    const queue = new BannerQueue();
    queue.queue('MCP server restarted');
    queue.queue('Daemon upgraded (1 → 2)');
    expect(queue.prependTo(result('x')).content).toEqual([
      { type: 'text', text: '[nteract] Daemon upgraded (1 → 2)\n' },
      { type: 'text', text: 'x' },
    ]);
  });

  it('can be taken directly (for the reconnect answer), which consumes it', () => {
    const queue = new BannerQueue();
    queue.queue('MCP server restarted');
    expect(queue.take()).toBe('MCP server restarted');
    expect(queue.take()).toBeUndefined();
    queue.queue('');
    expect(queue.pending()).toBeUndefined();
  });

  it('adds the banner to a result without content, but not to one whose content is malformed', () => {
    const queue = new BannerQueue();
    queue.queue('MCP server restarted');
    const odd = { content: 'not a list' };
    expect(queue.prependTo(odd)).toBe(odd);
    const withoutContent: Record<string, unknown> = { structuredContent: {} };
    expect(queue.prependTo(withoutContent)).toEqual({
      structuredContent: {},
      content: [{ type: 'text', text: '[nteract] MCP server restarted\n' }],
    });
  });
});
