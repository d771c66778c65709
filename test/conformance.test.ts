import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConformanceBaseline,
  judgeScenario,
  readConformanceBaseline,
  type ScenarioVerdict,
} from './support/conformance/conformance-baseline.js';
import { type ConformanceTarget, startConformanceTarget } from './support/conformance/start-conformance-target.js';
import { processesWithHome, waitFor } from './support/index.js';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12, run on this Node
 * with the shim in test/support/conformance/node20-shim) against the shipped nteract-mcp as a
 * user starts it (fresh HOME, nothing pre-started, default options), through the loopback
 * Streamable-HTTP -> stdio bridge (the suite speaks HTTP only). Each scenario must pass every
 * check except those test/conformance-baseline.yml names with a reason, and no baseline entry may
 * pass (see judgeScenario for WARNING and SKIPPED).
 */
const baselinePath = fileURLToPath(new URL('./conformance-baseline.yml', import.meta.url));
/** The README, whose conformance figures the test checks against what it measures. */
const readmePath = fileURLToPath(new URL('../README.md', import.meta.url));

/**
 * server-stateless is 2026-07-28 only; the other three are the legacy (2025-11-25) lifecycle.
 * `atLeast`: the SUCCESS count the scenario must reach (server-stateless: more than the v2 SDK's
 * reference server, 22 of 28).
 */
const scenarios = [
  { scenario: 'server-stateless', specVersion: '2026-07-28', atLeast: 26 },
  { scenario: 'server-initialize', specVersion: '2025-11-25', atLeast: 1 },
  { scenario: 'ping', specVersion: '2025-11-25', atLeast: 1 },
  { scenario: 'tools-list', specVersion: '2025-11-25', atLeast: 1 },
] as const;

/** What a `server` entry may be about: the bridge, or a fixture tool of the suite. */
const allowedReason = /fixture tool|the bridge/;

/**
 * The suite's fixture tool `test_missing_capability`, added to nteract's child as a third-party
 * plugin module is (NTERACT_MCP_PLUGINS): the checks that call it test nteract's own -32021 rule.
 */
const fixturePlugin = fileURLToPath(new URL('./support/conformance/fixture-tools-plugin.mjs', import.meta.url));

/** The eras the servers' children opened (their `protocol era opened` log lines). */
function erasOpened(stderr: string): Set<string> {
  const eras = new Set<string>();
  for (const line of stderr.split('\n')) {
    if (!line.includes('protocol era opened')) continue;
    const fields = JSON.parse(line.slice(line.indexOf('{'))) as { era: string; protocolVersion: string };
    eras.add(`${fields.era} ${fields.protocolVersion}`);
  }
  return eras;
}

describe('the MCP conformance suite against the shipped nteract-mcp (through the stdio<->HTTP bridge)', () => {
  let baseline: ConformanceBaseline;
  let target: ConformanceTarget;
  const verdicts: ScenarioVerdict[] = [];

  beforeAll(async () => {
    baseline = readConformanceBaseline(baselinePath);
    target = await startConformanceTarget({ env: { NTERACT_MCP_PLUGINS: fixturePlugin } });
  }, 60_000);

  afterAll(async () => {
    await target?.stop();
    if (verdicts.length > 0) console.log(`conformance pass counts:\n  ${verdicts.map((v) => v.summary).join('\n  ')}`);
  }, 60_000);

  it('the baseline names only checks of the scenarios run here, each with an admissible reason', () => {
    const run = new Set<string>(scenarios.map((entry) => entry.scenario));
    for (const entry of [...baseline.expectedFailures, ...baseline.notApplicable]) {
      expect(run.has(entry.scenario), `line ${entry.line}: ${entry.scenario} is not run by this test`).toBe(true);
    }
    for (const entry of baseline.expectedFailures) {
      expect(entry.reason, `line ${entry.line}: ${entry.checkId}`).toMatch(allowedReason);
    }
  });

  for (const { scenario, specVersion, atLeast } of scenarios) {
    it(`${scenario} (${specVersion}): every check passes but those in the baseline`, { timeout: 240_000 }, async () => {
      const run = await target.runScenario(scenario, { specVersion, expectedFailures: baselinePath });
      const verdict = judgeScenario(scenario, run.checks, baseline);
      verdicts.push(verdict);
      console.log(`conformance: ${verdict.summary}`);
      expect(run.checks.length, run.output).toBeGreaterThan(0);
      expect(verdict.problems, `${verdict.summary}\n${run.output}\n${target.stderr()}`).toEqual([]);
      expect(verdict.passed, verdict.summary).toBeGreaterThanOrEqual(atLeast);
      if (scenario === 'server-stateless') {
        // The README's figure with the fixture tool added is this very count.
        const stated = /-32021\s+rule\):\s+(\d+)\/(\d+)/.exec(readFileSync(readmePath, 'utf8'));
        expect(`${verdict.passed}/${verdict.total}`).toBe(`${stated?.[1]}/${stated?.[2]}`);
      }
      // The suite's own verdict on the same baseline (its --expected-failures).
      expect(run.exitCode, run.output).toBe(0);
    });
  }

  it('run as an outsider runs it (no plugin, default options), server-stateless scores the README figure, and only checks that need a fixture tool of the suite fail', {
    timeout: 240_000,
  }, async () => {
    const readme = readFileSync(readmePath, 'utf8');
    const stated = /`server-stateless` (\d+)\/(\d+) run as an outsider runs it/.exec(readme);
    expect(stated, 'the README states the outsider figure').not.toBeNull();
    const outsider = await startConformanceTarget();
    try {
      const run = await outsider.runScenario('server-stateless', { specVersion: '2026-07-28' });
      const verdict = judgeScenario('server-stateless', run.checks, { expectedFailures: [], notApplicable: [] });
      const failing = run.checks.filter((check) => check.status === 'FAILURE');
      console.log(
        `conformance as an outsider runs it: ${verdict.summary}; failing: ${failing.map((check) => check.id).join(', ')}`,
      );
      expect(`${verdict.passed}/${verdict.total}`).toBe(`${stated?.[1]}/${stated?.[2]}`);
      for (const check of failing) {
        expect(check.errorMessage ?? '', check.id).toMatch(
          /^Not testable: server does not list the diagnostic tool '(test_\w+)'/,
        );
        expect(readme, `the README names ${check.id}`).toContain(check.id);
      }
    } finally {
      await outsider.stop();
    }
  });

  it('the shared child served the 2026-07-28 requests in the native era', { timeout: 30_000 }, async () => {
    // (A legacy session's proxy may answer from its cache and stop its child before that child logs an era.)
    await waitFor('the shared child to log its era', () => erasOpened(target.stderr()).has('native 2026-07-28'), {
      timeoutMs: 20_000,
    });
    expect([...erasOpened(target.stderr())].filter((era) => era.startsWith('native'))).toEqual(['native 2026-07-28']);
  });

  it('stops the bridge, the servers behind it, the daemon they started, and removes its temp dirs', {
    timeout: 90_000,
  }, async () => {
    const { home, root } = target.environment.dirs;
    const stopped = await target.stop();
    expect(stopped.bridgeExit, target.stderr()).toBe('code 0');
    expect(stopped.leftByBridge, 'processes the bridge left running').toEqual([]);
    expect(processesWithHome(home)).toEqual([]);
    expect(existsSync(root)).toBe(false);
  });
});
