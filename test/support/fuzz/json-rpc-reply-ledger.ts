import { type ClassifiedLine, idKey } from './classify-json-rpc-lines.js';
import type { FuzzViolations } from './fuzz-violations.js';

/** One reply the server wrote: a response line (not a request or notification of its own). */
export interface JsonRpcReply {
  readonly id: unknown;
  readonly error: { readonly code: unknown; readonly message: unknown } | undefined;
  readonly line: string;
}

interface KeyBudget {
  required: number;
  optional: number;
  /** How many of the replies may be results (not errors). */
  results: number;
  cancellable: boolean;
  replies: JsonRpcReply[];
  readonly lines: string[];
  readonly traits: Set<string>;
}

interface BatchRecord {
  readonly index: number;
  readonly keys: Map<string, KeyBudget>;
  readonly nullBudget: number;
  nullReplies: number;
  /** Every line of the batch (previews), for reports. */
  readonly previews: readonly string[];
}

/** The trait that names a group of unanswered requests: the first one a request has, in this order. */
const traitPriority: readonly string[] = [
  'params is an array',
  'params is not an object',
  'params._meta is not an object',
  'extra top-level member',
  'fractional id',
  'integer id beyond 2^53',
  'ids like 7 and "7" in flight',
  'the same id twice in flight',
  'id reused across batches (attribution approximate)',
];

/** Counts of what was sent and answered, for the summary line. */
export interface JsonRpcLedgerCounts {
  lines: number;
  requests: number;
  notifications: number;
  responses: number;
  malformed: number;
  lenient: number;
  replies: number;
  batches: number;
}

/**
 * Accounts for every reply of a fuzzed JSON-RPC server against the lines that were sent:
 * exactly one reply per request (with its id, type included), none for notifications and client
 * responses, at most one error for a malformed line, replies only to ids that were sent, and clear
 * errors (not an internal error, not a raw validation dump). Missing replies are judged by
 * {@link finish}, once the server had every chance to answer.
 */
export class JsonRpcReplyLedger {
  public readonly counts: JsonRpcLedgerCounts = {
    lines: 0,
    requests: 0,
    notifications: 0,
    responses: 0,
    malformed: 0,
    lenient: 0,
    replies: 0,
    batches: 0,
  };
  /** Budgets by id key, oldest first (a key built from a mutated id may recur in later batches). */
  readonly #byKey = new Map<string, { batch: BatchRecord; budget: KeyBudget }[]>();
  #current: BatchRecord | undefined;

  public constructor(private readonly violations: FuzzViolations) {}

  /** Starts a batch: its lines are expected to be answered from now on. */
  public open(index: number, lines: readonly ClassifiedLine[]): void {
    const keys = new Map<string, KeyBudget>();
    let nullBudget = 0;
    const cancelled = new Set<string>();
    for (const line of lines) {
      this.counts.lines += 1;
      if (line.cls === 'request') this.counts.requests += 1;
      else if (line.cls === 'notification') this.counts.notifications += 1;
      else if (line.cls === 'response') this.counts.responses += 1;
      else if (line.cls === 'malformed') this.counts.malformed += 1;
      else this.counts.lenient += 1;
      // A cancellation reaches only a request sent before it (one it names later is answered).
      if (line.cancels !== undefined && (keys.get(line.cancels)?.required ?? 0) > 0) cancelled.add(line.cancels);
      if ((line.cls === 'malformed' && line.key === undefined) || line.cls === 'lenient') nullBudget += 1;
      if (line.key === undefined || line.cls === 'notification') continue;
      let budget = keys.get(line.key);
      if (!budget) {
        budget = {
          required: 0,
          optional: 0,
          results: 0,
          cancellable: false,
          replies: [],
          lines: [],
          traits: new Set(),
        };
        keys.set(line.key, budget);
      }
      budget.lines.push(line.preview);
      if (line.cls === 'request') {
        for (const trait of line.traits ?? []) budget.traits.add(trait);
        if (budget.required > 0) budget.traits.add('the same id twice in flight');
        budget.required += 1;
        budget.results += 1;
      } else if (line.cls === 'malformed') budget.optional += 1;
      else if (line.cls === 'lenient') {
        budget.optional += 1;
        budget.results += 1;
      }
    }
    for (const [key, budget] of keys) {
      const twin = key.startsWith('n:') ? `s:${key.slice(2)}` : `n:${key.slice(2)}`;
      if (budget.required > 0 && (keys.get(twin)?.required ?? 0) > 0) budget.traits.add('ids like 7 and "7" in flight');
    }
    for (const key of cancelled) {
      const budget = keys.get(key);
      if (budget) budget.cancellable = true;
    }
    const batch: BatchRecord = {
      index,
      keys,
      nullBudget,
      nullReplies: 0,
      previews: lines.map((line) => `[${line.cls}] ${line.preview}`),
    };
    for (const [key, budget] of keys) {
      const list = this.#byKey.get(key);
      if (list) list.push({ batch, budget });
      else this.#byKey.set(key, [{ batch, budget }]);
    }
    this.#current = batch;
    this.counts.batches += 1;
  }

  /** Ends the batch window (its sentinel was answered): checks what can be checked already. */
  public close(): void {
    const batch = this.#current;
    this.#current = undefined;
    if (batch && batch.nullReplies > batch.nullBudget) {
      this.violations.add(
        'answered a notification or response (reply with id null)',
        `batch ${batch.index}: ${batch.nullReplies} null-id replies for ${batch.nullBudget} unreadable lines`,
        batch.previews,
      );
    }
  }

  /** Records one reply line of the server. */
  public reply(reply: JsonRpcReply): void {
    this.counts.replies += 1;
    if (reply.error !== undefined) this.checkError(reply);
    if (reply.id === null) {
      if (this.#current) this.#current.nullReplies += 1;
      else this.violations.add('reply with id null outside any batch', reply.line, []);
      if (reply.error === undefined) this.violations.add('result with id null', reply.line, []);
      return;
    }
    const key = idKey(reply.id);
    if (key === undefined) {
      this.violations.add('reply with an id JSON-RPC does not allow', reply.line, []);
      return;
    }
    const entries = this.#byKey.get(key);
    if (!entries) {
      this.violations.add('reply to an id that was never sent', reply.line, []);
      return;
    }
    const open = this.#owner(entries, reply);
    const { budget } = open ?? (entries[entries.length - 1] as { budget: KeyBudget });
    budget.replies.push(reply);
    if (budget.required === 0 && budget.optional === 0) {
      this.violations.add('answered a notification or client response', reply.line, budget.lines);
    } else if (budget.replies.length > budget.required + budget.optional) {
      this.violations.add(
        'more than one reply for one request',
        `${budget.replies.length} replies for ${key} (${budget.required} request(s), ${budget.optional} other line(s) with that id)`,
        [...budget.lines, ...budget.replies.map((item) => item.line)],
      );
    }
    const excess = budget.replies.length > budget.required + budget.optional;
    const results = budget.replies.filter((item) => item.error === undefined).length;
    if (!excess && reply.error === undefined && results > budget.results) {
      this.violations.add('a result (not an error) for a malformed line', reply.line, budget.lines);
    }
  }

  /**
   * The budget a reply with a reused id most likely belongs to. An error may answer a malformed
   * line, which is answered at once: the current batch's budget takes it first. A result answers
   * a request: the oldest request still owed a reply takes it, then a line that may still get a
   * result (a lenient one), so a slow request's late result is not charged to a later batch's
   * malformed line, nor a request's result to an earlier unanswered lenient line.
   */
  #owner(
    entries: readonly { batch: BatchRecord; budget: KeyBudget }[],
    reply: JsonRpcReply,
  ): { batch: BatchRecord; budget: KeyBudget } | undefined {
    const room = ({ budget }: { budget: KeyBudget }): boolean =>
      budget.replies.length < budget.required + budget.optional;
    const owed = ({ budget }: { budget: KeyBudget }): boolean => budget.replies.length < budget.required;
    if (reply.error === undefined) {
      const owesResult = ({ budget }: { budget: KeyBudget }): boolean =>
        budget.replies.filter((item) => item.error === undefined).length < budget.results;
      return entries.find(owed) ?? entries.find((entry) => room(entry) && owesResult(entry)) ?? entries.find(room);
    }
    return (
      entries.find((entry) => entry.batch === this.#current && room(entry)) ?? entries.find(owed) ?? entries.find(room)
    );
  }

  private checkError(reply: JsonRpcReply): void {
    const { code, message } = reply.error as { code: unknown; message: unknown };
    const lines = this.linesFor(reply.id);
    if (!Number.isInteger(code) || typeof message !== 'string') {
      this.violations.add('error reply that is not a JSON-RPC error object', reply.line, lines);
      return;
    }
    if (code === -32603) this.violations.add('internal error (-32603) for a client input', reply.line, lines);
    if (/\n/.test(message) || /^\s*[[{]/.test(message)) {
      this.violations.add('error message is a raw dump, not a clear sentence', reply.line, lines);
    }
  }

  private linesFor(id: unknown): string[] {
    const key = idKey(id);
    return key === undefined ? [] : (this.#byKey.get(key) ?? []).flatMap((entry) => entry.budget.lines);
  }

  /** Whether a reply with this id belongs to a line of this ledger. */
  public knows(id: unknown): boolean {
    const key = idKey(id);
    return key !== undefined && this.#byKey.has(key);
  }

  /** The process died: what it still owed is lost with it (the death is reported on its own). */
  public abandonOutstanding(): void {
    for (const { budget } of [...this.#byKey.values()].flat())
      if (budget.replies.length < budget.required) budget.cancellable = true;
  }

  /** Requests still short of their reply. */
  public missing(): number {
    let count = 0;
    for (const { budget } of [...this.#byKey.values()].flat())
      if (!budget.cancellable && budget.replies.length < budget.required)
        count += budget.required - budget.replies.length;
    return count;
  }

  /** After the drain: every request short of its reply is a violation. */
  public finish(): void {
    for (const [key, entries] of this.#byKey)
      for (const { batch, budget } of entries) {
        if (budget.cancellable || budget.replies.length >= budget.required) continue;
        const traits = [...budget.traits];
        if (entries.length > 1) traits.push('id reused across batches (attribution approximate)');
        const primary = traitPriority.find((trait) => traits.includes(trait)) ?? 'plain request';
        this.violations.add(
          `request never answered (${primary})`,
          `batch ${batch.index}: ${budget.replies.length} of ${budget.required} replies for ${key}; traits: ${traits.join(', ') || 'none'}`,
          budget.lines,
        );
      }
  }
}
