/**
 * What a child MCP server tells the proxy about its session, in a structured `_meta` field of
 * every `tools/call` result (success or tool error). The proxy stores what it is told and repeats
 * only that: its restart handoff target and its restart banner come from here, never from the
 * result's human text.
 *
 * This is one half of the proxy↔child contract (the other half: the environment variables in
 * `rejoin-target-tracker.ts` and the idempotency key in `child-tool-registry.ts`).
 */

/** The `_meta` key of a tool result that carries a {@link SessionReport}. */
export const sessionReportMetaKey = 'nteract/session';

/**
 * The `_meta` key a tool's `tools/list` entry carries (`true`) when its answer is the child's
 * status document, to which a supervising host adds a section of its own (the proxy: its
 * supervision). The host finds that tool by this declaration, never by its name.
 */
export const supervisionStatusMetaKey = 'nteract/supervision-status';

/** Whether a `tools/list` entry declares {@link supervisionStatusMetaKey}. */
export function declaresSupervisionStatus(tool: { readonly _meta?: unknown }): boolean {
  const meta = tool._meta;
  return (
    typeof meta === 'object' && meta !== null && (meta as Record<string, unknown>)[supervisionStatusMetaKey] === true
  );
}

/** How the rejoin of the notebook handed to a restarted child went. */
export type RejoinReportOutcome = 'rejoined' | 'pending' | 'failed';

/** The child's account of the rejoin it was asked for at start (`handoffEnvironment.rejoinNotebook`). */
export interface RejoinReport {
  /** The target the child was handed, as it received it. */
  readonly requested: string;
  /**
   * `rejoined`: that notebook is the active session (installed by the rejoin, or it was already
   * active); `pending`: the rejoin is still being attempted; `failed`: it will not be, see `reason`.
   */
  readonly outcome: RejoinReportOutcome;
  /**
   * When `failed`: why (the drop reason the agent would be told). When `pending`: why the last
   * attempt did not succeed (it is retried), once one failed.
   */
  readonly reason?: string;
  /** When `rejoined`: what the agent must know about how it came back (the notebook is back on a new kernel, its state gone). */
  readonly note?: string;
}

/** The child's session, as of the moment it produced a result. */
export interface SessionReport {
  /**
   * The notebook a restarted child should rejoin: the active session's target (a local
   * file-backed notebook's canonical path, else its notebook UUID; a hosted notebook's URL without
   * credentials), or the target the child is recovering while the slot is empty; `null` when there
   * is none (no notebook yet, or the agent disconnected it).
   */
  readonly target: string | null;
  /** The active notebook's id, when there is one. */
  readonly notebookId?: string;
  /**
   * The version of the daemon this child works with (its baseline), once one answered. A child
   * that started before its daemon has no version in `serverInfo.title`; this is how the proxy
   * still knows what an upgrade changed.
   */
  readonly daemonVersion?: string;
  /** Present in every result of a child that was handed a rejoin target at start. */
  readonly rejoin?: RejoinReport;
  /**
   * Where this child last told the agent about other peers' changes to the active notebook (a
   * change-log cursor), once it has; the proxy hands it to the next child.
   */
  readonly changeCursor?: string;
}

/** The report in a tool result's `_meta`, or `undefined` when it is absent or malformed. Pure. */
export function readSessionReport(result: unknown): SessionReport | undefined {
  if (!isRecord(result) || !isRecord(result._meta)) return undefined;
  const raw = result._meta[sessionReportMetaKey];
  if (!isRecord(raw)) return undefined;
  const target = raw.target;
  if (target !== null && (typeof target !== 'string' || target.trim() === '')) return undefined;
  const report: {
    target: string | null;
    notebookId?: string;
    daemonVersion?: string;
    rejoin?: RejoinReport;
    changeCursor?: string;
  } = { target };
  if (typeof raw.notebookId === 'string' && raw.notebookId !== '') report.notebookId = raw.notebookId;
  if (typeof raw.daemonVersion === 'string' && raw.daemonVersion !== '') report.daemonVersion = raw.daemonVersion;
  const rejoin = readRejoinReport(raw.rejoin);
  if (rejoin) report.rejoin = rejoin;
  if (typeof raw.changeCursor === 'string' && /^\S{1,200}$/.test(raw.changeCursor))
    report.changeCursor = raw.changeCursor;
  return report;
}

/** A copy of `result` whose `_meta` carries `report` (other `_meta` keys kept). Pure. */
export function withSessionReport<R extends { _meta?: Record<string, unknown> }>(result: R, report: SessionReport): R {
  return { ...result, _meta: { ...result._meta, [sessionReportMetaKey]: report } };
}

function readRejoinReport(raw: unknown): RejoinReport | undefined {
  if (!isRecord(raw) || typeof raw.requested !== 'string') return undefined;
  const outcome = raw.outcome;
  if (outcome !== 'rejoined' && outcome !== 'pending' && outcome !== 'failed') return undefined;
  const reason = typeof raw.reason === 'string' && raw.reason !== '' ? { reason: raw.reason } : {};
  const note = typeof raw.note === 'string' && raw.note !== '' ? { note: raw.note } : {};
  return { requested: raw.requested, outcome, ...reason, ...note };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
