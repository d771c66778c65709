import { type Clock, readSessionReport, type SessionReport } from '@nteract-mcp/core';
import type { ChildSupervisor } from './child-supervisor.js';
import type { RejoinTargetTracker } from './rejoin-target-tracker.js';

/** The last session report a child sent, with when and from which child. */
interface ReceivedReport {
  readonly report: SessionReport;
  readonly at: number;
  readonly childPid: number | undefined;
}

/**
 * What the proxy adds to the child's `session_status`: its supervision (restarts, budget, breaker,
 * child pid), the rejoin target it holds and handed to the child, and the last session report it
 * received. Keeps that last report.
 */
export class ProxyStatus {
  readonly #supervisor: ChildSupervisor;
  readonly #tracker: RejoinTargetTracker;
  readonly #clock: Clock;
  #lastReport: ReceivedReport | undefined;

  public constructor(supervisor: ChildSupervisor, tracker: RejoinTargetTracker, clock: Clock) {
    this.#supervisor = supervisor;
    this.#tracker = tracker;
    this.#clock = clock;
  }

  /** A child (by pid) sent `report` just now. */
  public recordReport(report: SessionReport, childPid: number | undefined): void {
    this.#lastReport = { report, at: this.#clock.now(), childPid };
  }

  /**
   * `result` of the child's `session_status` with a `proxy` object added to its JSON text;
   * unchanged when it carries no session report (`_meta['nteract/session']`: not the nteract
   * server's own tool but one of a third-party child that happens to share the name, whose result
   * passes through as it is) or when its first content item is not JSON text.
   */
  public decorate(result: Record<string, unknown>, handedOff: string | undefined): Record<string, unknown> {
    if (readSessionReport(result) === undefined) return result;
    const content = result.content as { type: string; text: string }[] | undefined;
    const first = content?.[0];
    if (first?.type !== 'text') return result;
    try {
      const status = JSON.parse(first.text) as Record<string, unknown>;
      const supervision = this.#supervisor.status();
      status.proxy = {
        restart_count: supervision.restartCount,
        budget_left: supervision.budgetLeft,
        last_exit_class: supervision.lastExitClass ?? null,
        breaker: supervision.breaker,
        child_pid: supervision.pid ?? null,
        handoff_target: this.#tracker.current() ?? null,
        handed_off_to_child: handedOff ?? null,
        last_report: this.#lastReportJson(),
      };
      return {
        ...result,
        content: [{ type: 'text', text: JSON.stringify(status, null, 2) }, ...(content?.slice(1) ?? [])],
      };
    } catch {
      return result;
    }
  }

  /** The last session report, as `session_status` shows it; `null` before any. */
  #lastReportJson(): Record<string, unknown> | null {
    const received = this.#lastReport;
    if (!received) return null;
    const { report } = received;
    return {
      target: report.target,
      notebook_id: report.notebookId ?? null,
      rejoin: report.rejoin
        ? { requested: report.rejoin.requested, outcome: report.rejoin.outcome, reason: report.rejoin.reason ?? null }
        : null,
      child_pid: received.childPid ?? null,
      at: new Date(received.at).toISOString(),
    };
  }
}
