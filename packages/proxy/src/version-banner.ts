import { readSessionReport, type SessionReport } from '@nteract-mcp/core';
import { notebookIdPattern } from '@nteract-mcp/foundation';

/** Prefix of the banner text item: `[nteract] <message>\n`. */
export const bannerPrefix = '[nteract] ';

/** What a restart changed, as far as the proxy knew when the new child came up. */
export interface RestartNotice {
  /** Daemon version the previous children reported last (their session reports), if they reported one. */
  readonly previousVersion: string | undefined;
  /**
   * Daemon version of the new child, when known as the notice is made; when absent, the session
   * report the banner is built for names it (`SessionReport.daemonVersion`), as the proxy has it.
   */
  readonly newVersion?: string | undefined;
  /** The rejoin target handed to the new child (`handoffEnvironment.rejoinNotebook`), if one was. */
  readonly handedOff: string | undefined;
}

/**
 * `Daemon upgraded (<old> → <new>)` when both versions are known and differ (compared as plain
 * strings, U+2192 arrow), else `MCP server restarted`. Says nothing about the session. Pure.
 */
export function restartHeadline(notice: Pick<RestartNotice, 'previousVersion' | 'newVersion'>): string {
  const { previousVersion, newVersion } = notice;
  return previousVersion !== undefined && newVersion !== undefined && previousVersion !== newVersion
    ? `Daemon upgraded (${previousVersion} → ${newVersion})`
    : 'MCP server restarted';
}

/**
 * The rejoin part of a banner: which outcome the child reported for the target it was handed
 * (`target` is named for the agent: a bare notebook id reads `notebook <id>`).
 */
export type RejoinBannerState =
  | { readonly outcome: 'rejoined' | 'pending'; readonly target: string }
  | { readonly outcome: 'failed'; readonly target: string; readonly reason: string | undefined };

/**
 * What `report` says about the rejoin of `handedOff`: `undefined` when nothing was handed off,
 * when there is no report, or when the report's rejoin is absent or names another target (the
 * proxy then knows nothing true to say about the session). Pure.
 */
export function rejoinBannerState(
  handedOff: string | undefined,
  report: SessionReport | undefined,
): RejoinBannerState | undefined {
  const rejoin = report?.rejoin;
  if (handedOff === undefined || rejoin === undefined || rejoin.requested !== handedOff) return undefined;
  const target = nameTarget(handedOff);
  return rejoin.outcome === 'failed'
    ? { outcome: 'failed', target, reason: rejoin.reason }
    : { outcome: rejoin.outcome, target };
}

/** A target as the agent reads it: a path or URL as is, a bare notebook id as `notebook <id>`. */
function nameTarget(target: string): string {
  return notebookIdPattern.test(target) ? `notebook ${target}` : target;
}

/**
 * The banner after a restart, with its session part taken only from `report` (the child's own
 * account, see `session-report.ts`), never from the fact that a target was handed off:
 * - `<headline>, session reconnected to <target>` when the report says `rejoined`;
 * - `<headline>; the session is not reconnected yet: rejoining <target> is still in progress …`
 *   when it says `pending`;
 * - `<headline>; the session could not be reconnected to <target>: <reason>` when `failed`;
 * - `<headline>` alone when nothing was handed off or the report says nothing about it.
 * The headline is {@link restartHeadline}, the new version taken from `report` unless the notice
 * names it. Pure.
 */
export function restartBanner(notice: RestartNotice, report: SessionReport | undefined): string {
  const headline = restartHeadline({
    previousVersion: notice.previousVersion,
    newVersion: notice.newVersion ?? report?.daemonVersion,
  });
  const state = rejoinBannerState(notice.handedOff, report);
  return state === undefined ? headline : `${headline}${rejoinSentence(state)}`;
}

/** The follow-up once a rejoin reported `pending` in a delivered banner has settled. Pure. */
export function rejoinSettledBanner(state: RejoinBannerState): string | undefined {
  if (state.outcome === 'rejoined') return `Session reconnected to ${state.target}`;
  if (state.outcome === 'failed')
    return `The session could not be reconnected to ${state.target}${reasonSuffix(state)}`;
  return undefined;
}

function rejoinSentence(state: RejoinBannerState): string {
  if (state.outcome === 'rejoined') return `, session reconnected to ${state.target}`;
  if (state.outcome === 'pending') {
    return `; the session is not reconnected yet: rejoining ${state.target} is still in progress. If this call needed the notebook, retry it in a moment (session_status shows the progress)`;
  }
  return `; the session could not be reconnected to ${state.target}${reasonSuffix(state)}`;
}

function reasonSuffix(state: RejoinBannerState): string {
  const reason = state.outcome === 'failed' ? state.reason : undefined;
  return reason === undefined ? ' (no reason given)' : `: ${reason}`;
}

/** The parts of a `tools/call` result a banner looks at. */
export interface BannerCarrier {
  readonly content?: unknown;
  readonly isError?: unknown;
  readonly _meta?: unknown;
}

/**
 * Holds at most one pending restart notice (a newer one replaces it) and delivers it once, as a
 * new LAST text item `[nteract] <message>\n` of the next `tools/call` result that can carry it,
 * tool errors (`isError: true`) included: the rejoin part is built at delivery from that very
 * result's session report, so the banner matches the answer it sits on. When the delivered banner
 * said the rejoin was still pending, the first later result whose report settles that rejoin
 * (rejoined or failed) gets a one-line follow-up; a new notice cancels that.
 *
 * Where the notice goes, and why (the results may come from a third-party child): appending
 * leaves every item the child sent where it was, so a client that reads `content[0]` (a JSON
 * text, an image) still finds it, and `structuredContent`, `isError` and `_meta` are untouched.
 * A result whose `content` is not a non-empty array cannot carry it without changing what such a
 * client reads: with no item, the notice would become `content[0]`, which breaks a
 * `structuredContent`-only result whose client falls back to `content[0]`. Such a result is passed
 * on as it is and the notice waits for the next one.
 *
 * Guarantees: each notice delivered at most once; results are never mutated. Pure: no I/O.
 */
export class BannerQueue {
  #pending: RestartNotice | undefined;
  /** A handed-off target whose rejoin a delivered banner reported as still pending. */
  #awaiting: string | undefined;

  /** Queues `notice`, replacing any notice not yet delivered, and drops a pending follow-up. */
  public queue(notice: RestartNotice): void {
    this.#pending = notice;
    this.#awaiting = undefined;
  }

  /** Nothing is due: {@link appendTo} returns every result itself. */
  public get idle(): boolean {
    return this.#pending === undefined && this.#awaiting === undefined;
  }

  /** The notice waiting for delivery, if any. */
  public pending(): RestartNotice | undefined {
    return this.#pending;
  }

  /**
   * Removes the pending notice and returns its banner text for `report` (e.g. for the `reconnect`
   * tool's own answer); `undefined` when nothing is pending. A `pending` rejoin arms the follow-up.
   */
  public take(report: SessionReport | undefined): string | undefined {
    const notice = this.#pending;
    if (notice === undefined) return undefined;
    this.#pending = undefined;
    this.#awaiting = rejoinBannerState(notice.handedOff, report)?.outcome === 'pending' ? notice.handedOff : undefined;
    return restartBanner(notice, report);
  }

  /** Drops the pending notice without delivering it (the `reconnect` answer told it already). */
  public clear(): void {
    this.#pending = undefined;
  }

  /**
   * A copy of `result` with the pending banner (or a due follow-up) appended as its last content
   * item, consuming it; `result` itself when nothing is due or the result cannot carry it (its
   * `content` is not a non-empty array: the notice then stays due).
   */
  public appendTo<R extends BannerCarrier>(result: R): R {
    const existing = result.content;
    if (!Array.isArray(existing) || existing.length === 0) return result;
    const report = readSessionReport(result);
    const message = this.#pending !== undefined ? this.take(report) : this.#followUp(report);
    if (message === undefined) return result;
    const item = { type: 'text', text: `${bannerPrefix}${message}\n` };
    return { ...result, content: [...existing, item] };
  }

  #followUp(report: SessionReport | undefined): string | undefined {
    if (this.#awaiting === undefined) return undefined;
    const state = rejoinBannerState(this.#awaiting, report);
    const message = state === undefined ? undefined : rejoinSettledBanner(state);
    if (message !== undefined) this.#awaiting = undefined;
    return message;
  }
}
