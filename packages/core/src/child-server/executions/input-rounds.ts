import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { EraDialect } from '../../contributions/protocol-admission.js';
import type { InputRequest } from '../../ports/notebook-handle.js';
import type { ExecutionTasks } from './execution-tasks.js';
import { inputElicitation, type KernelInputs } from './kernel-inputs.js';

/** Seconds a resumed call waits for its execution unless its `timeout_secs` says otherwise. */
const defaultResumeSecs = 30;

/** What a call's `requestState` carries: the execution its retry goes on with. */
interface RoundState {
  readonly nteract: 'input';
  readonly executionId: string;
}

export interface InputRoundsInit {
  readonly inputs: KernelInputs;
  readonly tasks: ExecutionTasks;
  /** `get_results` of an execution (what the resumed call answers once it ended or its wait is over). */
  readonly readResult: (executionId: string) => Promise<CallToolResult>;
  /** How the connection speaks (whether the server may send requests: `EraDialect.sendsRequests`). */
  readonly dialect: () => EraDialect;
}

/**
 * The code's `input()` during a plain (not task) call where the server sends no requests (the
 * 2026-07-28 era, `EraDialect.sendsRequests` false): the call is answered `input_required` (SEP-2322) with the person's form in
 * `inputRequests` and the execution in `requestState`; its retry carries the answer, which goes to
 * the kernel, and goes on with that execution (no second run): answered as `get_results` once it
 * ended or the call's `timeout_secs` passed, or `input_required` again when the code asks again.
 * The first call's own wait goes on in the background and answers nobody.
 *
 * `requestState` names only an execution of a connected notebook, which the client could read with
 * `get_results` anyway; a retry naming another still only waits for it and reads it.
 */
export class InputRounds {
  readonly #init: InputRoundsInit;

  public constructor(init: InputRoundsInit) {
    this.#init = init;
  }

  /**
   * Whether this call can be answered `input_required`: the server sends no requests, a tool that
   * declared `inputRounds` (`declaredByTool`), a client that declared elicitation.
   */
  public applies(declaredByTool: boolean, declared: Readonly<Record<string, unknown>> | undefined): boolean {
    return !this.#init.dialect().sendsRequests && declaredByTool && declared?.elicitation !== undefined;
  }

  /**
   * Whether the person can be asked for the code's `input()` during a call: the client declared
   * elicitation and either the server may send requests or the call has input rounds (`rounds`,
   * from {@link applies}).
   */
  public allowsInput(rounds: boolean, declared: Readonly<Record<string, unknown>> | undefined): boolean {
    return declared?.elicitation !== undefined && (this.#init.dialect().sendsRequests || rounds);
  }

  /**
   * A call's execution started (it is in the call's `started` from now on): a request for input it
   * made before is the call's to answer (see {@link run}).
   */
  public started(executionId: string): void {
    this.#init.inputs.executionStarted(executionId);
  }

  /**
   * The call's answer: what `run` resolves with, or `input_required` when one of the executions it
   * started (`started`, filled as they start) asks for input first.
   */
  public async run(
    run: Promise<CallToolResult>,
    started: ReadonlySet<string>,
    signal: AbortSignal,
  ): Promise<CallToolResult | Record<string, unknown>> {
    const stop = new AbortController();
    const abort = (): void => stop.abort();
    signal.addEventListener('abort', abort, { once: true });
    try {
      const asked = this.#init.inputs.waitFor(started, stop.signal).then((request) => ({ request }));
      asked.catch(() => undefined);
      const first = await Promise.race([run.then((result) => ({ result })), asked]);
      return 'result' in first ? first.result : inputRequired(first.request);
    } finally {
      signal.removeEventListener('abort', abort);
      stop.abort();
    }
  }

  /**
   * The retry of a call answered `input_required` (its `requestState` is ours): the answers go to
   * the kernel and the call goes on with the execution; `undefined` for any other call.
   */
  public async resume(
    params: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<CallToolResult | Record<string, unknown> | undefined> {
    const state = roundState(params.requestState);
    if (!state) return undefined;
    const responses = params.inputResponses;
    if (typeof responses === 'object' && responses !== null)
      this.#init.inputs.answer(responses as Record<string, unknown>);
    const secs = (params.arguments as { timeout_secs?: unknown } | undefined)?.timeout_secs;
    const waitMs = (typeof secs === 'number' && secs > 0 ? secs : defaultResumeSecs) * 1000;
    const stop = new AbortController();
    const abort = (): void => stop.abort();
    signal.addEventListener('abort', abort, { once: true });
    try {
      const asked = this.#init.inputs
        .waitFor(new Set([state.executionId]), stop.signal)
        .then((request) => ({ request }));
      asked.catch(() => undefined);
      const ended = this.#init.tasks.endsWithin(state.executionId, waitMs, stop.signal).then(() => ({ ended: true }));
      ended.catch(() => undefined);
      const first = await Promise.race([ended, asked]);
      if ('request' in first) return inputRequired(first.request);
      return await this.#init.readResult(state.executionId);
    } finally {
      signal.removeEventListener('abort', abort);
      stop.abort();
    }
  }
}

/** The `input_required` answer asking the person for the line `request` waits for. */
function inputRequired(request: InputRequest): Record<string, unknown> {
  const state: RoundState = { nteract: 'input', executionId: request.executionId };
  return {
    resultType: 'input_required',
    inputRequests: { [request.inputId]: { method: 'elicitation/create', params: inputElicitation(request) } },
    requestState: JSON.stringify(state),
  };
}

function roundState(value: unknown): RoundState | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const state = JSON.parse(value) as Partial<RoundState>;
    return state.nteract === 'input' && typeof state.executionId === 'string' && state.executionId.length > 0
      ? (state as RoundState)
      : undefined;
  } catch {
    return undefined;
  }
}
