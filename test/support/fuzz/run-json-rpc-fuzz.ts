import fc from 'fast-check';
import { classifyJsonRpcLines, previewOf } from './classify-json-rpc-lines.js';
import { FuzzViolations } from './fuzz-violations.js';
import { type JsonRpcFuzzBatch, jsonRpcFuzzBatch, materializeBatch } from './json-rpc-fuzz-batch.js';
import { type JsonRpcLedgerCounts, type JsonRpcReply, JsonRpcReplyLedger } from './json-rpc-reply-ledger.js';
import { JsonRpcStdioTarget, type JsonRpcStdioTargetOptions } from './json-rpc-stdio-target.js';

export interface JsonRpcFuzzOptions {
  readonly label: string;
  readonly target: Omit<JsonRpcStdioTargetOptions, 'onReply' | 'onGarbage'>;
  /** How many input lines to send, roughly (batches average ~4.5 lines). */
  readonly inputs: number;
  readonly seed: number;
  /** The server's cap on one line, when it has one. */
  readonly maxLineBytes?: number;
  /** A proxy: its child must not die on its own (`child exited` in its log). */
  readonly watchChild?: boolean;
  /** Per driver request (sentinel ping, final checks). */
  readonly answerTimeoutMs?: number;
  /** After the last batch, how long requests still unanswered may take. */
  readonly drainTimeoutMs?: number;
  /** How long fast-check may spend shrinking a crash or hang. */
  readonly shrinkBudgetMs?: number;
  /**
   * Record a crash or hang, restart the process and go on (no shrinking): for long runs, so one
   * known crash does not end the exploration. Default: stop and shrink.
   */
  readonly continueAfterCrash?: boolean;
  readonly log?: (line: string) => void;
}

export interface JsonRpcFuzzResult {
  readonly counts: JsonRpcLedgerCounts;
  readonly violations: FuzzViolations;
  /** fast-check's report of a crash or hang (with the shrunk batch), when one happened. */
  readonly failure: string | undefined;
  readonly restarts: number;
  readonly elapsedMs: number;
  readonly summary: string;
}

/** Mean number of lines in a generated batch, to turn an input count into fast-check runs. */
const meanLinesPerBatch = 4.5;

/** The batch as line previews, for a report. */
function describeBatch(batch: JsonRpcFuzzBatch): string {
  const { bytes, writes } = materializeBatch(batch, { base: 1, known: { cell: [], execution: [], notebook: [] } });
  const lines = classifyJsonRpcLines(bytes).map((line) => `  [${line.cls}] ${line.preview}`);
  return [`${writes.length} write(s):`, ...lines].join('\n');
}

/**
 * Fuzzes one JSON-RPC stdio server with fast-check. Each run sends one batch (mutated seed
 * messages, random JSON, text and bytes, split at random points), then a `ping` of the driver as a
 * sentinel. A run fails — and fast-check shrinks it — when the process dies, its proxy's child
 * dies, stdout carries something that is not JSON-RPC, or the sentinel is not answered (hang).
 * Every other broken promise (a request without exactly one reply, a reply to a notification, an
 * internal error or a raw dump for a bad input) is collected across the whole run, with the lines
 * that caused it. At the end: unanswered requests get `drainTimeoutMs` to be answered, then a
 * normal `tools/list` and a `session_status` call must still work.
 */
export async function runJsonRpcFuzz(options: JsonRpcFuzzOptions): Promise<JsonRpcFuzzResult> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const answerTimeoutMs = options.answerTimeoutMs ?? 60_000;
  const violations = new FuzzViolations();
  const ledger = new JsonRpcReplyLedger(violations);
  // While fast-check shrinks a failure, inputs are tried again: they go to a scratch ledger.
  let scratch: JsonRpcReplyLedger | undefined;
  const current = (): JsonRpcReplyLedger => scratch ?? ledger;
  const onReply = (reply: JsonRpcReply): void => (ledger.knows(reply.id) ? ledger : current()).reply(reply);
  const onGarbage = (line: string): void => {
    garbage.push(line);
  };
  let garbage: string[] = [];
  const spawnTarget = (): Promise<JsonRpcStdioTarget> =>
    JsonRpcStdioTarget.start({ ...options.target, onReply, onGarbage }, answerTimeoutMs);

  let target = await spawnTarget();
  let restarts = 0;
  let base = 0;
  let failedAt: number | undefined;
  const shrinkBudgetMs = options.shrinkBudgetMs ?? 60_000;

  const property = fc.asyncProperty(jsonRpcFuzzBatch, async (batch) => {
    if (failedAt !== undefined && Date.now() - failedAt > shrinkBudgetMs) return true;
    if (target.exit) {
      ledger.abandonOutstanding();
      restarts += 1;
      target = await spawnTarget();
    }
    base += 1;
    const { bytes, writes } = materializeBatch(batch, { base, known: target.known });
    const lines = classifyJsonRpcLines(bytes, options.maxLineBytes);
    const book = current();
    book.open(base, lines);
    const childExitsBefore = target.childExits;
    garbage = [];
    await target.write(writes);
    let hang: string | undefined;
    try {
      await target.request('ping', undefined, answerTimeoutMs);
    } catch (error) {
      hang = (error as Error).message;
    }
    book.close();
    const previews = lines.map((line) => line.preview);
    const problem = target.exit
      ? `the process died (${target.exit.code ?? target.exit.signal})\n${target.stderrTail()}`
      : hang !== undefined
        ? `no answer to the sentinel ping: ${hang}`
        : options.watchChild && target.childExits > childExitsBefore
          ? `the proxy's child died\n${target.stderrTail()}`
          : garbage.length > 0
            ? `stdout carried lines that are not JSON-RPC: ${garbage.map((line) => previewOf(line, 200)).join(' | ')}`
            : undefined;
    if (problem === undefined) return true;
    if (!scratch) violations.add(problem.split('\n')[0] as string, problem, previews);
    if (hang !== undefined && !target.exit) await target.kill();
    if (options.continueAfterCrash) return true;
    if (failedAt === undefined) {
      failedAt = Date.now();
      scratch = new JsonRpcReplyLedger(new FuzzViolations());
      log(`[fuzz ${options.label}] ${problem.split('\n')[0]}; shrinking`);
    }
    throw new Error(problem);
  });

  const numRuns = Math.max(1, Math.ceil(options.inputs / meanLinesPerBatch));
  const details = await fc.check(property, { numRuns, seed: options.seed, includeErrorInReport: true });
  let failure: string | undefined;
  if (details.failed) {
    const counterexample = details.counterexample?.[0] as JsonRpcFuzzBatch | undefined;
    failure = [
      fc.defaultReportMessage(details) ?? 'fast-check failed',
      counterexample ? `shrunk batch as sent:\n${describeBatch(counterexample)}` : '',
    ].join('\n');
  }

  if (target.exit) {
    ledger.abandonOutstanding();
    restarts += 1;
    target = await spawnTarget();
  }
  const drainDeadline = Date.now() + (options.drainTimeoutMs ?? 45_000);
  while (ledger.missing() > 0 && Date.now() < drainDeadline && !target.exit)
    await new Promise((resolve) => setTimeout(resolve, 50));
  if (target.exit) {
    violations.add(
      'the process died (after the last batch, while answering)',
      `exit ${JSON.stringify(target.exit)}\n${target.stderrTail(3000)}`,
      [],
    );
    ledger.abandonOutstanding();
    restarts += 1;
    target = await spawnTarget();
  }
  ledger.finish();

  await finalChecks(target, violations, answerTimeoutMs);
  await target.stop();

  const counts = ledger.counts;
  const elapsedMs = Date.now() - started;
  const summary =
    `[fuzz ${options.label}] seed ${options.seed}: ${counts.lines} lines in ${counts.batches} batches ` +
    `(${counts.requests} requests, ${counts.notifications} notifications, ${counts.responses} client responses, ` +
    `${counts.malformed} malformed, ${counts.lenient} lenient), ${counts.replies} replies, ` +
    `${violations.total} violations, ${restarts} restarts after a crash, ${(elapsedMs / 1000).toFixed(1)} s`;
  log(summary);
  return { counts, violations, failure, restarts, elapsedMs, summary };
}

/** After the fuzz, the server must still serve a normal client. */
async function finalChecks(target: JsonRpcStdioTarget, violations: FuzzViolations, timeoutMs: number): Promise<void> {
  try {
    const list = await target.request('tools/list', {}, timeoutMs);
    const tools = (list.result as { tools?: { name: string }[] } | undefined)?.tools ?? [];
    if (!tools.some((tool) => tool.name === 'session_status')) {
      violations.add('tools/list after the fuzz is broken', previewOf(JSON.stringify(list)), []);
    }
    const status = await target.request('tools/call', { name: 'session_status', arguments: {} }, timeoutMs);
    const result = status.result as { isError?: boolean; content?: { text?: string }[] } | undefined;
    if (!result || result.isError === true || !result.content?.[0]?.text?.includes('"daemon"')) {
      violations.add('session_status after the fuzz is broken', previewOf(JSON.stringify(status)), []);
    }
  } catch (error) {
    violations.add(
      'the server does not serve a normal client after the fuzz',
      `${(error as Error).message}; exit ${JSON.stringify(target.exit)}\n${target.stderrTail(3000)}`,
      [],
    );
  }
}
