import { randomUUID } from 'node:crypto';
import type { Clock, Logger, Timer } from '@nteract-mcp/foundation';
import type { WireInputRequestEvent, WireNotebookAnswer, WireNotebookRequestOf } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { RoomPeer } from './room-peers.js';

/** How long a kernel's `input()` waits for its peer's answer before it gets an empty line. */
export const defaultInputWaitMs = 10 * 60_000;

/** Who an input request goes to: the peer that started the execution, by id and label. */
export interface InputAsker {
  readonly peerId?: string;
  readonly peerLabel?: string;
}

/** One `input()` waiting for its answer. */
interface PendingInput {
  readonly event: WireInputRequestEvent;
  readonly asker: InputAsker;
  readonly resolve: (value: string) => void;
  readonly timer: Timer;
}

export interface RoomInputsInit {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The peer `peerId`, else one of the label `label`; `undefined` when neither is in the room. */
  readonly findPeer: (peerId: string | undefined, label: string | undefined) => RoomPeer | undefined;
  readonly waitMs?: number;
}

/**
 * The room's pending `input()` requests: each goes to the peer that started its execution (an
 * `input_request` event to that peer alone), or, that peer gone, to a peer of the same label (the
 * same agent, its server restarted); a peer of that label joining later is asked again. The
 * kernel gets the first answer (`input_reply`), or an empty line when the peer cancels, when the
 * execution ends, or when nobody answered within the bound.
 *
 * Guarantees: each request is answered exactly once; a value is passed to the kernel and kept
 * nowhere (never logged: a `getpass()` answer is a secret).
 */
export class RoomInputs {
  readonly #init: RoomInputsInit;
  readonly #pending = new Map<string, PendingInput>();

  public constructor(init: RoomInputsInit) {
    this.#init = init;
  }

  /** Asks the execution's peer for a line; resolves with the answer (empty when none came). */
  public ask(
    execution: { readonly executionId: string; readonly cellId: string },
    asker: InputAsker,
    prompt: string,
    password: boolean,
  ): Promise<string> {
    return new Promise((resolve) => {
      const inputId = randomUUID();
      const event: WireInputRequestEvent = {
        event: 'input_request',
        execution_id: execution.executionId,
        input_id: inputId,
        cell_id: execution.cellId,
        prompt,
        password,
      };
      const timer = this.#init.clock.setTimer(this.#init.waitMs ?? defaultInputWaitMs, () => {
        this.#init.logger.warn('nobody answered an input request in time; the kernel gets an empty line', {
          executionId: execution.executionId,
        });
        this.settle(inputId, '');
      });
      this.#pending.set(inputId, { event, asker, resolve, timer });
      this.send(inputId);
    });
  }

  /** A peer's `input_reply`: the kernel gets the value (an empty line when cancelled). */
  public answer(request: WireNotebookRequestOf<'input_reply'>): WireNotebookAnswer<'input_reply'> {
    const pending = this.#pending.get(request.input_id);
    if (!pending || pending.event.execution_id !== request.execution_id) return { accepted: false };
    if (request.cancelled !== true && typeof request.value !== 'string')
      throw new DaemonError('badRequest', 'input_reply needs a value, or cancelled: true');
    this.settle(request.input_id, request.cancelled === true ? '' : (request.value as string));
    return { accepted: true };
  }

  /** A peer joined: the requests waiting for its label (their peer gone) are sent to it. */
  public peerJoined(peer: RoomPeer): void {
    for (const [inputId, pending] of this.#pending) {
      if (pending.asker.peerLabel === peer.label) this.send(inputId);
    }
  }

  /** The execution ended: its requests still waiting are answered with an empty line. */
  public executionEnded(executionId: string): void {
    for (const [inputId, pending] of this.#pending) {
      if (pending.event.execution_id === executionId) this.settle(inputId, '');
    }
  }

  private send(inputId: string): void {
    const pending = this.#pending.get(inputId);
    if (!pending) return;
    const peer = this.#init.findPeer(pending.asker.peerId, pending.asker.peerLabel);
    if (peer) peer.send({ type: 'broadcast', ...pending.event });
  }

  private settle(inputId: string, value: string): void {
    const pending = this.#pending.get(inputId);
    if (!pending) return;
    this.#pending.delete(inputId);
    pending.timer.cancel();
    pending.resolve(value);
  }
}
