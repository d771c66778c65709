import { afterEach, describe, expect, it } from 'vitest';
import type { FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
  toolError,
} from '../../testing/start-child-server-test-harness.js';
import { describeActivities } from '../awareness/peer-awareness.js';
import { sessionNewsPrefix } from '../awareness/session-news.js';

/** Working beside other peers: versions, stale writes, what others did, through the tools. */
describe('tools beside other peers', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  async function withNotebook(): Promise<FakeNotebookHandle> {
    harness = await startChildServerTestHarness({ daemon: { peers: true } });
    return harness.createNotebook();
  }

  /** The tool's own text (the first item; news follows it). */
  const ownText = (result: { content: unknown }) => (result.content as { text: string }[])[0]?.text ?? '';
  /** The tool's own JSON answer. */
  const ownJson = async (call: Promise<{ content: unknown }>) => JSON.parse(ownText(await call));

  /** The news lines of an answer (what it says beside the tool's own content). */
  const newsOf = (result: { content: unknown }) =>
    (result.content as { type: string; text?: string }[])
      .map((item) => item.text ?? '')
      .filter((text) => text.startsWith(sessionNewsPrefix));

  it('refuses a write against an older version, naming who changed the cell, and changes nothing', async () => {
    const handle = await withNotebook();
    const made = await harness.callJson('create_cell', { source: 'x = 1' });
    const cellId = String(made.cell_id);
    const read = await harness.callJson('get_cell', { cell_id: cellId });
    expect(read.version).toBe(made.version);
    handle.editAsPeer('human:Ada', cellId, 'x = 42');
    for (const [tool, args] of [
      ['set_cell', { source: 'x = 2' }],
      ['delete_cell', {}],
      ['move_cell', {}],
      ['replace_in_cell', { find: 'x', replace: 'y' }],
    ] as const) {
      const answer = await harness.call(tool, { cell_id: cellId, expected_version: read.version as string, ...args });
      expect(answer.isError, tool).toBe(true);
      const refused = ownText(answer);
      expect(refused, tool).toContain('human:Ada edited it');
      expect(refused, tool).toContain('x = 42');
    }
    expect((await harness.callJson('get_cell', { cell_id: cellId })).source).toBe('x = 42');
  });

  it('says when a write replaced an edit made after the session last read the cell', async () => {
    const handle = await withNotebook();
    const cellId = String((await harness.callJson('create_cell', { source: 'a' })).cell_id);
    const mine = await harness.callJson('set_cell', { cell_id: cellId, source: 'b' });
    expect(mine.replaced_change).toBeUndefined();
    handle.editAsPeer('human:Ada', cellId, 'c by Ada');
    const over = await ownJson(harness.call('set_cell', { cell_id: cellId, source: 'd' }));
    expect(over.replaced_change).toMatch(/^This replaced an edit by human:Ada made after you last read the cell/);
    // Once read, writing over it is no surprise.
    handle.editAsPeer('human:Ada', cellId, 'e by Ada');
    await harness.call('get_cell', { cell_id: cellId });
    expect((await ownJson(harness.call('set_cell', { cell_id: cellId, source: 'f' }))).replaced_change).toBeUndefined();
  });

  it('tells, with the next answer, what other peers did since the previous call, and lists it all with get_changes', async () => {
    const handle = await withNotebook();
    const cellId = String((await harness.callJson('create_cell', { source: 'a' })).cell_id);
    expect(newsOf(await harness.call('get_all_cells'))).toEqual([]);
    handle.editAsPeer('human:Ada', cellId, 'a by Ada');
    const next = newsOf(await harness.call('get_all_cells'));
    expect(next).toEqual([`${sessionNewsPrefix}Since your last call, human:Ada edited cell ${cellId}.`]);
    // Told once; the session's own edits are not news.
    await harness.callJson('create_cell', { source: 'mine' });
    expect(newsOf(await harness.call('get_all_cells'))).toEqual([]);
    const all = await harness.callJson('get_changes');
    expect((all.changes as { by: string; kind: string }[]).map(({ by, kind }) => `${by} ${kind}`)).toEqual([
      expect.stringMatching(/agent:.* inserted$/),
      'human:Ada edited',
      expect.stringMatching(/agent:.* inserted$/),
    ]);
    expect((await harness.callJson('get_changes', { since: String(all.cursor) })).changes).toEqual([]);
  });

  it("reads the change log for a note only when another peer changed the notebook: a lone agent's answers ask nothing", async () => {
    const handle = await withNotebook();
    const reads = () => handle.calls.filter((call) => call === 'getChanges').length;
    const first = reads();
    const cellId = String((await harness.callJson('create_cell', { source: 'a' })).cell_id);
    await harness.callJson('set_cell', { cell_id: cellId, source: 'b' });
    await harness.callJson('create_cell', { source: 'c' });
    expect(reads()).toBe(first);
    handle.editAsPeer('human:Ada', cellId, 'b by Ada');
    const next = newsOf(await harness.call('create_cell', { source: 'd' }));
    expect(next).toEqual([`${sessionNewsPrefix}Since your last call, human:Ada edited cell ${cellId}.`]);
    expect(reads()).toBe(first + 1);
    await harness.callJson('create_cell', { source: 'e' });
    expect(reads()).toBe(first + 1);
  });

  it('says undo is not there on a backend without it', async () => {
    await withNotebook();
    expect(await toolError(harness.call('undo'))).toBe(
      'This notebook has no undo (its backend keeps no edit history).',
    );
  });
});

describe(describeActivities, () => {
  it('names at most a few activities, one line per peer, and points to get_changes for the rest', () => {
    const activity = (by: string, kind: 'edited' | 'ran', cellId: string) =>
      ({ documentVersion: 1, at: '', by, kind, cellId, ...(kind === 'ran' ? { status: 'ok' } : {}) }) as const;
    const many = [
      activity('human:Ada', 'edited', 'a'),
      activity('Claude agent:claude:1', 'ran', 'b'),
      ...Array.from({ length: 9 }, (_, index) => activity('human:Ada', 'edited', `c${index}`)),
    ];
    const lines = describeActivities(many, 'r.4');
    expect(lines[0]).toMatch(/^Since your last call, human:Ada edited cell a, edited cell c0, /);
    expect(lines[1]).toBe('Since your last call, Claude agent:claude:1 ran cell b (ok).');
    expect(lines[2]).toBe('… and 3 more changes: get_changes(since="r.4") lists them all.');
  });
});
