import type {
  CellOutput,
  Clock,
  ExecutionPage,
  ExecutionState,
  InputRequest,
  OutputsPageRequest,
  ScratchRun,
  Subscription,
} from '@nteract-mcp/core';
import { ListenerSet } from '@nteract-mcp/foundation';
import type { WireInputRequestEvent, WireNotebookAnswer, WireNotebookRequest } from '@nteract-mcp/runtimed-protocol';
import { toExecutionState } from './runtimed-wire-readers.js';

/** How many input requests are kept for a first listener (older ones are dropped: the daemon asks a new peer again). */
const maxUnheard = 16;

/** Sends one notebook request on the handle's connection and resolves with its answer. */
export type NotebookRequester = <R extends WireNotebookRequest>(message: R) => Promise<WireNotebookAnswer<R['type']>>;

/** What {@link RuntimedExecutionControls} works with. */
export interface RuntimedExecutionControlsInit {
  readonly request: NotebookRequester;
  /** Times a scratch run's `timeoutMs`. */
  readonly clock: Clock;
  /** Told when an input request listener threw. */
  readonly onListenerError: (error: unknown) => void;
}

/**
 * The execution controls of a local daemon handle beyond running cells: scratch runs (`run_code`,
 * and `start_code`, kept as an execution), cancelling one execution by id, and the daemon's
 * `input_request`s to this peer (told to the listeners, or kept, a few, for the first listener,
 * since the daemon asks again right when a restarted server's peer joins, before anybody
 * listens) and their answers, cancelling one execution by id, and scratch runs kept as
 * executions. An answer's value passes through and is kept nowhere.
 */
export class RuntimedExecutionControls {
  readonly #request: NotebookRequester;
  readonly #clock: Clock;
  readonly #listeners: ListenerSet<InputRequest>;
  readonly #unheard: InputRequest[] = [];

  public constructor(init: RuntimedExecutionControlsInit) {
    this.#request = init.request;
    this.#clock = init.clock;
    this.#listeners = new ListenerSet(init.onListenerError);
  }

  /** `run_code` on the daemon: answered when done; after `timeoutMs` this resolves `timeout` and drops the late answer. */
  public runScratch(source: string, options: { readonly timeoutMs?: number } = {}): Promise<ScratchRun> {
    const run = this.#request({ type: 'run_code', source }).then(
      (answer): ScratchRun => ({
        status: answer.status,
        outputs: answer.outputs as readonly CellOutput[],
        ...(answer.kernel_notice === undefined ? {} : { kernelNotice: answer.kernel_notice }),
      }),
    );
    if (options.timeoutMs === undefined) return run;
    return new Promise((resolve, reject) => {
      const timer = this.#clock.setTimer(options.timeoutMs as number, () =>
        resolve({ status: 'timeout', outputs: [] }),
      );
      run.then(
        (result) => {
          timer.cancel();
          resolve(result);
        },
        (error: unknown) => {
          timer.cancel();
          reject(error);
        },
      );
    });
  }

  public onInputRequest(listener: (request: InputRequest) => void): Subscription {
    const subscription = this.#listeners.add(listener);
    for (const request of this.#unheard.splice(0)) this.#listeners.tell(request);
    return subscription;
  }

  /** An `input_request` broadcast to this peer. */
  public received(event: WireInputRequestEvent): void {
    const request: InputRequest = {
      executionId: event.execution_id,
      inputId: event.input_id,
      cellId: event.cell_id,
      prompt: event.prompt,
      password: event.password,
    };
    if (this.#listeners.size > 0) {
      this.#listeners.tell(request);
      return;
    }
    if (this.#unheard.length >= maxUnheard) this.#unheard.shift();
    this.#unheard.push(request);
  }

  public async answerInput(request: InputRequest, value: string | undefined): Promise<boolean> {
    const answer = await this.#request({
      type: 'input_reply',
      execution_id: request.executionId,
      input_id: request.inputId,
      ...(value === undefined ? { cancelled: true } : { value }),
    });
    return answer.accepted;
  }

  public async cancelExecution(executionId: string): Promise<'dequeued' | 'interrupted' | 'still_running' | 'none'> {
    return (await this.#request({ type: 'cancel_execution', execution_id: executionId })).cancelled;
  }

  /** One page of an execution's outputs; `undefined` from a daemon before pages (it answered them all: the caller pages). */
  public async getExecutionPage(executionId: string, page: OutputsPageRequest): Promise<ExecutionPage | undefined> {
    const answer = await this.#request({
      type: 'get_execution',
      execution_id: executionId,
      outputs_page: { offset: page.offset, length: page.length, budget_bytes: page.budgetBytes },
    });
    if (answer.outputs_page === undefined) return undefined;
    return { state: toExecutionState(answer), page: answer.outputs_page };
  }

  public async startScratch(source: string, options: { readonly allowInput?: boolean } = {}): Promise<ExecutionState> {
    const allow = options.allowInput === true ? { allow_input: true } : {};
    return toExecutionState(await this.#request({ type: 'start_code', source, ...allow }));
  }

  public clear(): void {
    this.#listeners.clear();
    this.#unheard.splice(0);
  }
}
