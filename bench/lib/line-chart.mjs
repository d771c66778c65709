// An SVG line chart of a scale curve: axes with ticks, a legend, one polyline (with its points
// marked) per series; the x axis on a log scale when the curve asks for it (`x.log`) or its values
// span more than two decades. Drawn by the bench, no dependencies.

const colours = ['#4c72b0', '#dd8452', '#55a868', '#c44e52', '#8172b3', '#937860', '#da8bc3', '#8c8c8c'];

const escapeXml = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A tick label: integers as such, others with 3 significant digits. */
function tickLabel(value) {
  if (value === 0) return '0';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(3)));
}

/** About `wanted` round ticks (1, 2, 5 × 10^k apart) from 0 or below `low` to above `high`. */
function linearTicks(low, high, wanted = 5) {
  const span = Math.max(high - low, Number.EPSILON);
  const rough = span / wanted;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough) ?? 10 * power;
  const ticks = [];
  for (let value = Math.floor(low / step) * step; value <= high + step / 2; value += step) ticks.push(value);
  return ticks;
}

/**
 * `curve`: `{ title, x: { label, values, log? }, y: { label }, series: { name: (number|null)[] } }`,
 * one y value per x value per series, `null` where not measured (the line breaks there).
 */
export function lineChart(curve) {
  const width = 720;
  const height = 380;
  const left = 70;
  const right = 220;
  const top = 40;
  const bottom = 50;
  const xs = curve.x.values;
  const named = Object.entries(curve.series);
  const ys = named
    .flatMap(([, values]) => values)
    .filter((value) => typeof value === 'number' && Number.isFinite(value));
  if (xs.length === 0 || ys.length === 0)
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="60" font-family="sans-serif"><text x="10" y="30">${escapeXml(curve.title)}: no values</text></svg>\n`;
  const positive = xs.every((value) => value > 0);
  const logX = positive && (curve.x.log === true || Math.max(...xs) / Math.min(...xs) > 100);
  const xOf = logX ? Math.log10 : (value) => value;
  const xLow = xOf(Math.min(...xs));
  const xHigh = xOf(Math.max(...xs));
  const xSpan = Math.max(xHigh - xLow, Number.EPSILON);
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const x = (value) => left + ((xOf(value) - xLow) / xSpan) * plotWidth;
  const yTicks = linearTicks(Math.min(0, ...ys), Math.max(...ys));
  const yLow = yTicks[0];
  const yHigh = yTicks[yTicks.length - 1];
  const y = (value) => top + (1 - (value - yLow) / Math.max(yHigh - yLow, Number.EPSILON)) * plotHeight;
  const grid = [];
  for (const value of yTicks) {
    const at = y(value).toFixed(1);
    grid.push(
      `<line x1="${left}" y1="${at}" x2="${left + plotWidth}" y2="${at}" stroke="#eee"/><text x="${left - 6}" y="${(Number(at) + 4).toFixed(1)}" font-size="11" text-anchor="end">${tickLabel(value)}</text>`,
    );
  }
  for (const value of xs) {
    const at = x(value).toFixed(1);
    grid.push(
      `<line x1="${at}" y1="${top}" x2="${at}" y2="${top + plotHeight}" stroke="#eee"/><text x="${at}" y="${top + plotHeight + 16}" font-size="11" text-anchor="middle">${tickLabel(value)}</text>`,
    );
  }
  const lines = named.map(([name, values], index) => {
    const colour = colours[index % colours.length];
    // One polyline per run of measured points (a null breaks the line).
    const runs = [[]];
    values.forEach((value, at) => {
      if (typeof value === 'number' && Number.isFinite(value) && at < xs.length)
        runs[runs.length - 1].push([x(xs[at]), y(value)]);
      else if (runs[runs.length - 1].length > 0) runs.push([]);
    });
    const polylines = runs
      .filter((run) => run.length > 0)
      .map(
        (run) =>
          `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${run.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ')}"/>` +
          run
            .map(([px, py]) => `<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="3" fill="${colour}"/>`)
            .join(''),
      )
      .join('');
    const legendY = top + 10 + index * 18;
    const legendX = left + plotWidth + 16;
    return `${polylines}<rect x="${legendX}" y="${legendY - 9}" width="12" height="10" fill="${colour}"/><text x="${legendX + 18}" y="${legendY}" font-size="12">${escapeXml(name)}</text>`;
  });
  const axes = `<line x1="${left}" y1="${top + plotHeight}" x2="${left + plotWidth}" y2="${top + plotHeight}" stroke="#333"/><line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}" stroke="#333"/>`;
  const xTitle = `${escapeXml(curve.x.label)}${logX ? ' (log scale)' : ''}`;
  const middle = top + plotHeight / 2;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><text x="10" y="22" font-size="15" font-weight="bold">${escapeXml(curve.title)}</text>${grid.join('')}${axes}${lines.join('')}<text x="${left + plotWidth / 2}" y="${height - 12}" font-size="12" text-anchor="middle">${xTitle}</text><text x="16" y="${middle}" font-size="12" transform="rotate(-90 16 ${middle})" text-anchor="middle">${escapeXml(curve.y.label)}</text></svg>\n`;
}
