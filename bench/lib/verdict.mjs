// A judged figure of a benchmark: its value beside its target, and whether it meets it. Every
// benchmark returns its judged figures as `verdicts`; `npm run bench` prints them all as one ✓/✗
// table at its end, and bench/RESULTS.md opens with the same table.

/** Whether `value` stands in `relation` to `bound`. */
const compare = {
  '<=': (value, bound) => value <= bound,
  '>=': (value, bound) => value >= bound,
  '<': (value, bound) => value < bound,
  '>': (value, bound) => value > bound,
  '=': (value, bound) => value === bound,
};

/**
 * `target`: a comparison and a bound, `<= 1.2`, `>= 0.9` or `= 1`. A value that is not a finite
 * number (a figure that could not be read) never meets its target.
 */
export function verdict(figure, value, unit, target) {
  const match = /^\s*(<=|>=|<|>|=)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(target);
  if (!match) throw new Error(`a target is a comparison and a number, not ${JSON.stringify(target)}`);
  const met = typeof value === 'number' && Number.isFinite(value) && compare[match[1]](value, Number(match[2]));
  return { figure, value, unit, target, met };
}

/** A figure for a table: three significant digits at most, whole numbers as they are. */
export function formatFigure(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** The ✓/✗ table of `reports`' verdicts, as Markdown rows (benchmark, figure, value, target, ✓/✗). */
export function verdictTable(reports) {
  const rows = ['| benchmark | figure | value | target | |', '| --- | --- | --- | --- | --- |'];
  for (const report of reports) {
    for (const v of report.verdicts ?? []) {
      rows.push(
        `| ${report.name} | ${v.figure} | ${formatFigure(v.value)} ${v.unit} | ${v.target} ${v.unit} | ${v.met ? '✓' : '✗'} |`,
      );
    }
  }
  return rows;
}
