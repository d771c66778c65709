import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession } from './support/index.js';

/**
 * What a lost kernel took with it, on the user path with the local daemon (the shipped proxy in a
 * fresh HOME, nothing pre-started): the kernel is SIGKILLed under the agent; the next answer says
 * which variables and imports are gone, and restore_state runs the cells that made them again.
 * (The same on a JupyterHub with a culled kernel: jupyterhub.test.ts.)
 */

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

describe('restore_state after a lost kernel (local daemon)', () => {
  it('a killed kernel: the next answer names the lost variables and imports; restore_state runs the cells again in order, with progress, and brings x back', {
    timeout: 180_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    expect((await session.call('create_notebook')).isError).toBe(false);
    const define = await session.call('create_cell', {
      source: 'import json\nx = 41 + 1\ndef double(v):\n    return 2 * v',
      and_run: true,
    });
    expect(define.isError, define.text).toBe(false);
    const show = await session.call('create_cell', { source: 'print("x is", x)', and_run: true });
    expect(show.text).toContain('x is 42');

    await session.faults.killKernel();
    const next = await session.call('create_cell', { source: 'print(x)', and_run: true });
    expect(next.isError, next.text).toBe(false);
    expect(next.text).toContain('runs in a new kernel');
    const lost = next.json?.lost_state as Record<string, unknown>;
    expect(lost).toMatchObject({
      variables: ['x'],
      functions: ['double'],
      imports: ['json'],
      cells: [define.json?.cell_id, show.json?.cell_id],
    });
    expect(lost.summary).toContain('variables x; functions double; imports json');

    const progress: Progress[] = [];
    const restored = (await session.client.callTool({ name: 'restore_state', arguments: {} }, CallToolResultSchema, {
      timeout: 120_000,
      onprogress: (value) => progress.push(value),
    })) as { content: { type: string; text?: string }[]; isError?: boolean };
    const text = restored.content.map((item) => item.text ?? '').join('\n');
    expect(restored.isError, text).toBeFalsy();
    const answer = JSON.parse(restored.content[0]?.text ?? '{}') as Record<string, unknown>;
    expect(answer).toMatchObject({ status: 'done', restored: { variables: ['x'], functions: ['double'] } });
    expect((answer.executions as { cell_id: string }[]).map((execution) => execution.cell_id)).toEqual([
      define.json?.cell_id,
      show.json?.cell_id,
    ]);
    expect(text).toContain('x is 42');
    expect(progress.length).toBeGreaterThan(0);
    const back = await session.call('create_cell', { source: 'print(double(x))', and_run: true });
    expect(back.text).toContain('84');
  });
});
