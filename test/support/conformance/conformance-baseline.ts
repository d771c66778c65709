import { readFileSync } from 'node:fs';
import type { ConformanceCheck } from './start-conformance-target.js';

/** One `- <scenario>:<check-id>  # <reason>` line of the baseline file. */
export interface BaselineEntry {
  readonly scenario: string;
  readonly checkId: string;
  readonly reason: string;
  readonly line: number;
}

/**
 * The baseline file (test/conformance-baseline.yml). `server` is the suite's own
 * `--expected-failures` list (checks allowed to be FAILURE or WARNING); `not-applicable` (which the
 * suite ignores) lists the checks allowed to be SKIPPED. Every entry names one check and carries its
 * reason as a trailing comment.
 */
export interface ConformanceBaseline {
  readonly expectedFailures: readonly BaselineEntry[];
  readonly notApplicable: readonly BaselineEntry[];
}

const sections = { server: 'expectedFailures', 'not-applicable': 'notApplicable' } as const;

/** Reads the baseline, strictly: anything but sections, entries with reasons and comments is an error. */
export function readConformanceBaseline(path: string): ConformanceBaseline {
  const lists: Record<'expectedFailures' | 'notApplicable', BaselineEntry[]> = {
    expectedFailures: [],
    notApplicable: [],
  };
  const seen = new Set<string>();
  let section: keyof typeof lists | undefined;
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const line = index + 1;
      if (/^\s*(#.*)?$/.test(text)) return;
      const heading = /^([a-z-]+):\s*(#.*)?$/.exec(text);
      if (heading) {
        section = sections[heading[1] as keyof typeof sections];
        if (!section) throw new Error(`${path}:${line}: unknown section ${heading[1]}`);
        return;
      }
      const entry = /^\s+-\s+([A-Za-z0-9._-]+):([A-Za-z0-9._-]+)\s+#\s*(\S.*)$/.exec(text);
      if (!entry || !section) {
        throw new Error(`${path}:${line}: expected "  - <scenario>:<check-id>  # <reason>" under a section: ${text}`);
      }
      const [, scenario, checkId, reason] = entry as unknown as [string, string, string, string];
      const key = `${scenario}:${checkId}`;
      if (seen.has(key)) throw new Error(`${path}:${line}: ${key} is listed twice`);
      seen.add(key);
      lists[section].push({ scenario, checkId, reason: reason.trim(), line });
    });
  return lists;
}

/** How one scenario's checks compare with the baseline. */
export interface ScenarioVerdict {
  readonly scenario: string;
  /** SUCCESS entries of checks.json, out of SUCCESS + FAILURE entries (the suite's own `Passed: a/b`). */
  readonly passed: number;
  readonly total: number;
  readonly warnings: number;
  readonly skipped: number;
  /** Everything that makes the scenario fail; empty when it conforms up to the baseline. */
  readonly problems: readonly string[];
  /** e.g. `server-stateless 24/28 (1 warning, 1 skipped); failing: <check ids>; warning: <check ids>`. */
  readonly summary: string;
}

const severity: Record<string, number> = { FAILURE: 3, WARNING: 2, SUCCESS: 1, SKIPPED: 0 };

/**
 * Every check outside the baseline must be SUCCESS (INFO checks only inform); a WARNING counts as
 * a failure, as the suite counts it. A check may be FAILURE/WARNING only when the baseline's
 * `server` list names it, and SKIPPED only when `not-applicable` names it; an entry whose check
 * passes now, has another status than its list allows, or is not reported at all is a problem
 * too (a stale baseline fails). A check reported more than once (the suite repeats some per
 * probe) counts with its worst status.
 */
export function judgeScenario(
  scenario: string,
  checks: readonly ConformanceCheck[],
  baseline: ConformanceBaseline,
): ScenarioVerdict {
  const worst = new Map<string, ConformanceCheck>();
  for (const check of checks) {
    if (check.status === 'INFO') continue;
    const before = worst.get(check.id);
    if (!before || (severity[check.status] ?? 3) >= (severity[before.status] ?? 3)) worst.set(check.id, check);
  }
  const expectedFailures = entriesOf(baseline.expectedFailures, scenario);
  const notApplicable = entriesOf(baseline.notApplicable, scenario);
  const problems: string[] = [];
  for (const [id, check] of worst) {
    const why = check.errorMessage ? `: ${check.errorMessage}` : '';
    if (check.status === 'SUCCESS') {
      if (expectedFailures.has(id)) problems.push(`${id} passes now: remove it from the baseline's server list`);
      if (notApplicable.has(id)) problems.push(`${id} passes now: remove it from the baseline's not-applicable list`);
    } else if (check.status === 'FAILURE' || check.status === 'WARNING') {
      if (!expectedFailures.has(id)) problems.push(`${id} ${check.status}${why}`);
    } else if (check.status === 'SKIPPED') {
      if (!notApplicable.has(id)) problems.push(`${id} SKIPPED${why} (not in the baseline's not-applicable list)`);
    } else {
      problems.push(`${id} has an unknown status ${check.status}`);
    }
  }
  for (const id of [...expectedFailures.keys(), ...notApplicable.keys()]) {
    if (!worst.has(id)) problems.push(`${id} is in the baseline but the suite did not report it (renamed?)`);
  }
  const count = (status: string) => checks.filter((check) => check.status === status).length;
  const passed = count('SUCCESS');
  const total = passed + count('FAILURE');
  const warnings = count('WARNING');
  const skipped = count('SKIPPED');
  const named = (status: string) => [...worst.values()].filter((check) => check.status === status).map((c) => c.id);
  const notes = [
    warnings > 0 ? `${warnings} warning${warnings === 1 ? '' : 's'}` : '',
    skipped > 0 ? `${skipped} skipped` : '',
  ].filter((note) => note !== '');
  const lists = [
    named('FAILURE').length > 0 ? `; failing: ${named('FAILURE').join(', ')}` : '',
    named('WARNING').length > 0 ? `; warning: ${named('WARNING').join(', ')}` : '',
  ].join('');
  const summary = `${scenario} ${passed}/${total}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}${lists}`;
  return { scenario, passed, total, warnings, skipped, problems, summary };
}

/**
 * The baseline once `tool` is there: without the `server` entries whose reason names it (the
 * checks that only need that fixture tool of the suite must then pass).
 */
export function baselineWithFixtureTool(baseline: ConformanceBaseline, tool: string): ConformanceBaseline {
  const needs = new RegExp(`\\b${tool}\\b`);
  return { ...baseline, expectedFailures: baseline.expectedFailures.filter((entry) => !needs.test(entry.reason)) };
}

function entriesOf(entries: readonly BaselineEntry[], scenario: string): Map<string, BaselineEntry> {
  return new Map(entries.filter((entry) => entry.scenario === scenario).map((entry) => [entry.checkId, entry]));
}
