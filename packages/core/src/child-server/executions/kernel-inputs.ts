import type { EraDialect } from '../../contributions/protocol-admission.js';
import type { Logger } from '../../ports/logger.js';
import type { InputRequest, NotebookHandle } from '../../ports/notebook-handle.js';
import type { SessionSlot } from '../../session/session-slot.js';

/** How many input requests wait for the person at most (the oldest is forgotten beyond it). */
const maxWaitingInputs = 64;

/** How a line is asked of the person with a request to the client: `undefined` when the client cannot be asked. */
export type AskPerson = (request: InputRequest) => Promise<string | undefined> | undefined;

export interface KernelInputsInit {
  readonly slot: SessionSlot;
  readonly logger: Logger;
  /** How the connection speaks (whether the server may send requests: `EraDialect.sendsRequests`). */
  readonly dialect: () => EraDialect;
  /** Where the server may send requests: asks the person with `elicitation/create`. */
  readonly ask: AskPerson;
}

/** One input request waiting for the person, and where its answer goes. */
interface WaitingInput {
  readonly request: InputRequest;
  readonly handle: NotebookHandle;
}

/** The form a line is asked with: one string field, `value`. */
export function inputElicitation(request: InputRequest): Record<string, unknown> {
  const prompt = request.prompt.trim();
  const what = request.password ? 'a secret (getpass: it goes to the kernel only, and is never stored)' : 'a line';
  return {
    mode: 'form',
    message: `The notebook's code asks for ${what}${prompt.length > 0 ? `: ${prompt}` : '.'}`,
    requestedSchema: {
      type: 'object',
      properties: { value: { type: 'string', title: prompt.length > 0 ? prompt : 'Input' } },
      required: ['value'],
    },
  };
}

/** The line an elicitation answer gives (`undefined`: declined or cancelled). */
export function lineOf(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { action, content } = answer as { action?: unknown; content?: unknown };
  if (action !== 'accept' || typeof content !== 'object' || content === null) return undefined;
  const value = (content as Record<string, unknown>).value;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The kernel's `input()` / `getpass()` of executions this child started (or took over from the
 * previous child of the same agent) asked of the person: where the server may send requests
 * (legacy) with `elicitation/create` at once (the answer goes to the kernel's stdin); where it
 * sends none (native), as the task's `input_required` status with `inputRequests` in `tasks/get`,
 * answered by `tasks/update`, or as the `input_required` answer of the call that runs it
 * ({@link waitFor}, see `input-rounds.ts`), answered by its retry. A client that cannot be asked
 * gets the kernel an empty line at once. Values pass through and are kept nowhere, never logged.
 */
export class KernelInputs {
  readonly #init: KernelInputsInit;
  readonly #watched = new WeakSet<NotebookHandle>();
  /** Requests waiting for the person, by input id. */
  readonly #waiting = new Map<string, WaitingInput>();
  /** Who waits for a native request to wait (see {@link waitFor}). */
  readonly #waiters = new Set<(request: InputRequest) => void>();

  public constructor(init: KernelInputsInit) {
    this.#init = init;
  }

  /** Listens to the input requests of the active and parked sessions' notebooks (call on every slot change). */
  public watchSessions(): void {
    const { slot } = this.#init;
    for (const session of [slot.active, ...slot.parked]) {
      const handle = session?.handle;
      if (!handle?.onInputRequest || this.#watched.has(handle)) continue;
      this.#watched.add(handle);
      handle.onInputRequest((request) => this.received(handle, request));
    }
  }

  /** A task's shape with its waiting inputs: `input_required` (with `inputRequests` where the server sends no requests). */
  public withInputRequests(executionIds: readonly string[], task: Record<string, unknown>): Record<string, unknown> {
    if (task.status !== 'working') return task;
    const waiting = [...this.#waiting.values()].filter(({ request }) => executionIds.includes(request.executionId));
    if (waiting.length === 0) return task;
    const statusMessage = 'The code waits for input from the person.';
    if (this.#init.dialect().sendsRequests) return { ...task, status: 'input_required', statusMessage };
    const inputRequests = Object.fromEntries(
      waiting.map(({ request }) => [
        request.inputId,
        { method: 'elicitation/create', params: inputElicitation(request) },
      ]),
    );
    return { ...task, status: 'input_required', statusMessage, inputRequests };
  }

  /**
   * The first input request of one of `executionIds` waiting for the person (where the server sends
   * no requests): one already waiting, else the next to come. Rejects when `signal` aborts.
   */
  public waitFor(executionIds: ReadonlySet<string>, signal: AbortSignal): Promise<InputRequest> {
    const waiting = [...this.#waiting.values()].find(({ request }) => executionIds.has(request.executionId));
    if (waiting) return Promise.resolve(waiting.request);
    return new Promise((resolve, reject) => {
      const waiter = (request: InputRequest): void => {
        if (!executionIds.has(request.executionId)) return;
        done();
        resolve(request);
      };
      const onAbort = (): void => {
        done();
        reject(signal.reason ?? new Error('aborted'));
      };
      const done = (): void => {
        this.#waiters.delete(waiter);
        signal.removeEventListener('abort', onAbort);
      };
      if (signal.aborted) return onAbort();
      this.#waiters.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * `executionId` was just recorded as a run of a waiting call: a request of it that came first
   * (the kernel asked before the call heard its execution had started) is handed to the waiters now.
   */
  public executionStarted(executionId: string): void {
    for (const { request } of [...this.#waiting.values()]) {
      if (request.executionId !== executionId) continue;
      for (const waiter of [...this.#waiters]) waiter(request);
    }
  }

  /** `tasks/update`: answers to waiting inputs, by input id; unknown or answered ids are ignored. */
  public answer(responses: Readonly<Record<string, unknown>>): void {
    for (const [inputId, response] of Object.entries(responses)) {
      const waiting = this.#waiting.get(inputId);
      if (!waiting) continue;
      this.#waiting.delete(inputId);
      this.reply(waiting, lineOf(response));
    }
  }

  private received(handle: NotebookHandle, request: InputRequest): void {
    if (this.#waiting.has(request.inputId)) return;
    if (!this.#init.dialect().sendsRequests) {
      this.#waiting.set(request.inputId, { request, handle });
      // Bounded: one never asked for (its task not polled) is forgotten; the daemon's bound ends it.
      if (this.#waiting.size > maxWaitingInputs) this.#waiting.delete(this.#waiting.keys().next().value as string);
      for (const waiter of [...this.#waiters]) waiter(request);
      return;
    }
    const asked = this.#init.ask(request);
    if (asked === undefined) {
      this.#init.logger.info('the client cannot be asked for input; the kernel gets an empty line', {
        executionId: request.executionId,
      });
      this.reply({ request, handle }, undefined);
      return;
    }
    const waiting = { request, handle };
    this.#waiting.set(request.inputId, waiting);
    asked.then(
      (value) => {
        this.#waiting.delete(request.inputId);
        this.reply(waiting, value);
      },
      (error: unknown) => {
        this.#waiting.delete(request.inputId);
        this.#init.logger.warn('asking the person for input failed; the kernel gets an empty line', { error });
        this.reply(waiting, undefined);
      },
    );
  }

  private reply({ request, handle }: WaitingInput, value: string | undefined): void {
    handle
      .answerInput?.(request, value)
      .catch((error: unknown) =>
        this.#init.logger.warn('an input answer did not reach the kernel', { executionId: request.executionId, error }),
      );
  }
}
