import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { EraDialect } from '../../contributions/protocol-admission.js';
import type { SessionSlot } from '../../session/session-slot.js';
import {
  type ConfirmationQuestion,
  errorResult,
  type ToolConfirmation,
  textResult,
} from '../tools/child-tool-registry.js';

/** The key of the one input request a confirmation asks (2026-07-28 `inputRequests` / `inputResponses`). */
const confirmKey = 'confirm';

export interface PersonConfirmationsInit {
  readonly slot: SessionSlot;
  /** How the connection speaks (whether the server may send requests: `EraDialect.sendsRequests`). */
  readonly dialect: () => EraDialect;
  /** Where the server may send requests: sends `elicitation/create` to the client; resolves with its answer. */
  readonly elicit: (params: Record<string, unknown>) => Promise<unknown>;
}

/** How a call goes on: run it (with a note when nobody could be asked), or answer at once. */
export type ConfirmationOutcome =
  | { readonly kind: 'run'; readonly note?: string; readonly confirmed?: { readonly fingerprint?: string } }
  | { readonly kind: 'answer'; readonly result: Record<string, unknown> };

/**
 * Calls that destroy what the person may want kept ask them first, when the client can ask: the
 * tool declares what (`confirm`, e.g. `restart_kernel` on a kernel that ran code). Where the
 * server may send requests (legacy) it asks with `elicitation/create` during the call; where it
 * sends none (native) it answers the call `input_required` (SEP-2322) and goes ahead on the retry
 * that carries the person's answer. A client without the elicitation capability gets today's
 * behaviour, and the result says nobody was asked, unless the question is required (`refusal`):
 * then the call is refused and nothing runs. A declined or cancelled confirmation changes nothing
 * and says so. A question with a fingerprint is asked again on a retry whose `requestState` names
 * another fingerprint than the question has now (what the person saw is not what would be done).
 */
export class PersonConfirmations {
  readonly #init: PersonConfirmationsInit;

  public constructor(init: PersonConfirmationsInit) {
    this.#init = init;
  }

  /** How call `name` goes on, as its tool's `confirm` (none: it runs) asks of the active notebook. */
  public async check(
    name: string,
    confirm: ToolConfirmation | undefined,
    params: Readonly<Record<string, unknown>>,
    declared: Readonly<Record<string, unknown>> | undefined,
  ): Promise<ConfirmationOutcome> {
    const question = await this.question(confirm, params.arguments);
    if (!question) return { kind: 'run' };
    if (declared?.elicitation === undefined) {
      if (question.refusal !== undefined) return { kind: 'answer', result: errorResult(question.refusal) };
      return { kind: 'run', note: question.unasked };
    }
    const elicitation = {
      mode: 'form',
      message: question.message,
      requestedSchema: {
        type: 'object',
        properties: { confirm: { type: 'boolean', title: question.title } },
        required: ['confirm'],
      },
    };
    let answer: unknown;
    if (!this.#init.dialect().sendsRequests) {
      // The retry's answer is for the question its requestState names: one asked about anything else is asked again.
      const state = question.fingerprint === undefined ? name : `${name}:${question.fingerprint}`;
      const responses = params.inputResponses as Record<string, unknown> | undefined;
      const stale = question.fingerprint !== undefined && params.requestState !== state;
      if (responses?.[confirmKey] === undefined || stale) {
        return {
          kind: 'answer',
          result: {
            resultType: 'input_required',
            inputRequests: { [confirmKey]: { method: 'elicitation/create', params: elicitation } },
            requestState: state,
          },
        };
      }
      answer = responses[confirmKey];
    } else answer = await this.#init.elicit(elicitation);
    if (confirmed(answer)) {
      return {
        kind: 'run',
        confirmed: question.fingerprint === undefined ? {} : { fingerprint: question.fingerprint },
      };
    }
    return { kind: 'answer', result: textResult(`Not done: the person did not confirm ${name}; nothing was changed.`) };
  }

  private async question(
    confirm: ToolConfirmation | undefined,
    args: unknown,
  ): Promise<ConfirmationQuestion | undefined> {
    const handle = this.#init.slot.active?.handle;
    if (!confirm || !handle) return undefined;
    return confirm.question(args, handle);
  }
}

/** The person accepted, with `confirm: true`. */
function confirmed(answer: unknown): boolean {
  if (typeof answer !== 'object' || answer === null) return false;
  const { action, content } = answer as { action?: unknown; content?: { confirm?: unknown } };
  return action === 'accept' && content?.confirm === true;
}

/**
 * `result` saying that nobody was asked (`note`): as a `confirmation` field of its JSON object
 * (the tools that confirm answer one), else as a last text item.
 */
export function withNote(result: CallToolResult, note: string | undefined): CallToolResult {
  if (note === undefined || result.isError === true) return result;
  const [first, ...rest] = result.content;
  if (first?.type === 'text') {
    try {
      const value = JSON.parse(first.text) as unknown;
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const text = JSON.stringify({ ...value, confirmation: note }, null, 2);
        return { ...result, content: [{ ...first, text }, ...rest] };
      }
    } catch {
      // Not JSON: the note goes last.
    }
  }
  return { ...result, content: [...result.content, { type: 'text', text: note }] };
}
