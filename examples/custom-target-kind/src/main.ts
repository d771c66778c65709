import { runMemoryNotebookExample } from './run-memory-notebook-example.js';

const report = await runMemoryNotebookExample();
const expected = {
  reportedTarget: 'memory:scratch',
  cellCreated: true,
  peerSees: JSON.stringify(['# notes kept in memory']),
  runAnswer: 'refused',
  afterRestart: JSON.stringify({
    recoveredBy: 'acme.memory.rejoin',
    origin: 'rejoin',
    sources: ['# notes kept in memory'],
  }),
};
const seen = {
  ...report,
  peerSees: JSON.stringify(report.peerSees),
  afterRestart: JSON.stringify(report.afterRestart),
};
const problems = Object.entries(expected).filter(([key, value]) => seen[key as keyof typeof seen] !== value);
process.stderr.write(`${JSON.stringify(report, null, 2)}\n`);
if (problems.length > 0) {
  process.stderr.write(`example check failed: ${problems.map(([key]) => key).join(', ')}\n`);
  process.exitCode = 1;
} else {
  process.stderr.write('example check passed\n');
}
