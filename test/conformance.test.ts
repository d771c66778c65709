import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  baselineWithFixtureTool,
  type ConformanceBaseline,
  judgeScenario,
  readConformanceBaseline,
  type ScenarioVerdict,
} from './support/conformance/conformance-baseline.js';
import {
  type ConformanceTarget,
  type SuiteRun,
  startConformanceTarget,
  stdioHttpBridge,
} from './support/conformance/start-conformance-target.js';
import { processesWithHome, readmeCommands, shippedBins, waitFor } from './support/index.js';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12) run as an outsider
 * runs it, and as the README's "MCP conformance" section says: the shipped nteract-mcp from a
 * fresh HOME with default options behind the loopback Streamable-HTTP -> stdio bridge (the suite
 * speaks HTTP only), then each `conformance server --url <url> --scenario <name>` the README states,
 * word for word, with the suite's defaults (on Node 20 with the shim in node20-shim, as the README
 * says). The figure is the suite's own `Passed:` line, which must be what the README says it
 * prints; every check outside test/conformance-baseline.yml must pass, and every entry there must
 * fail for the reason it gives.
 */
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const baselinePath = fileURLToPath(new URL('./conformance-baseline.yml', import.meta.url));
const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
const stated = readmeCommands(readme).conformance;

/** The scenarios the README must state a figure for: the 2026-07-28 one and the legacy lifecycle. */
const scenarios = ['server-stateless', 'server-initialize', 'ping', 'tools-list'];

/** What a `server` entry may be about: the bridge, or a fixture tool of the suite. */
const allowedReason = /fixture tool|the bridge/;

/** How the suite says a check could not run: the tool it calls is not in `tools/list`. */
const notTestable = /^Not testable: server does not list the diagnostic tool '(test_\w+)'/;

/**
 * The suite's fixture tool `test_missing_capability`, added to nteract's child as a third-party
 * plugin module is (NTERACT_MCP_PLUGINS): the checks that call it test nteract's own -32021 rule.
 */
const fixtureTool = 'test_missing_capability';
const fixturePlugin = fileURLToPath(new URL('./support/conformance/fixture-tools-plugin.mjs', import.meta.url));

function scenarioOf(args: readonly string[]): string {
  return args[args.indexOf('--scenario') + 1] ?? '';
}

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

/** Why `run` does not match `verdict`'s baseline, the README and the suite's exit code (empty: it does). */
function mismatches(run: SuiteRun, verdict: ScenarioVerdict, baseline: ConformanceBaseline): string[] {
  const found = [...verdict.problems];
  if (run.checks.length === 0) found.push('the suite reported no check');
  if (run.exitCode !== (run.failed > 0 ? 1 : 0)) found.push(`exit code ${run.exitCode} with ${run.failed} failed`);
  for (const check of run.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
    if (!readme.includes(`\`${check.id}\``)) found.push(`the README does not name ${check.id}`);
    if (check.status !== 'FAILURE') continue;
    const tool = notTestable.exec(check.errorMessage ?? '')?.[1];
    const entry = baseline.expectedFailures.find((e) => e.scenario === verdict.scenario && e.checkId === check.id);
    if (!tool || !entry?.reason.includes(tool)) {
      found.push(`${check.id} failed otherwise than its baseline reason says: ${check.errorMessage}`);
    }
  }
  return found;
}

describe('the MCP conformance suite, run as the README says and an outsider runs it, against the shipped nteract-mcp', () => {
  let baseline: ConformanceBaseline;
  let target: ConformanceTarget;
  const verdicts: ScenarioVerdict[] = [];

  beforeAll(async () => {
    baseline = readConformanceBaseline(baselinePath);
    target = await startConformanceTarget();
  }, 60_000);

  afterAll(async () => {
    await target?.stop();
    if (verdicts.length > 0) console.log(`conformance pass counts:\n  ${verdicts.map((v) => v.summary).join('\n  ')}`);
  }, 60_000);

  it('the README runs the shipped nteract-mcp behind the bridge from a fresh HOME, and the suite with its defaults', () => {
    const bridge = `node ${relative(repoRoot, stdioHttpBridge)} --port 0 -- node ${relative(repoRoot, shippedBins.proxy)}`;
    expect(stated.setup).toContain(`HOME=$(mktemp -d) ${bridge} &`);
    expect(stated.setup).toContain('npx conformance server --url <url> --scenario server-stateless');
    expect(stated.runs.map((run) => scenarioOf(run.args))).toEqual(scenarios);
    for (const run of stated.runs)
      expect(run.args, run.line).toEqual(['server', '--url', '<url>', '--scenario', scenarioOf(run.args)]);
  });

  it('the baseline names only checks of the scenarios run here, each with an admissible reason', () => {
    for (const entry of [...baseline.expectedFailures, ...baseline.notApplicable]) {
      expect(scenarios, `line ${entry.line}: ${entry.scenario} is not run by this test`).toContain(entry.scenario);
    }
    for (const entry of baseline.expectedFailures) {
      expect(entry.reason, `line ${entry.line}: ${entry.checkId}`).toMatch(allowedReason);
    }
  });

  for (const run of stated.runs) {
    it(`\`${run.line}\` prints \`${run.prints}\`; every check passes but those the baseline names, each failing for its reason`, {
      timeout: 240_000,
    }, async () => {
      const result = await target.runConformance(run.args);
      const verdict = judgeScenario(scenarioOf(run.args), result.checks, baseline);
      verdicts.push(verdict);
      console.log(`conformance: ${verdict.summary}`);
      expect(mismatches(result, verdict, baseline), `${result.output}\n${target.stderr()}`).toEqual([]);
      expect(result.passedLine, result.command).toBe(run.prints);
    });
  }

  it(`with the suite's fixture tool ${fixtureTool} added as a plugin, the checks that call it pass (nteract's own -32021 rule)`, {
    timeout: 240_000,
  }, async () => {
    const run = stated.runs.find((entry) => scenarioOf(entry.args) === 'server-stateless');
    const withFixture = baselineWithFixtureTool(baseline, fixtureTool);
    const needsFixture = baseline.expectedFailures.filter((entry) => !withFixture.expectedFailures.includes(entry));
    expect(needsFixture.map((entry) => entry.checkId)).toEqual([
      'sep-2575-server-rejects-undeclared-capability',
      'sep-2575-missing-capability-http-400',
    ]);
    const fixtureTarget = await startConformanceTarget({ env: { NTERACT_MCP_PLUGINS: fixturePlugin } });
    try {
      const result = await fixtureTarget.runConformance(run?.args ?? []);
      const verdict = judgeScenario('server-stateless', result.checks, withFixture);
      console.log(`conformance with ${fixtureTool} added: ${verdict.summary}`);
      expect(verdict.problems, `${result.output}\n${fixtureTarget.stderr()}`).toEqual([]);
      for (const entry of needsFixture) {
        expect(result.checks.find((check) => check.id === entry.checkId)?.status, entry.checkId).toBe('SUCCESS');
      }
    } finally {
      await fixtureTarget.stop();
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
