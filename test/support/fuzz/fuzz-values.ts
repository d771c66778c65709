import fc from 'fast-check';

/**
 * Building blocks shared by the JSON-RPC and the runtimed fuzzers: awkward JSON values, and the
 * markers that stand for things only known when a batch is sent (unique ids, deep nesting, huge
 * number literals, paths inside the test's temp dir).
 *
 * Markers are strings starting with NUL + SOH, which no generated string contains (see
 * {@link fuzzString}); after `JSON.stringify` they appear as `"\u0000\u0001…"` and are replaced
 * textually, so a 20,000-deep array is never built as an object (our own `JSON.stringify` would
 * overflow the stack).
 */
export const markerPrefix = '\u0000\u0001';

/** The serialized (escaped) form of {@link markerPrefix} inside a JSON string. */
const escapedMarker = '\\u0000\\u0001';

/** A value nested `depth` levels deep, written into the line as text. */
export function deepMarker(depth: number, shape: 'array' | 'object'): string {
  return `${markerPrefix}deep:${shape}:${depth}`;
}

/** A number literal of many digits (`digits` long), written into the line as text. */
export function hugeLiteralMarker(digits: string): string {
  return `${markerPrefix}huge:${digits}`;
}

/** Replaces the textual markers of a serialized line by what they stand for. */
export function expandTextMarkers(serialized: string): string {
  const pattern = new RegExp(`"${escapedMarker.replace(/\\/g, '\\\\')}(deep|huge):([^"]*)"`, 'g');
  return serialized.replace(pattern, (_match, kind: string, rest: string) => {
    if (kind === 'huge') return rest;
    const [shape, depthText] = rest.split(':');
    const depth = Number(depthText);
    return shape === 'array'
      ? `${'['.repeat(depth)}${']'.repeat(depth)}`
      : `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`;
  });
}

/**
 * Makes a generated string harmless as a path: the fuzzed processes run as whatever user runs the
 * tests (possibly root), so no generated string may name an absolute path or climb out of the
 * temp working directory. Relative paths and `~` resolve inside the test's temp cwd and HOME.
 */
export function harmless(text: string): string {
  let safe = text.replace(/\.\./g, '._').replaceAll(markerPrefix, '\u0000_');
  if (/^[/\\]/.test(safe)) safe = `x${safe}`;
  return safe;
}

/** Strings of every flavour: ASCII, full unicode (astral, combining, lone surrogates), binary-ish. */
export const fuzzString: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ maxLength: 24 }),
    fc.string({ unit: 'grapheme', maxLength: 16 }),
    fc.string({ unit: 'binary', maxLength: 16 }),
    fc.constantFrom(
      '',
      ' ',
      '\u2028',
      '\uFEFF',
      '\ud800',
      '😀',
      'é',
      '\u0000',
      '\r\n',
      '%s',
      '__proto__',
      'constructor',
    ),
  )
  .map(harmless);

/** A long string (1 KB to 200 KB), ASCII or multi-byte. */
export const longString: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 1_000, max: 200_000 }), fc.constantFrom('x', 'λ', '😀', '\\"', 'a\nb'))
  .map(([length, unit]) => unit.repeat(Math.ceil(length / unit.length)));

/** Numbers at the edges: zero, fractions, the largest and smallest doubles, beyond 2^53. */
export const edgeNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, 1, -1, 0.5, 1e308, -1e308, 5e-324, 2 ** 53 + 2, -(2 ** 63), 4294967296),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Any awkward JSON value: scalars, edge numbers, odd strings, long strings, deep nesting, small trees. */
export const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': null }), weight: 4 },
  { arbitrary: edgeNumber, weight: 3 },
  { arbitrary: fuzzString, weight: 4 },
  { arbitrary: longString, weight: 1 },
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 50, max: 20_000 }), fc.constantFrom('array' as const, 'object' as const))
      .map(([depth, shape]) => deepMarker(depth, shape)),
    weight: 1,
  },
  {
    arbitrary: fc.stringMatching(/^[1-9][0-9]{20,80}$/).map(hugeLiteralMarker),
    weight: 1,
  },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map(harmlessTree), weight: 2 },
);

/** Applies {@link harmless} to every string (keys included) of a JSON tree. */
export function harmlessTree(value: unknown): unknown {
  if (typeof value === 'string') return harmless(value);
  if (Array.isArray(value)) return value.map(harmlessTree);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [harmless(key), harmlessTree(item)]));
  }
  return value;
}

/** Where to cut a byte stream into writes: fractions in [0, 1). */
export const splitPoints: fc.Arbitrary<number[]> = fc.array(
  fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  {
    maxLength: 6,
  },
);

/** Cuts `bytes` at the given fractions of its length (duplicates and empty pieces dropped). */
export function splitBytes(bytes: Buffer, points: readonly number[]): Buffer[] {
  const cuts = [...new Set(points.map((point) => Math.floor(point * bytes.length)))]
    .filter((cut) => cut > 0 && cut < bytes.length)
    .sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    pieces.push(bytes.subarray(start, cut));
    start = cut;
  }
  return pieces.filter((piece) => piece.length > 0);
}
