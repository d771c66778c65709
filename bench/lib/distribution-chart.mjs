// An SVG of how samples are distributed: one empirical CDF line per named sample set, on a log
// time axis, with the p50 and p99 of each in the legend. Drawn by the bench, no dependencies.

const colours = ['#4c72b0', '#dd8452', '#55a868', '#c44e52', '#8172b3', '#937860'];

/**
 * `sets`: `{ name: number[] }` (one unit, e.g. µs). Empty sets are left out. A sample of 0 or less
 * (a page that showed a cell before the agent had its answer) is drawn at the axis' left end: a
 * log axis has no 0, and leaving it out would draw a set of such samples as none.
 */
export function distributionChart(title, unit, sets) {
  const named = Object.entries(sets).filter(([, samples]) => samples.length > 0);
  const width = 720;
  const height = 360;
  const left = 60;
  const right = 20;
  const top = 40;
  const bottom = 50;
  const samples = named.flatMap(([, values]) => values);
  const positive = samples.filter((value) => value > 0);
  const floor = positive.length > 0 ? Math.min(...positive) : 1e-3;
  const all = samples.map((value) => (value > 0 ? value : floor));
  if (all.length === 0)
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="60"><text x="10" y="30">${title}: no samples</text></svg>\n`;
  const low = Math.log10(Math.min(...all));
  const high = Math.log10(Math.max(...all));
  const span = Math.max(high - low, 1e-9);
  const x = (value) => left + ((Math.log10(Math.max(value, 10 ** low)) - low) / span) * (width - left - right);
  const y = (fraction) => top + (1 - fraction) * (height - top - bottom);
  const ticks = [];
  for (let exponent = Math.floor(low); exponent <= Math.ceil(high); exponent++) {
    for (const factor of [1, 2, 5]) {
      const value = factor * 10 ** exponent;
      if (Math.log10(value) < low || Math.log10(value) > high) continue;
      const at = x(value).toFixed(1);
      ticks.push(
        `<line x1="${at}" y1="${top}" x2="${at}" y2="${height - bottom}" stroke="#ddd"/><text x="${at}" y="${height - bottom + 16}" font-size="11" text-anchor="middle">${value >= 1 ? value : value.toPrecision(1)}</text>`,
      );
    }
  }
  for (const fraction of [0, 0.5, 0.9, 0.99, 1]) {
    ticks.push(
      `<line x1="${left}" y1="${y(fraction).toFixed(1)}" x2="${width - right}" y2="${y(fraction).toFixed(1)}" stroke="#eee"/><text x="${left - 6}" y="${(y(fraction) + 4).toFixed(1)}" font-size="11" text-anchor="end">${fraction}</text>`,
    );
  }
  const lines = named.map(([name, samples], index) => {
    const sorted = [...samples].sort((a, b) => a - b);
    const points = sorted.map((value, rank) => `${x(value).toFixed(1)},${y((rank + 1) / sorted.length).toFixed(1)}`);
    const colour = colours[index % colours.length];
    const p = (q) => {
      const value = sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
      return value >= 100 ? String(Math.round(value)) : value.toPrecision(3);
    };
    const legendY = top + 14 + index * 16;
    return `<polyline fill="none" stroke="${colour}" stroke-width="1.6" points="${points.join(' ')}"/><rect x="${left + 10}" y="${legendY - 9}" width="10" height="10" fill="${colour}"/><text x="${left + 26}" y="${legendY}" font-size="12">${name}: p50 ${p(0.5)}, p99 ${p(0.99)} ${unit} (n=${sorted.length})</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><text x="10" y="22" font-size="15" font-weight="bold">${title}</text>${ticks.join('')}<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="#333"/><line x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}" stroke="#333"/>${lines.join('')}<text x="${(left + width - right) / 2}" y="${height - 12}" font-size="12" text-anchor="middle">${unit} (log scale)</text><text x="14" y="${(top + height - bottom) / 2}" font-size="12" transform="rotate(-90 14 ${(top + height - bottom) / 2})" text-anchor="middle">fraction of samples at or below</text></svg>\n`;
}
