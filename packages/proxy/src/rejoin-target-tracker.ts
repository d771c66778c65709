import { rejoinTargetWithoutCredentials, type SessionReport } from '@nteract-mcp/core';

/**
 * The proxy's one rejoin target: what it hands the next child it starts
 * (`handoffEnvironment.rejoinNotebook`). It stores what the child states in the session report of
 * its results (`_meta['nteract/session']`, see core's `handoff/session-report.ts`) and nothing
 * else: no tool names, arguments or reply texts are read. A report's `target: null` clears it.
 *
 * A hosted URL loses any credentials (user info, the `token` query parameter) even if a child
 * left them in, so they never reach a child environment or `session_status`.
 * Does not guarantee that the target still exists or that a rejoin will succeed: it is the child's
 * last word, handed to the next child. Pure: no I/O.
 */
export class RejoinTargetTracker {
  #target: string | undefined;
  /** `<notebook id> <cursor>` of the last report that had both. */
  #changeCursor: string | undefined;
  #reported = false;
  /** The report taken last: a child repeats one report on every answer, and the same one changes nothing. */
  #last: SessionReport | undefined;

  /** The rejoin target, if any. */
  public current(): string | undefined {
    return this.#target;
  }

  /** Where the child's change notes stood on its active notebook: `<notebook id> <cursor>`, if known. */
  public changeCursor(): string | undefined {
    return this.#changeCursor;
  }

  /** True once a child has stated a target (even `null`): before that, `current()` is only empty. */
  public hasReport(): boolean {
    return this.#reported;
  }

  /** Takes the target of a child's session report (`null` clears it). */
  public observeSessionReport(report: SessionReport): void {
    if (report === this.#last) return;
    this.#last = report;
    this.#reported = true;
    this.#target = report.target === null ? undefined : rejoinTargetWithoutCredentials(report.target);
    if (report.notebookId !== undefined && report.changeCursor !== undefined) {
      this.#changeCursor = `${report.notebookId} ${report.changeCursor}`;
    }
  }
}
