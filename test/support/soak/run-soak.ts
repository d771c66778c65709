import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultRestartPolicySettings } from '@nteract-mcp/proxy';
import type { ToolOutcome, UserSession } from '../index.js';

/** The proxy's crash budget (crash restarts in a sliding window before the breaker opens). */
const { crashBudget, crashWindowMs } = defaultRestartPolicySettings;

/**
 * A soak through the real proxy, child, daemon and kernel: `calls` mixed tool calls (create_cell,
 * set_cell, get_cell, get_all_cells, execute_cell of cheap code, move_cell, delete_cell) on one
 * notebook, with the child SIGKILLed every `killEvery` calls (its pid from `session_status`,
 * `proxy.child_pid`) and the next call sent at once.
 *
 * It keeps a model of the notebook built only from acknowledged answers and checks it against the
 * notebook (get_all_cells) at every kill and at the end:
 * - doubled: a cell the model does not explain (a create applied twice), or an execution token
 *   written twice to the counter file that executed code appends to;
 * - lost: an acknowledged create, edit, move or delete missing from the notebook, or an
 *   acknowledged execution whose token is not in the counter file;
 * - hung: a call without an answer within `callTimeoutMs`;
 * - answered: every call that got an answer (errors included; they are counted apart).
 * A call whose answer says the outcome is unknown (or that failed) may have taken effect once: its
 * effect is accepted when found once and counted as doubled when found twice.
 */
export interface SoakOptions {
  readonly session: UserSession;
  readonly calls: number;
  readonly seed: number;
  /** [min, max] calls between two kills of the child. */
  readonly killEvery: readonly [number, number];
  readonly callTimeoutMs: number;
  readonly log?: (line: string) => void;
}

export interface SoakCounts {
  calls: number;
  answered: number;
  errors: number;
  doubled: number;
  lost: number;
  hung: number;
  kills: number;
  executions: number;
  checks: number;
}

export interface SoakResult {
  readonly counts: SoakCounts;
  readonly problems: readonly string[];
  readonly errorSamples: readonly string[];
  readonly elapsedMs: number;
  readonly summary: string;
}

interface ModelCell {
  readonly id: string;
  source: string;
}

/** A small deterministic PRNG (mulberry32), so a soak can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Settled = { readonly ok: true; readonly outcome: ToolOutcome } | { readonly ok: false; readonly error: Error };

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const { session } = options;
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const rand = random(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const counts: SoakCounts = {
    calls: 0,
    answered: 0,
    errors: 0,
    doubled: 0,
    lost: 0,
    hung: 0,
    kills: 0,
    executions: 0,
    checks: 0,
  };
  const problems: string[] = [];
  const errorSamples: string[] = [];
  const problem = (kind: 'doubled' | 'lost' | 'hung', detail: string): void => {
    counts[kind] += 1;
    if (problems.length < 50) problems.push(`${kind}: ${detail}`);
  };
  const counterFile = join(session.dirs.project, 'executions.log');
  const model: ModelCell[] = [];
  /** Sources of creates whose outcome is unknown: each may be in the notebook at most once. */
  const maybeCreated = new Set<string>();
  /** Cells whose last edit, move or delete has an unknown outcome: their state is read back. */
  const uncertain = new Set<string>();
  let orderUncertain = false;
  const executedTokens = new Set<string>();
  const maybeExecutedTokens = new Set<string>();
  let sequence = 0;
  /** The child answered that it has no notebook: the session lost it (every acknowledged edit with it). */
  let sessionLost = false;
  let notebookId: string | undefined;

  const call = async (name: string, args: Record<string, unknown>): Promise<Settled> => {
    counts.calls += 1;
    const settled = await session.send(name, args);
    if (!settled.ok && /timed? ?out/i.test(settled.error.message)) {
      problem('hung', `${name} ${JSON.stringify(args).slice(0, 120)}: ${settled.error.message}`);
      return settled;
    }
    counts.answered += 1;
    const failed = !settled.ok || settled.outcome.isError;
    if (failed) {
      counts.errors += 1;
      const text = settled.ok ? settled.outcome.text : settled.error.message;
      if (/No active notebook session/.test(text)) sessionLost = true;
      if (errorSamples.length < 20) errorSamples.push(`${name}: ${text.slice(0, 300)}`);
    }
    return settled;
  };
  const acked = (settled: Settled): ToolOutcome | undefined =>
    settled.ok && !settled.outcome.isError ? settled.outcome : undefined;

  const executionSource = (token: string): string =>
    `with open(${JSON.stringify(counterFile)}, 'a') as log:\n    log.write(${JSON.stringify(`${token}\n`)})`;

  const operations = {
    create: async (): Promise<void> => {
      const source = `soak_${options.seed}_${++sequence} = ${sequence}`;
      const index = model.length > 0 && rand() < 0.2 ? Math.floor(rand() * model.length) : undefined;
      const settled = await call('create_cell', { source, ...(index === undefined ? {} : { index }) });
      const outcome = acked(settled);
      const id = outcome?.json?.cell_id;
      if (typeof id === 'string') {
        if (index === undefined) model.push({ id, source });
        else model.splice(index, 0, { id, source });
      } else {
        maybeCreated.add(source);
        orderUncertain = true;
      }
    },
    createAndRun: async (): Promise<void> => {
      const token = `t${options.seed}_${++sequence}`;
      const source = executionSource(token);
      const settled = await call('create_cell', { source, and_run: true, timeout_secs: 60 });
      const outcome = acked(settled);
      const id = outcome?.json?.cell_id;
      if (typeof id === 'string') {
        model.push({ id, source });
        executedTokens.add(token);
        counts.executions += 1;
      } else {
        maybeCreated.add(source);
        maybeExecutedTokens.add(token);
        orderUncertain = true;
      }
    },
    set: async (): Promise<void> => {
      const cell = pick(model);
      const source = `soak_${options.seed}_${++sequence} = 'edited'`;
      const settled = await call('set_cell', { cell_id: cell.id, source });
      if (acked(settled)) {
        cell.source = source;
        uncertain.delete(cell.id);
      } else uncertain.add(cell.id);
    },
    runExisting: async (): Promise<void> => {
      const cell = pick(model);
      const token = `t${options.seed}_${++sequence}`;
      const source = executionSource(token);
      const set = await call('set_cell', { cell_id: cell.id, source });
      if (!acked(set)) {
        uncertain.add(cell.id);
        return;
      }
      cell.source = source;
      uncertain.delete(cell.id);
      const run = await call('execute_cell', { cell_id: cell.id, timeout_secs: 60 });
      if (acked(run)) {
        executedTokens.add(token);
        counts.executions += 1;
      } else maybeExecutedTokens.add(token);
    },
    get: async (): Promise<void> => {
      const cell = pick(model);
      const outcome = acked(await call('get_cell', { cell_id: cell.id }));
      const source = outcome?.json?.source;
      if (outcome && typeof source === 'string' && source !== cell.source && !uncertain.has(cell.id))
        problem(
          'lost',
          `get_cell ${cell.id}: source ${JSON.stringify(source)}, acknowledged ${JSON.stringify(cell.source)}`,
        );
    },
    getAll: async (): Promise<void> => {
      await check('get_all_cells');
    },
    move: async (): Promise<void> => {
      const cell = pick(model);
      const others = model.filter((other) => other !== cell);
      const after = others.length > 0 && rand() < 0.8 ? pick(others) : undefined;
      const settled = await call('move_cell', { cell_id: cell.id, ...(after ? { after_cell_id: after.id } : {}) });
      if (acked(settled)) {
        model.splice(model.indexOf(cell), 1);
        model.splice(after ? model.indexOf(after) + 1 : 0, 0, cell);
      } else orderUncertain = true;
    },
    delete: async (): Promise<void> => {
      const cell = pick(model);
      const settled = await call('delete_cell', { cell_id: cell.id });
      if (acked(settled)) {
        model.splice(model.indexOf(cell), 1);
        uncertain.delete(cell.id);
      } else uncertain.add(cell.id);
    },
  };

  /** Compares the notebook with the model; then takes what the model cannot know from the notebook. */
  const check = async (why: string): Promise<void> => {
    // Every cell at once (a count: up to the limit of one tool result; without one, about 48 KiB).
    const outcome = acked(
      await call('get_all_cells', { format: 'json', include_outputs: false, count: Number.MAX_SAFE_INTEGER }),
    );
    const cells = outcome?.json?.cells as { cell_id: string; source: string }[] | undefined;
    if (!cells) return;
    counts.checks += 1;
    const byId = new Map(cells.map((cell) => [cell.cell_id, cell]));
    const known = new Set(model.map((cell) => cell.id));
    for (const cell of model) {
      const found = byId.get(cell.id);
      if (uncertain.has(cell.id)) continue;
      if (!found) problem('lost', `${why}: acknowledged cell ${cell.id} (${JSON.stringify(cell.source)}) is missing`);
      else if (found.source !== cell.source)
        problem(
          'lost',
          `${why}: cell ${cell.id} has ${JSON.stringify(found.source)}, acknowledged ${JSON.stringify(cell.source)}`,
        );
    }
    const sources = new Map<string, number>();
    for (const cell of cells) sources.set(cell.source, (sources.get(cell.source) ?? 0) + 1);
    for (const [source, n] of sources)
      if (n > 1) problem('doubled', `${why}: ${n} cells with source ${JSON.stringify(source)}`);
    for (const cell of cells) {
      if (known.has(cell.cell_id) || uncertain.has(cell.cell_id)) continue;
      if (!maybeCreated.has(cell.source))
        problem('doubled', `${why}: cell ${cell.cell_id} (${JSON.stringify(cell.source)}) was never acknowledged`);
    }
    const modelOrder = model.filter((cell) => byId.has(cell.id)).map((cell) => cell.id);
    const notebookOrder = cells.map((cell) => cell.cell_id).filter((id) => known.has(id));
    if (!orderUncertain && uncertain.size === 0 && modelOrder.join() !== notebookOrder.join())
      problem('lost', `${why}: cell order differs from the acknowledged moves`);
    // Take the notebook as the truth from here on (what was unknown is now known).
    model.splice(0, model.length, ...cells.map((cell) => ({ id: cell.cell_id, source: cell.source })));
    for (const cell of cells) maybeCreated.delete(cell.source);
    uncertain.clear();
    orderUncertain = false;
  };

  const killChild = async (): Promise<void> => {
    const pid = await session.pids.childFromStatus();
    counts.calls += 1;
    counts.answered += 1;
    if (pid === undefined) throw new Error('session_status reported no child pid');
    process.kill(pid, 'SIGKILL');
    counts.kills += 1;
  };

  const created = acked(await call('create_notebook', {}));
  if (!created) throw new Error('create_notebook failed');
  notebookId = String(created.json?.notebook_id);
  /** A user told "No active notebook session" reconnects; the loss itself counts as lost. */
  const recover = async (): Promise<void> => {
    sessionLost = false;
    problem('lost', `after kill ${counts.kills}: the session lost its notebook ("No active notebook session")`);
    const back = acked(await call('connect_notebook', { notebook_id: notebookId }));
    if (!back) throw new Error('connect_notebook could not bring the notebook back');
    // What this call saw fail may or may not have happened: read the notebook back.
    orderUncertain = true;
    for (const cell of model) uncertain.add(cell.id);
  };
  const [lo, hi] = options.killEvery;
  let nextKill = lo + Math.floor(rand() * (hi - lo + 1));
  let nextProgress = 500;
  /** When the last kills happened: a kill is due only while the proxy's crash budget has room. */
  const killTimes: number[] = [];
  const budgetAllowsKill = (): boolean => {
    const now = Date.now();
    while (killTimes.length > 0 && now - (killTimes[0] as number) > crashWindowMs) killTimes.shift();
    return killTimes.length < crashBudget - 1;
  };
  while (counts.calls < options.calls) {
    if (sessionLost) await recover();
    // Kills follow the call count; on a fast machine they also wait (calls keep going) until the
    // sliding crash window has room, so the soak tests recovery, not the breaker.
    if (counts.calls >= nextKill && budgetAllowsKill()) {
      await check(`before kill ${counts.kills + 1}`);
      await killChild();
      killTimes.push(Date.now());
      nextKill = counts.calls + lo + Math.floor(rand() * (hi - lo + 1));
    }
    const few = model.length < 3;
    const many = model.length > 30;
    const roll = rand();
    if (few || roll < (many ? 0.05 : 0.2)) await operations.create();
    else if (roll < 0.3) await operations.createAndRun();
    else if (roll < 0.42) await operations.set();
    else if (roll < 0.5) await operations.runExisting();
    else if (roll < 0.64) await operations.get();
    else if (roll < 0.72) await operations.getAll();
    else if (roll < 0.84) await operations.move();
    else await operations.delete();
    if (counts.calls >= nextProgress) {
      log(`[soak] ${counts.calls} calls, ${counts.kills} kills, ${counts.executions} executions`);
      nextProgress += 500;
    }
  }
  if (sessionLost) await recover();
  await check('final');

  // The counter file: each acknowledged execution's token exactly once, each unknown one at most once.
  const tokens = (): Map<string, number> => {
    const found = new Map<string, number>();
    if (!existsSync(counterFile)) return found;
    for (const line of readFileSync(counterFile, 'utf8').split('\n').filter(Boolean))
      found.set(line, (found.get(line) ?? 0) + 1);
    return found;
  };
  const deadline = Date.now() + 60_000;
  let written = tokens();
  while ([...executedTokens].some((token) => !written.has(token)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    written = tokens();
  }
  for (const token of executedTokens) {
    const n = written.get(token) ?? 0;
    if (n === 0) problem('lost', `acknowledged execution ${token} never ran`);
    if (n > 1) problem('doubled', `execution ${token} ran ${n} times`);
  }
  for (const token of maybeExecutedTokens)
    if ((written.get(token) ?? 0) > 1)
      problem('doubled', `execution ${token} (outcome unknown) ran ${written.get(token)} times`);
  for (const token of written.keys())
    if (!executedTokens.has(token) && !maybeExecutedTokens.has(token))
      problem('doubled', `unexpected execution ${token}`);

  const elapsedMs = Date.now() - started;
  const summary =
    `[soak] seed ${options.seed}: ${counts.calls} calls, ${counts.kills} child kills, ${counts.executions} executions, ` +
    `${counts.checks} notebook checks in ${(elapsedMs / 1000).toFixed(1)} s ` +
    `(${(counts.calls / (elapsedMs / 1000)).toFixed(1)} calls/s): answered ${counts.answered} ` +
    `(${counts.errors} of them errors), doubled ${counts.doubled}, lost ${counts.lost}, hung ${counts.hung}`;
  log(summary);
  return { counts, problems, errorSamples, elapsedMs, summary };
}
