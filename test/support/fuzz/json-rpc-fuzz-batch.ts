import fc from 'fast-check';
import {
  expandTextMarkers,
  fuzzString,
  harmlessTree,
  hugeLiteralMarker,
  markerPrefix,
  splitBytes,
  splitPoints,
  weirdValue,
} from './fuzz-values.js';

/**
 * Batches of JSON-RPC lines for fuzzing an MCP stdio server: a seed corpus of real messages
 * (initialize, tools/list, tools/call of every tool with valid arguments, notifications, a client
 * response), structural and textual mutations of them, random JSON, text and bytes, and the
 * points at which the batch's bytes are split across writes.
 *
 * Request ids are templates (an id kind plus a slot), made concrete per batch from a number unique
 * to the batch: ids stay unique across batches (so a late reply is attributed to its own batch)
 * while two elements of one batch with the same slot collide on purpose, with the same type
 * (a duplicate id) or another (7 and "7").
 */

export const idKinds = [
  'int',
  'int-as-string',
  'negative',
  'fraction',
  'huge',
  'huge-literal',
  'unicode',
  'long',
] as const;

export type IdKind = (typeof idKinds)[number];

export interface IdTemplate {
  readonly kind: IdKind;
  readonly slot: number;
  /** Length of the tail of `long` ids. */
  readonly size: number;
}

/** Where an id template sits in a message tree: `{ [idMarkerKey]: template }`. */
export const idMarkerKey = `${markerPrefix}id`;

/** Placeholders for values the server handed out earlier (cell, execution and notebook ids). */
export type KnownKind = 'cell' | 'execution' | 'notebook';

export function knownMarker(kind: KnownKind, slot: number): string {
  return `${markerPrefix}known:${kind}:${slot}`;
}

export type StructuralMutation =
  | { readonly op: 'drop'; readonly pick: number }
  | { readonly op: 'replace'; readonly pick: number; readonly value: unknown }
  | { readonly op: 'params-array'; readonly wrap: boolean }
  | { readonly op: 'id'; readonly id: unknown }
  | { readonly op: 'extra-member'; readonly key: string; readonly value: unknown }
  | { readonly op: 'jsonrpc'; readonly value: unknown }
  | { readonly op: 'method'; readonly value: unknown }
  | { readonly op: 'batch'; readonly copies: number };

export type TextMutation =
  | { readonly op: 'none' }
  | { readonly op: 'truncate'; readonly at: number }
  | { readonly op: 'insert'; readonly at: number; readonly text: string }
  | { readonly op: 'delete'; readonly at: number; readonly count: number }
  | { readonly op: 'bom' }
  | { readonly op: 'whitespace'; readonly text: string }
  | { readonly op: 'invalid-utf8'; readonly at: number; readonly byte: number };

export type JsonRpcFuzzElement =
  | {
      readonly kind: 'message';
      readonly seed: string;
      readonly value: unknown;
      readonly text: TextMutation;
      readonly crlf: boolean;
    }
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  /** The previous element once more (a duplicate request id in flight). */
  | { readonly kind: 'repeat' };

export interface JsonRpcFuzzBatch {
  readonly elements: readonly JsonRpcFuzzElement[];
  readonly split: readonly number[];
}

/** What a batch needs from the run to become bytes. */
export interface JsonRpcMaterializeContext {
  /** Unique to the batch, > 0. */
  readonly base: number;
  readonly known: Readonly<Record<KnownKind, readonly string[]>>;
}

const idKindWeights: Readonly<Record<IdKind, number>> = {
  int: 6,
  'int-as-string': 4,
  negative: 1,
  fraction: 1,
  huge: 1,
  'huge-literal': 1,
  unicode: 1,
  long: 1,
};

export const idTemplate: fc.Arbitrary<IdTemplate> = fc.record({
  kind: fc.oneof(...idKinds.map((kind) => ({ arbitrary: fc.constant(kind), weight: idKindWeights[kind] }))),
  slot: fc.integer({ min: 0, max: 3 }),
  size: fc.integer({ min: 1, max: 20_000 }),
});

const idMarker = (template: IdTemplate): Record<string, IdTemplate> => ({ [idMarkerKey]: template });

/** Ids JSON-RPC does not allow for a request. */
const invalidId = fc.constantFrom<unknown>(null, true, false, {}, [], { n: 1 }, [7]);

const known = (kind: KnownKind) => fc.integer({ min: 0, max: 5 }).map((slot) => knownMarker(kind, slot));

const cellSource = fc.oneof(fc.constantFrom('x = 1', 'print("hi")', '# title', '1 + 1', ''), fuzzString);

/** `arguments` of every tool, valid for its schema. */
const toolArguments: Readonly<Record<string, fc.Arbitrary<Record<string, unknown>>>> = {
  list_active_notebooks: fc.constant({}),
  connect_notebook: fc.oneof(
    fc.integer({ min: 0, max: 9 }).map((n) => ({ path: `fuzz-${n}.ipynb` })),
    known('notebook').map((notebook_id) => ({ notebook_id })),
  ),
  create_notebook: fc.constantFrom({}, { ephemeral: false }, { runtime: 'python' }, { ephemeral: true }),
  save_notebook: fc.oneof(
    fc.constant({}),
    fc.integer({ min: 0, max: 9 }).map((n) => ({ path: `saved-${n}.ipynb` })),
  ),
  disconnect_notebook: fc.oneof(
    fc.constant({}),
    known('notebook').map((notebook_id) => ({ notebook_id })),
  ),
  session_status: fc.constant({}),
  get_cell: fc.record({ cell_id: known('cell'), images: fc.boolean() }, { requiredKeys: ['cell_id'] }),
  get_all_cells: fc.constantFrom({}, { format: 'json' }, { format: 'rich' }, { format: 'summary', start: 0, count: 3 }),
  create_cell: fc.record(
    {
      source: cellSource,
      cell_type: fc.constantFrom('code', 'markdown', 'raw'),
      index: fc.integer({ min: 0, max: 3 }),
      and_run: fc.boolean(),
      timeout_secs: fc.constantFrom(1, 5),
    },
    { requiredKeys: [] },
  ),
  set_cell: fc.record({ cell_id: known('cell'), source: cellSource }, { requiredKeys: ['cell_id'] }),
  delete_cell: fc.record({ cell_id: known('cell') }),
  move_cell: fc.record({ cell_id: known('cell'), after_cell_id: fc.oneof(known('cell'), fc.constant(null)) }),
  execute_cell: fc.record(
    { cell_id: known('cell'), timeout_secs: fc.constantFrom(1, 5) },
    { requiredKeys: ['cell_id'] },
  ),
  run_all_cells: fc.constantFrom({ wait: false }, { timeout_secs: 5 }),
  get_results: fc.record({ execution_id: known('execution') }),
  interrupt_kernel: fc.constant({}),
  restart_kernel: fc.constant({}),
};

/**
 * Weights of the tools in the seed corpus. The proxy's `reconnect` tool is left out: each call
 * restarts the child, and a restart answers every request the old child left unanswered
 * ("outcome unknown"), which would hide exactly the missing replies the fuzz looks for.
 */
const toolWeights: Readonly<Record<string, number>> = { restart_kernel: 1 };

const request = (method: string, params: fc.Arbitrary<unknown> | undefined) =>
  (params ?? fc.constant(undefined)).chain((value) =>
    idTemplate.map((id) => ({
      jsonrpc: '2.0',
      id: idMarker(id),
      method,
      ...(value === undefined ? {} : { params: value }),
    })),
  );

const notification = (method: string, params: fc.Arbitrary<unknown> | undefined) =>
  (params ?? fc.constant(undefined)).map((value) => ({
    jsonrpc: '2.0',
    method,
    ...(value === undefined ? {} : { params: value }),
  }));

/** The seed corpus: real messages an MCP client sends, each with a name for the reports. */
export const seedMessages: readonly {
  readonly name: string;
  readonly weight: number;
  readonly arbitrary: fc.Arbitrary<unknown>;
}[] = [
  {
    name: 'initialize',
    weight: 2,
    arbitrary: request(
      'initialize',
      fc.record({
        protocolVersion: fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '2099-01-01'),
        capabilities: fc.constantFrom({}, { roots: { listChanged: true } }),
        clientInfo: fc.constant({ name: 'fuzz', version: '1.0.0' }),
      }),
    ),
  },
  { name: 'ping', weight: 2, arbitrary: request('ping', fc.constantFrom(undefined, {})) },
  { name: 'tools/list', weight: 3, arbitrary: request('tools/list', fc.constantFrom(undefined, {}, { cursor: 'c' })) },
  { name: 'resources/list', weight: 1, arbitrary: request('resources/list', fc.constant(undefined)) },
  { name: 'resources/templates/list', weight: 1, arbitrary: request('resources/templates/list', fc.constant({})) },
  { name: 'prompts/list', weight: 1, arbitrary: request('prompts/list', fc.constant({})) },
  { name: 'logging/setLevel', weight: 1, arbitrary: request('logging/setLevel', fc.constant({ level: 'info' })) },
  ...Object.entries(toolArguments).map(([name, args]) => ({
    name: `tools/call ${name}`,
    weight: toolWeights[name] ?? 3,
    arbitrary: request(
      'tools/call',
      args.map((value) => ({ name, arguments: value })),
    ),
  })),
  { name: 'notifications/initialized', weight: 1, arbitrary: notification('notifications/initialized', undefined) },
  {
    name: 'notifications/cancelled',
    weight: 2,
    arbitrary: notification(
      'notifications/cancelled',
      idTemplate.map((id) => ({ requestId: idMarker(id), reason: 'fuzz' })),
    ),
  },
  {
    name: 'notifications/progress',
    weight: 1,
    arbitrary: notification('notifications/progress', fc.constant({ progressToken: 't', progress: 1 })),
  },
  {
    name: 'notifications/roots/list_changed',
    weight: 1,
    arbitrary: notification('notifications/roots/list_changed', undefined),
  },
  {
    name: 'client response',
    weight: 1,
    arbitrary: idTemplate.map((id) => ({ jsonrpc: '2.0', id: idMarker(id), result: {} })),
  },
];

const seed: fc.Arbitrary<{ name: string; value: unknown }> = fc.oneof(
  ...seedMessages.map((entry) => ({
    weight: entry.weight,
    arbitrary: entry.arbitrary.map((value) => ({ name: entry.name, value })),
  })),
);

export const structuralMutation: fc.Arbitrary<StructuralMutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('drop' as const), pick: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('replace' as const), pick: fc.nat(), value: weirdValue }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('params-array' as const), wrap: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('id' as const),
      id: fc.oneof(idTemplate.map(idMarker), invalidId, weirdValue),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('extra-member' as const),
      key: fc.oneof(fc.constantFrom('extra', '_meta', 'result', 'error', 'params2'), fuzzString),
      value: weirdValue,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('jsonrpc' as const),
      value: fc.constantFrom<unknown>('1.0', '2', 2, 2.0, '2.0 ', null, undefined),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('method' as const),
      value: fc.oneof(
        fc.constantFrom<unknown>('tools/call', 'tools/list', 'initialize', 'ping', 'no/such', '', 7, null, undefined),
        fuzzString,
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('batch' as const), copies: fc.integer({ min: 0, max: 3 }) }) },
);

export const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('insert' as const),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
      text: fc.oneof(fc.constantFrom('"', ',', '}', '{', ']', '\\', ':', 'null', '\t', '\r', '\u0000'), fuzzString),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('delete' as const),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
      count: fc.integer({ min: 1, max: 8 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'bom' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('whitespace' as const), text: fc.constantFrom(' ', '\t', ' \t ', '\r') }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('invalid-utf8' as const),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
      byte: fc.constantFrom(0xff, 0xc0, 0x80, 0xed),
    }),
  },
);

const messageElement: fc.Arbitrary<JsonRpcFuzzElement> = fc
  .record({
    seed,
    mutations: fc.oneof(
      { weight: 4, arbitrary: fc.constant([] as StructuralMutation[]) },
      { weight: 6, arbitrary: fc.array(structuralMutation, { minLength: 1, maxLength: 3 }) },
    ),
    text: fc.oneof(
      { weight: 8, arbitrary: fc.constant({ op: 'none' as const }) },
      { weight: 2, arbitrary: textMutation },
    ),
    crlf: fc.boolean(),
  })
  .map(({ seed: picked, mutations, text, crlf }) => ({
    kind: 'message' as const,
    seed: picked.name,
    value: mutations.reduce(applyMutation, picked.value),
    text,
    crlf,
  }));

export const jsonRpcFuzzElement: fc.Arbitrary<JsonRpcFuzzElement> = fc.oneof(
  { weight: 14, arbitrary: messageElement },
  {
    weight: 2,
    arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => ({ kind: 'json' as const, value: harmlessTree(value) })),
  },
  { weight: 1, arbitrary: fuzzString.map((text) => ({ kind: 'text' as const, text })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: 'bytes' as const, bytes })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'repeat' as const }) },
);

export const jsonRpcFuzzBatch: fc.Arbitrary<JsonRpcFuzzBatch> = fc.record({
  elements: fc.array(jsonRpcFuzzElement, { minLength: 1, maxLength: 8 }),
  split: splitPoints,
});

/** Every path (as key lists) inside a message tree, markers not entered. */
function pathsOf(value: unknown, prefix: readonly (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object' || isMarker(value)) return [];
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value);
  return entries.flatMap(([key, item]) => [[...prefix, key], ...pathsOf(item, [...prefix, key])]);
}

function isMarker(value: object): boolean {
  return Object.hasOwn(value, idMarkerKey);
}

function cloneTree(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneTree);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cloneTree(item)]));
}

function setAt(root: unknown, path: readonly (string | number)[], value: unknown, remove: boolean): unknown {
  const copy = cloneTree(root);
  let node = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (remove) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = value;
  return copy;
}

/** One structural mutation of a message tree (pure). */
export function applyMutation(message: unknown, mutation: StructuralMutation): unknown {
  const object = message !== null && typeof message === 'object' && !Array.isArray(message);
  const record = object ? (message as Record<string, unknown>) : {};
  switch (mutation.op) {
    case 'drop':
    case 'replace': {
      const paths = pathsOf(message);
      if (paths.length === 0) return mutation.op === 'replace' ? mutation.value : message;
      const path = paths[mutation.pick % paths.length] as (string | number)[];
      return setAt(message, path, mutation.op === 'replace' ? mutation.value : undefined, mutation.op === 'drop');
    }
    case 'params-array': {
      if (!object) return message;
      const params = record.params;
      const list =
        params !== null && typeof params === 'object' && !Array.isArray(params) && !mutation.wrap
          ? Object.values(params)
          : [params ?? {}];
      return { ...record, params: list };
    }
    case 'id':
      return object ? { ...record, id: mutation.id } : message;
    case 'extra-member':
      return object ? { ...record, [mutation.key]: mutation.value } : message;
    case 'jsonrpc':
      return object ? withMember(record, 'jsonrpc', mutation.value) : message;
    case 'method':
      return object ? withMember(record, 'method', mutation.value) : message;
    case 'batch':
      return Array.from({ length: mutation.copies }, () => message);
  }
}

function withMember(record: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const { [key]: _previous, ...rest } = record;
  return value === undefined ? rest : { ...rest, [key]: value };
}

/** The concrete value of an id template in the batch with `base`. */
export function concreteId(template: IdTemplate, base: number): string | number {
  const n = base * 4 + template.slot;
  switch (template.kind) {
    case 'int':
      return n;
    case 'int-as-string':
      return String(n);
    case 'negative':
      return -n;
    case 'fraction':
      return n + 0.5;
    case 'huge':
      return -(n * 1e21);
    case 'huge-literal':
      return hugeLiteralMarker(`${n}${'0'.repeat(25)}`);
    case 'unicode':
      return `${n}\u2028é😀\u0000\ud83d`;
    case 'long':
      return `${n}:${'λ'.repeat(template.size)}`;
  }
}

function knownValue(marker: string, context: JsonRpcMaterializeContext): string {
  const [, kind, slotText] = marker.slice(markerPrefix.length).split(':');
  const list = context.known[kind as KnownKind] ?? [];
  const slot = Number(slotText);
  if (list.length === 0 || slot >= list.length) return `no-such-${kind}-${slot}`;
  return list[list.length - 1 - slot] as string;
}

function concreteTree(value: unknown, context: JsonRpcMaterializeContext): unknown {
  if (typeof value === 'string') return value.startsWith(`${markerPrefix}known:`) ? knownValue(value, context) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => concreteTree(item, context));
  if (isMarker(value))
    return concreteId((value as Record<string, IdTemplate>)[idMarkerKey] as IdTemplate, context.base);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, concreteTree(item, context)]));
}

function applyText(line: Buffer, mutation: TextMutation): Buffer {
  const at = (fraction: number) => Math.min(line.length, Math.floor(fraction * line.length));
  switch (mutation.op) {
    case 'none':
      return line;
    case 'truncate':
      return line.subarray(0, at(mutation.at));
    case 'insert':
      return Buffer.concat([
        line.subarray(0, at(mutation.at)),
        Buffer.from(mutation.text.replace(/\n/g, ''), 'utf8'),
        line.subarray(at(mutation.at)),
      ]);
    case 'delete':
      return Buffer.concat([line.subarray(0, at(mutation.at)), line.subarray(at(mutation.at) + mutation.count)]);
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), line]);
    case 'whitespace':
      return Buffer.concat([Buffer.from(mutation.text), line, Buffer.from(mutation.text)]);
    case 'invalid-utf8':
      return Buffer.concat([
        line.subarray(0, at(mutation.at)),
        Buffer.from([mutation.byte]),
        line.subarray(at(mutation.at)),
      ]);
  }
}

/** One element as the bytes of its line(s), each ending with `\n`. */
function elementBytes(
  element: Exclude<JsonRpcFuzzElement, { kind: 'repeat' }>,
  context: JsonRpcMaterializeContext,
): Buffer {
  switch (element.kind) {
    case 'message': {
      const text = expandTextMarkers(JSON.stringify(concreteTree(element.value, context)) ?? 'undefined');
      const line = applyText(Buffer.from(text, 'utf8'), element.text);
      return Buffer.concat([line, Buffer.from(element.crlf ? '\r\n' : '\n')]);
    }
    case 'json':
      return Buffer.from(`${JSON.stringify(element.value)}\n`, 'utf8');
    case 'text':
      return Buffer.from(`${element.text}\n`, 'utf8');
    case 'bytes':
      return Buffer.concat([Buffer.from(element.bytes), Buffer.from('\n')]);
  }
}

/** A batch as the bytes to send and the writes to send them in. */
export function materializeBatch(
  batch: JsonRpcFuzzBatch,
  context: JsonRpcMaterializeContext,
): { readonly bytes: Buffer; readonly writes: readonly Buffer[] } {
  const parts: Buffer[] = [];
  for (const element of batch.elements) {
    if (element.kind === 'repeat') {
      const previous = parts[parts.length - 1];
      if (previous) parts.push(previous);
      continue;
    }
    parts.push(elementBytes(element, context));
  }
  const bytes = Buffer.concat(parts);
  return { bytes, writes: splitBytes(bytes, batch.split) };
}
