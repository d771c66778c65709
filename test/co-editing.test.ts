import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type ToolOutcome, type UserSession } from './support/index.js';

/**
 * Several agents of one user on one notebook, each through its own shipped `nteract-mcp` (its own
 * proxy and child) on the one daemon the first one started: stale writes refused, change notes,
 * undo, peers visible, and nothing lost or doubled under concurrent mixed edits.
 */
const sessions: UserSession[] = [];
afterEach(async () => {
  // The agents that joined first; the first session's stop ends the daemon and removes the dirs.
  for (const session of sessions.splice(0).reverse()) await session.stop();
});

/** The `[nteract]` lines an answer carries besides the tool's own content. */
const newsOf = (outcome: ToolOutcome): string[] => outcome.texts.filter((text) => text.startsWith('[nteract] '));

/** The `agent:<slug>:<session>` part of the session's own peer label. */
async function labelOf(session: UserSession): Promise<string> {
  return String((await session.call('session_status')).json?.peer_label);
}

async function agentsOn(count: number, file: string): Promise<{ agents: UserSession[]; path: string }> {
  const first = await startUserSession({ clientInfo: { name: 'agent-0', version: '1.0.0' } });
  sessions.push(first);
  const path = join(first.dirs.project, file);
  const opened = await first.call('connect_notebook', { path });
  expect(opened.isError, opened.text).toBe(false);
  const agents = [first];
  for (let index = 1; index < count; index++) {
    const agent = await startUserSession({ joining: first, clientInfo: { name: `agent-${index}`, version: '1.0.0' } });
    sessions.push(agent);
    const joined = await agent.call('connect_notebook', { path });
    expect(joined.isError, joined.text).toBe(false);
    expect(joined.json?.notebook_id).toBe(opened.json?.notebook_id);
    agents.push(agent);
  }
  return { agents, path };
}

describe('agents beside each other on one notebook', () => {
  it('refuses a stale write naming who changed the cell, notes the others’ changes, undoes, and lists the peers', {
    timeout: 180_000,
  }, async () => {
    const {
      agents: [ada, bob],
    } = (await agentsOn(2, 'shared.ipynb')) as { agents: [UserSession, UserSession]; path: string };
    const adaLabel = await labelOf(ada);
    const made = await ada.call('create_cell', { source: 'x = 1' });
    const cellId = String(made.json?.cell_id);
    const read = await bob.call('get_cell', { cell_id: cellId });
    expect(read.json).toMatchObject({ source: 'x = 1', edited_by: adaLabel });
    const version = String(read.json?.version);

    // Ada edits; Bob's write against the version he read is refused, naming Ada, showing her source.
    const edited = await ada.call('set_cell', { cell_id: cellId, source: 'x = 2  # Ada' });
    expect(edited.isError, edited.text).toBe(false);
    const stale = await bob.call('set_cell', { cell_id: cellId, source: 'x = 3  # Bob', expected_version: version });
    expect(stale.isError).toBe(true);
    expect(stale.text).toContain(`${adaLabel} edited it`);
    expect(stale.text).toContain('x = 2  # Ada');
    // That answer (or the next) also tells Bob what Ada did since his previous call.
    const note = [...newsOf(stale), ...newsOf(await bob.call('get_all_cells'))].join('\n');
    expect(note).toContain(`Since your last call, ${adaLabel} edited cell ${cellId}`);
    expect((await ada.call('get_cell', { cell_id: cellId })).json?.source).toBe('x = 2  # Ada');

    // Written without expected_version over Ada's later edit: done, and said.
    const over = await bob.call('set_cell', { cell_id: cellId, source: 'x = 3  # Bob' });
    expect(String(over.json?.replaced_change)).toContain(`This replaced an edit by ${adaLabel}`);
    // Bob takes it back: Ada's source again.
    const undone = await bob.call('undo');
    expect(undone.isError, undone.text).toBe(false);
    expect((await ada.call('get_cell', { cell_id: cellId })).json?.source).toBe('x = 2  # Ada');
    // Ada's edits are hers: Bob has nothing left to undo, and nothing changes.
    const nothing = await bob.call('undo');
    expect(nothing.isError).toBe(true);
    expect((await ada.call('get_cell', { cell_id: cellId })).json?.source).toBe('x = 2  # Ada');

    // The full list since a cursor.
    const changes = await bob.call('get_changes');
    const kinds = ((changes.json?.changes ?? []) as { by: string; kind: string; undo?: boolean }[]).map(
      (change) => `${change.by === adaLabel ? 'ada' : 'bob'} ${change.kind}${change.undo ? ' (undo)' : ''}`,
    );
    expect(kinds).toEqual(['ada inserted', 'ada edited', 'bob edited', 'bob edited (undo)']);

    // The peers, through MCP: both agents, with the cell each was last on.
    const status = await ada.call('session_status');
    const active = (status.json?.active ?? {}) as { peers?: { label: string; cell_id: string | null }[] };
    const peers = active.peers ?? [];
    expect(peers.map((peer) => peer.label).sort()).toEqual([adaLabel, await labelOf(bob)].sort());
    expect(peers.every((peer) => peer.cell_id === cellId)).toBe(true);
    const listed = await bob.call('list_active_notebooks');
    expect(JSON.stringify(listed.json ?? listed.text)).toContain(adaLabel);

    // Bob's child crashes; Ada edits meanwhile: Bob's next answer, from his new child, still says so.
    await bob.call('get_all_cells');
    await bob.faults.killChild();
    const later = await ada.call('create_cell', { source: 'while Bob was away' });
    const back = await bob.call('get_all_cells');
    expect(back.isError, back.text).toBe(false);
    expect(newsOf(back).join('\n')).toContain(
      `Since your last call, ${adaLabel} inserted cell ${String(later.json?.cell_id)}`,
    );
  });

  it('loses and doubles nothing under 4 agents × 100 mixed edits with random expected versions', {
    timeout: 300_000,
  }, async () => {
    const { agents, path } = await agentsOn(4, 'busy.ipynb');
    const labels = await Promise.all(agents.map(labelOf));
    // What each agent was told it did (acknowledged) and what it was refused.
    const created = new Set<string>();
    const deleted = new Set<string>();
    const lastWrite = new Map<string, Map<string, string>>(); // label → cell → last source acknowledged
    const refusedSources = new Set<string>();
    let refusals = 0;
    // mulberry32: a seeded, evenly spread sequence (the run is the same every time).
    let seed = 42;
    const next = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
    };
    await Promise.all(
      agents.map(async (agent, a) => {
        const label = labels[a] as string;
        lastWrite.set(label, new Map());
        // The cells this agent knows, as it last read them (every 10 edits it reads them all again,
        // so the agents work on each other's cells too).
        let known: { id: string; version: string }[] = [];
        for (let op = 0; op < 100; op++) {
          const pick = known.length === 0 ? 0 : next(10);
          if (pick < 3 || known.length === 0) {
            const answer = await agent.call('create_cell', { source: `a${a}-op${op}` });
            expect(answer.isError, answer.text).toBe(false);
            const id = String(answer.json?.cell_id);
            created.add(id);
            lastWrite.get(label)?.set(id, `a${a}-op${op}`);
            known.push({ id, version: String(answer.json?.version) });
            continue;
          }
          const target = known[next(known.length)] as { id: string; version: string };
          // A version this agent saw (maybe stale by now), one that never was, or none.
          const roll = next(3);
          const expected = roll === 0 ? target.version : roll === 1 ? 'no-such-version' : undefined;
          const versioned = expected === undefined ? {} : { expected_version: expected };
          if (pick < 7) {
            const source = `a${a}-op${op}-set`;
            const answer = await agent.call('set_cell', { cell_id: target.id, source, ...versioned });
            if (answer.isError) {
              refusals += 1;
              refusedSources.add(source);
              expect(answer.text).toMatch(/has changed since version|Cell not found|not found/i);
            } else {
              lastWrite.get(label)?.set(target.id, source);
              target.version = String(answer.json?.version);
            }
          } else if (pick < 8) {
            const answer = await agent.call('delete_cell', { cell_id: target.id, ...versioned });
            if (answer.isError) refusals += 1;
            else deleted.add(target.id);
            known.splice(known.indexOf(target), 1);
          } else {
            const after = known[next(known.length)] as { id: string };
            const answer = await agent.call('move_cell', {
              cell_id: target.id,
              ...(after.id === target.id ? {} : { after_cell_id: after.id }),
              ...versioned,
            });
            if (answer.isError) refusals += 1;
          }
          if (op % 10 === 9) {
            const all = await agent.call('get_all_cells', { format: 'json' });
            known = ((all.json?.cells ?? []) as { cell_id: string; version: string }[]).map((cell) => ({
              id: cell.cell_id,
              version: cell.version,
            }));
          }
        }
      }),
    );

    const final = await agents[0]?.call('get_all_cells', { format: 'json' });
    const cells = final?.json?.cells as { cell_id: string; source: string; edited_by?: string }[];
    const ids = cells.map((cell) => cell.cell_id);
    // Every acknowledged insert is there once, unless an acknowledged delete took it.
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...created].filter((id) => !deleted.has(id)).sort());
    // Every cell holds its last editor's last acknowledged write; no refused write is anywhere.
    for (const cell of cells) {
      expect(lastWrite.get(cell.edited_by as string)?.get(cell.cell_id), cell.cell_id).toBe(cell.source);
      expect(refusedSources.has(cell.source)).toBe(false);
    }
    expect(refusals).toBeGreaterThan(0);
    // The file says the same once saved.
    await agents[0]?.call('save_notebook');
    const saved = JSON.parse(readFileSync(path, 'utf8')) as { cells: { id: string; source: string[] }[] };
    expect(saved.cells.map((cell) => [cell.id, cell.source.join('')])).toEqual(
      cells.map((cell) => [cell.cell_id, cell.source]),
    );
    process.stderr.write(
      `co-editing: ${created.size} inserted, ${deleted.size} deleted, ${refusals} refused, ${cells.length} cells at the end\n`,
    );
  });
});
