import type { ConformanceCheck } from './start-conformance-target.js';

/** What `conformance server --scenario <name>` printed, read back as an outsider reads it. */
export interface SuiteOutput {
  /** The suite's own verdict line, e.g. `Passed: 24/28, 4 failed, 1 warnings`. */
  readonly passedLine: string;
  /** SUCCESS checks, out of SUCCESS + FAILURE checks (the suite's `Passed: a/b`). */
  readonly passed: number;
  readonly total: number;
  readonly failed: number;
  readonly warnings: number;
  /**
   * Every check line of its `Checks:` list, in order (a check id may repeat: the suite reports some
   * once per probe); a FAILURE carries the first line of its `Error:` from `=== Failed Checks ===`.
   */
  readonly checks: readonly ConformanceCheck[];
}

/** The suite colours its output whatever NO_COLOR says: ESC [ … m sequences. */
const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const checkLine = /^\S+ \[([^\]\s]+)\s*\] (SUCCESS|FAILURE|WARNING|SKIPPED|INFO)\s+(.*)$/;
const passedLinePattern = /^Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings$/;
/** `  - ServerRejectsUndeclaredCapability: <description>` in `=== Failed Checks ===`. */
const failedEntry = /^ {2}- ([A-Za-z0-9]+): /;
const errorLine = /^ {4}Error: (.*)$/;

/**
 * Reads the suite's default (pretty) output of one server scenario: its check lines, its
 * `Passed:` line and the errors of its failed checks. Throws when the output does not have that
 * shape (a suite that crashed, a scenario that was skipped), or when the numbers do not agree.
 */
export function parseSuiteOutput(output: string): SuiteOutput {
  const lines = output.replace(ansi, '').split('\n');
  const checks: ConformanceCheck[] = [];
  let verdictIndex = -1;
  for (const [index, line] of lines.entries()) {
    const check = checkLine.exec(line);
    if (check) {
      const [, id, status, description] = check as unknown as [string, string, string, string];
      checks.push({ id, name: id, description, status });
    } else if (passedLinePattern.test(line)) {
      verdictIndex = index;
      break;
    }
  }
  const verdict = passedLinePattern.exec(lines[verdictIndex] ?? '');
  if (!verdict) throw new Error(`the suite printed no "Passed: a/b, n failed, n warnings" line:\n${output}`);
  const passedLine = verdict[0];
  const [passed, total, failed, warnings] = verdict.slice(1).map(Number) as [number, number, number, number];

  const errors: { name: string; error?: string }[] = [];
  for (const line of lines.slice(verdictIndex + 1)) {
    const entry = failedEntry.exec(line);
    if (entry) errors.push({ name: entry[1] as string });
    const error = errorLine.exec(line);
    const last = errors.at(-1);
    if (error && last && last.error === undefined) last.error = error[1] as string;
  }

  const failures = checks.filter((check) => check.status === 'FAILURE');
  const count = (status: string) => checks.filter((check) => check.status === status).length;
  const mismatch =
    count('SUCCESS') !== passed ||
    count('SUCCESS') + failures.length !== total ||
    failures.length !== failed ||
    count('WARNING') !== warnings ||
    errors.length !== failed;
  if (mismatch) {
    throw new Error(
      `the suite's check lines (${count('SUCCESS')} SUCCESS, ${failures.length} FAILURE, ${count('WARNING')} WARNING, ` +
        `${errors.length} failed entries) disagree with its "${passedLine}":\n${output}`,
    );
  }
  // `=== Failed Checks ===` lists the FAILURE checks in the order of the check lines.
  const withErrors = checks.map((check) => {
    if (check.status !== 'FAILURE') return check;
    const { name, error } = errors[failures.indexOf(check)] as { name: string; error?: string };
    return { ...check, name, ...(error === undefined ? {} : { errorMessage: error }) };
  });
  return { passedLine, passed, total, failed, warnings, checks: withErrors };
}
