import { runArchiveRejoinExample } from './run-archive-rejoin-example.js';

const report = await runArchiveRejoinExample();
const expected = {
  connectedFile: 'report.ipynb',
  reportedTarget: 'archive:report.ipynb',
  cellCreated: true,
  rejoined: 'published',
  rejoinedFile: 'report.ipynb',
  vanished: 'evicted',
};
const problems = Object.entries(expected).filter(([key, value]) => report[key as keyof typeof report] !== value);
process.stderr.write(`${JSON.stringify(report, null, 2)}\n`);
if (problems.length > 0) {
  process.stderr.write(`example check failed: ${problems.map(([key]) => key).join(', ')}\n`);
  process.exitCode = 1;
} else {
  process.stderr.write('example check passed\n');
}
