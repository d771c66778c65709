import { describe, expect, it } from 'vitest';
import { parseSuiteOutput } from './parse-suite-output.js';

const esc = String.fromCharCode(27);
const gray = (text: string) => `${esc}[90m${text}${esc}[0m`;
const status = (text: string) => `${esc}[32m${text}${esc}[0m`;
const line = (id: string, state: string, description: string) =>
  `${gray('2026-12-04T03:54:47.985Z')} [${id.padEnd(48)}] ${status(state.padEnd(7))} ${description}`;

/** The scenario description the suite prints after every failed check (markdown, dimmed). */
const scenarioDescription = [
  'Test stateless MCP server architecture (SEP-2575).',
  '',
  `- ${esc}[2mserver/discover${esc}[0m: Returns supportedVersions and capabilities.`,
  `   - Rejects requests missing ${esc}[2m_meta${esc}[0m with -32602.`,
].join('\n');

/** Shaped as `conformance server --url … --scenario server-stateless` prints it (shortened). */
function suiteOutput(passedLine: string, failedEntries = 1): string {
  const failed = [
    '',
    '  - ServerRejectsUndeclaredCapability: A server MUST NOT rely on capabilities the client has not declared.',
    "    Error: Not testable: server does not list the diagnostic tool 'test_missing_capability' in tools/list",
    '',
    scenarioDescription,
  ];
  return [
    "Running client scenario 'server-stateless' against server: http://127.0.0.1:41913/mcp",
    'Checks:',
    line('sep-2575-http-server-meta-invalid-400', 'SUCCESS', 'Rejections use HTTP 400 Bad Request.'),
    line('sep-2575-http-server-meta-invalid-400', 'SUCCESS', 'Rejections use HTTP 400 Bad Request.'),
    line('sep-2575-server-rejects-undeclared-capability', 'FAILURE', 'A server MUST NOT rely on capabilities.'),
    line('sep-2575-server-sends-prompts-list-changed-on-subscription', 'SKIPPED', 'List-changed (SHOULD)'),
    line('sep-2575-server-sends-tools-list-changed-on-subscription', 'WARNING', 'List-changed (SHOULD)'),
    '',
    'Test Results:',
    passedLine,
    '',
    '=== Failed Checks ===',
    ...Array.from({ length: failedEntries }, () => failed).flat(),
  ].join('\n');
}

describe('parseSuiteOutput', () => {
  it("reads the suite's Passed line, every check line in order, and each failure's error", () => {
    const parsed = parseSuiteOutput(suiteOutput('Passed: 2/3, 1 failed, 1 warnings'));
    expect(parsed).toMatchObject({ passedLine: 'Passed: 2/3, 1 failed, 1 warnings', passed: 2, total: 3 });
    expect(parsed).toMatchObject({ failed: 1, warnings: 1 });
    expect(parsed.checks.map((check) => `${check.status} ${check.id}`)).toEqual([
      'SUCCESS sep-2575-http-server-meta-invalid-400',
      'SUCCESS sep-2575-http-server-meta-invalid-400',
      'FAILURE sep-2575-server-rejects-undeclared-capability',
      'SKIPPED sep-2575-server-sends-prompts-list-changed-on-subscription',
      'WARNING sep-2575-server-sends-tools-list-changed-on-subscription',
    ]);
    expect(parsed.checks[2]).toMatchObject({
      name: 'ServerRejectsUndeclaredCapability',
      errorMessage: "Not testable: server does not list the diagnostic tool 'test_missing_capability' in tools/list",
    });
    expect(parsed.checks[0]?.description).toBe('Rejections use HTTP 400 Bad Request.');
  });

  it('refuses an output whose check lines disagree with its Passed line', () => {
    expect(() => parseSuiteOutput(suiteOutput('Passed: 3/3, 0 failed, 1 warnings'))).toThrow(/disagree/);
    expect(() => parseSuiteOutput(suiteOutput('Passed: 2/3, 1 failed, 0 warnings'))).toThrow(/disagree/);
    expect(() => parseSuiteOutput(suiteOutput('Passed: 2/3, 1 failed, 1 warnings', 2))).toThrow(/disagree/);
  });

  it('refuses an output without a Passed line (a scenario the suite skipped, a suite that crashed)', () => {
    const skipped = "SKIPPED: scenario 'ping' is not applicable at spec version 2026-07-28";
    expect(() => parseSuiteOutput(skipped)).toThrow(/no "Passed: a\/b, n failed, n warnings" line/);
  });
});
