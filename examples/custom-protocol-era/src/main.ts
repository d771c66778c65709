import { runDraftEraExample } from './run-draft-era-example.js';

const report = await runDraftEraExample();
const expected: Record<string, unknown> = {
  handshake: {
    protocolVersion: 'DRAFT-2027-01',
    serverName: 'nteract',
    capabilities: { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true } },
  },
  opened: { era: 'acme.draft', protocolVersion: 'DRAFT-2027-01' },
  toolAnswered: true,
  refused: { taskCall: -32602, tasksList: -32601, unknownResource: -32602, secondInitialize: -32600 },
  otherVersion: { code: -32602, data: { supported: ['DRAFT-2027-01'], requested: '2025-11-25' } },
};
const problems = Object.entries(expected).filter(
  ([key, value]) => JSON.stringify(report[key as keyof typeof report]) !== JSON.stringify(value),
);
process.stderr.write(`${JSON.stringify(report, null, 2)}\n`);
if (problems.length > 0) {
  process.stderr.write(`example check failed: ${problems.map(([key]) => key).join(', ')}\n`);
  process.exitCode = 1;
} else {
  process.stderr.write('example check passed\n');
}
