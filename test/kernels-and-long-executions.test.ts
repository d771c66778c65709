import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';

/**
 * Any installed Jupyter kernel, and long and cancelled executions, on the user path: the shipped
 * proxy bin in a fresh HOME, nothing pre-started (the child auto-starts runtimed), real kernels
 * (Debian python3-ipykernel and r-cran-irkernel, which `npm test` installs).
 */

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

async function start(): Promise<UserSession> {
  const session = await startUserSession();
  sessions.push(session);
  return session;
}

function outputsText(json: Record<string, unknown> | undefined): string {
  return JSON.stringify(json?.outputs ?? null);
}

/** A tool call with a progress token (every notification is kept) and, optionally, a cancelling signal. */
function callWithProgress(
  session: UserSession,
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): { progress: Progress[]; done: Promise<unknown> } {
  const progress: Progress[] = [];
  const done = session.client.callTool({ name, arguments: args }, CallToolResultSchema, {
    timeout: 300_000,
    onprogress: (value) => progress.push(value),
    ...(signal ? { signal } : {}),
  });
  return { progress, done };
}

describe('any installed Jupyter kernel', () => {
  it('lists the kernels, runs an R notebook (created for ir, or opened with its own kernelspec), and refuses an unknown kernel naming the installed ones', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    const listed = await session.call('list_kernels');
    expect(listed.isError).toBe(false);
    const kernels = listed.json?.kernels as { name: string; language: string; available: boolean }[];
    expect(kernels).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'python3', language: 'python', available: true }),
        expect.objectContaining({ name: 'ir', language: 'R', available: true }),
      ]),
    );

    const created = await session.call('create_notebook', { kernel: 'ir' });
    expect(created.isError).toBe(false);
    expect(created.json).toMatchObject({ kernel: 'ir', readiness: { runtime: 'ready' } });
    const sum = await session.call('create_cell', { source: 'sum(c(1,2,3))', and_run: true, timeout_secs: 120 });
    expect(sum.json).toMatchObject({ status: 'done' });
    // IRkernel's richest form of a number is Markdown (`6`); its plain text is `[1] 6`.
    expect(outputsText(sum.json)).toMatch(/"text":"(\[1\] )?6(\\n)?"/);

    // A notebook file whose kernelspec is R runs in R (it used to run in Python: NameError on `<-`).
    const path = join(session.dirs.project, 'analysis.ipynb');
    writeFileSync(
      path,
      JSON.stringify({
        cells: [],
        metadata: {
          kernelspec: { name: 'ir', display_name: 'R', language: 'R' },
          language_info: { name: 'R' },
        },
        nbformat: 4,
        nbformat_minor: 5,
      }),
    );
    expect((await session.call('connect_notebook', { path })).isError).toBe(false);
    const ran = await waitFor(
      'the R kernel of the opened notebook',
      async () => {
        const outcome = await session.call('create_cell', {
          source: 'x <- c(1,2,3)\nsum(x)',
          and_run: true,
          timeout_secs: 120,
        });
        return outcome.isError ? undefined : outcome;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(ran.json).toMatchObject({ status: 'done' });
    expect(outputsText(ran.json)).toMatch(/"text":"(\[1\] )?6(\\n)?"/);

    // By language: R is the ir kernel, and the result says so.
    const byLanguage = await session.call('create_notebook', { runtime: 'r' });
    expect(byLanguage.json).toMatchObject({ kernel: 'ir', runtime: 'r' });

    const unknown = await session.call('create_notebook', { kernel: 'deno' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain("No Jupyter kernel named 'deno' is installed.");
    expect(unknown.text).toMatch(/Installed kernels: .*ir \(R, R\).*python3 \(/);

    const { tools } = await session.client.listTools();
    const create = tools.find((tool) => tool.name === 'create_notebook');
    expect(JSON.stringify(create)).not.toMatch(/deno/i);
    expect(create?.inputSchema.properties).toHaveProperty('kernel');
  });
});

describe('long and cancelled executions', () => {
  it('sends keep-alive progress, with the elapsed time and the execution id, while a cell is silent for 20 s', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    expect((await session.call('create_notebook')).isError).toBe(false);
    const { progress, done } = callWithProgress(session, 'create_cell', {
      source: 'import time\ntime.sleep(20)\nprint("woke")',
      and_run: true,
      timeout_secs: 120,
    });
    const result = (await done) as { content: { type: string; text: string }[]; isError?: boolean };
    expect(result.isError).toBeFalsy();
    const json = JSON.parse(result.content[0]?.text ?? '{}') as Record<string, unknown>;
    expect(json).toMatchObject({ status: 'done' });
    expect(outputsText(json)).toContain('woke');
    const keepAlives = progress.filter((value) => value.message?.includes('still running'));
    expect(keepAlives.length).toBeGreaterThanOrEqual(3);
    const withId = keepAlives.filter((value) => value.message?.includes(`execution ${String(json.execution_id)}`));
    expect(withId.length).toBeGreaterThanOrEqual(2);
    expect(keepAlives.at(-1)?.message).toMatch(/still running after \d+ s/);
    const values = progress.map((value) => value.progress);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    expect(new Set(values).size).toBe(values.length);
  });

  it('interrupts the kernel when the client cancels the call that started a long cell; the next call is answered at once', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    expect((await session.call('create_notebook')).isError).toBe(false);
    expect((await session.call('create_cell', { source: 'x = 41', and_run: true })).json).toMatchObject({
      status: 'done',
    });
    const controller = new AbortController();
    const { progress, done } = callWithProgress(
      session,
      'create_cell',
      { source: 'import time\ntime.sleep(600)', and_run: true, timeout_secs: 600 },
      controller.signal,
    );
    const cancelled = done.catch((error: unknown) => error);
    // Running, and named: a keep-alive carries the execution id.
    const executionId = await waitFor(
      'a keep-alive naming the execution',
      () => progress.map((value) => /execution ([0-9a-f-]{36})/.exec(value.message ?? '')?.[1]).find(Boolean),
      { timeoutMs: 60_000 },
    );
    controller.abort('the user pressed Esc');
    expect(await cancelled).toBeInstanceOf(Error);

    // The kernel is free again: this 1-line cell finishes well inside its timeout (the sleep had ~10 minutes left).
    const next = await session.call('create_cell', { source: 'print(x + 1)', and_run: true, timeout_secs: 60 });
    expect(next.json).toMatchObject({ status: 'done' });
    expect(outputsText(next.json)).toContain('42');
    const first = await session.call('get_results', { execution_id: executionId });
    expect(first.json).toMatchObject({ status: 'error' });
    expect(outputsText(first.json)).toContain('KeyboardInterrupt');
  });

  it('leaves the execution running when the call just times out (running + get_results)', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    expect((await session.call('create_notebook')).isError).toBe(false);
    const started = await session.call('create_cell', {
      source: 'import time\ntime.sleep(3)\nprint("finished")',
      and_run: true,
      timeout_secs: 0.5,
    });
    expect(started.json).toMatchObject({ status: 'running' });
    const finished = await waitFor(
      'the execution to finish after the timeout',
      async () => {
        const outcome = await session.call('get_results', { execution_id: started.json?.execution_id });
        return outcome.json?.status === 'done' ? outcome : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(outputsText(finished.json)).toContain('finished');
  });
});
