import {
  defaultMaxFrameBytes,
  maxHandshakeFrameBytes,
  runtimedMagic,
  runtimedProtocolVersion,
  wireControlRequestTypes,
  wireNotebookRequestTypes,
} from '@nteract-mcp/runtimed-protocol';
import fc from 'fast-check';
import { expandTextMarkers, fuzzString, harmlessTree, markerPrefix, splitBytes, splitPoints } from './fuzz-values.js';
import { applyMutation, type StructuralMutation, structuralMutation } from './json-rpc-fuzz-batch.js';

/**
 * One fuzzed connection to runtimed: a preamble (valid or broken), a handshake (valid for the
 * control or notebook channel, or mutated), frames (valid requests of the channel, mutated ones,
 * random JSON, bodies that are not JSON, wrong length prefixes, oversized claims, raw bytes), split
 * at random points, and what the wire contract says must come back.
 */

export const controlRequestTypes: ReadonlySet<string> = new Set(wireControlRequestTypes);

/** The notebook requests the fuzz sends (all but `leave`, which ends the connection on purpose). */
export const notebookRequestTypes: ReadonlySet<string> = new Set(
  wireNotebookRequestTypes.filter((type) => type !== 'leave'),
);

const maxHandshakeBytes = maxHandshakeFrameBytes;
const maxFrameBytes = defaultMaxFrameBytes;

type Channel = 'control' | 'notebook';
export type RuntimedKnownKind = 'cell' | 'execution' | 'notebook';

const knownMarkerPrefix = `${markerPrefix}rt-known:`;
const workDirMarker = `${markerPrefix}workdir`;

const known = (kind: RuntimedKnownKind) =>
  fc.integer({ min: 0, max: 4 }).map((slot) => `${knownMarkerPrefix}${kind}:${slot}`);
const inWorkDir = (name: string): string => `${workDirMarker}/${name}`;

export type PreambleChoice =
  | { readonly op: 'valid' }
  | { readonly op: 'wrong-magic'; readonly at: number; readonly byte: number }
  | { readonly op: 'wrong-version'; readonly version: number }
  | { readonly op: 'truncated'; readonly length: number }
  | { readonly op: 'none' };

export interface HandshakeChoice {
  readonly seed: 'control' | 'create' | 'open' | 'attach';
  readonly value: unknown;
  readonly mutated: boolean;
}

export type FrameElement =
  | {
      readonly kind: 'request';
      /** The request for either channel: the one of the handshake's channel is sent. */
      readonly control: { readonly type: string; readonly fields: Record<string, unknown> };
      readonly notebook: { readonly type: string; readonly fields: Record<string, unknown> };
      readonly mutations: readonly StructuralMutation[];
      readonly retype: unknown;
      readonly idSlot: number;
    }
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'not-json'; readonly text: string }
  | { readonly kind: 'bad-length'; readonly delta: number }
  | { readonly kind: 'oversized'; readonly claimed: number }
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array };

export interface RuntimedFuzzSession {
  readonly preamble: PreambleChoice;
  readonly handshake: HandshakeChoice;
  readonly frames: readonly FrameElement[];
  readonly split: readonly number[];
}

const preamble: fc.Arbitrary<PreambleChoice> = fc.oneof(
  { weight: 20, arbitrary: fc.constant({ op: 'valid' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('wrong-magic' as const),
      at: fc.integer({ min: 0, max: 3 }),
      byte: fc.integer({ min: 0, max: 255 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('wrong-version' as const), version: fc.integer({ min: 0, max: 255 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('truncated' as const), length: fc.integer({ min: 1, max: 4 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'none' as const }) },
);

const peerLabel = fc.constantFrom('fuzz', 'fuzz agent:x:1');

const handshakeSeed: fc.Arbitrary<{ seed: HandshakeChoice['seed']; value: Record<string, unknown> }> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ seed: 'control' as const, value: { channel: 'control' } }) },
  {
    weight: 3,
    arbitrary: fc.record({ ephemeral: fc.boolean(), label: peerLabel }).map(({ ephemeral, label }) => ({
      seed: 'create' as const,
      value: {
        channel: 'notebook',
        mode: 'create',
        runtime: 'python',
        working_dir: workDirMarker,
        ephemeral,
        peer_label: label,
      },
    })),
  },
  {
    weight: 3,
    arbitrary: fc.record({ n: fc.integer({ min: 0, max: 5 }), label: peerLabel }).map(({ n, label }) => ({
      seed: 'open' as const,
      value: { channel: 'notebook', mode: 'open', path: inWorkDir(`nb-${n}.ipynb`), peer_label: label },
    })),
  },
  {
    weight: 2,
    arbitrary: fc.record({ id: known('notebook'), label: peerLabel }).map(({ id, label }) => ({
      seed: 'attach' as const,
      value: { channel: 'notebook', mode: 'attach', notebook_id: id, peer_label: label },
    })),
  },
);

/** Mutations that make sense for a frame (no JSON-RPC members). */
const frameMutation = structuralMutation.filter((mutation) =>
  ['drop', 'replace', 'extra-member', 'batch'].includes(mutation.op),
);

const handshake: fc.Arbitrary<HandshakeChoice> = fc
  .record({
    seed: handshakeSeed,
    mutations: fc.oneof(
      { weight: 6, arbitrary: fc.constant([] as StructuralMutation[]) },
      { weight: 2, arbitrary: fc.array(frameMutation, { minLength: 1, maxLength: 2 }) },
    ),
  })
  .map(({ seed, mutations }) => ({
    seed: seed.seed,
    value: mutations.reduce(applyMutation, seed.value),
    mutated: mutations.length > 0,
  }));

const source = fc.oneof(fc.constantFrom('x = 1', '# md', ''), fuzzString);
const cellType = fc.constantFrom('code', 'markdown', 'raw');
const idempotency = fc.option(fc.uuid(), { nil: undefined });
/** A cell version that is rarely the cell's (a stale or made-up one), or none. */
const cellVersion = fc.option(fc.constantFrom('AAAAAAAAAAAA', 'stale-version'), { nil: undefined });

/** A comment's text: usually a short one, sometimes empty or fuzzed (the daemon bounds it). */
const commentText = fc.oneof(fc.constantFrom('why?', 'looks right', ''), fuzzString);
/** A thread id the room never made (a made-up uuid or fuzzed text): the answer is an error, nothing changes. */
const threadId = fc.oneof(fc.uuid(), fuzzString);

const requestFields: Readonly<Record<string, fc.Arbitrary<Record<string, unknown>>>> = {
  ping: fc.constant({}),
  get_daemon_info: fc.constant({}),
  list_rooms: fc.constant({}),
  subscribe: fc.constant({}),
  shutdown_notebook: fc.record({ notebook_id: fc.oneof(known('notebook'), fc.uuid()) }),
  get_cells: fc.constant({}),
  get_cell: fc.record({ cell_id: known('cell') }),
  get_runtime: fc.constant({}),
  insert_cell: fc.record(
    { source, cell_type: cellType, index: fc.integer({ min: 0, max: 4 }), idempotency_key: idempotency },
    { requiredKeys: [] },
  ),
  update_cell: fc.record(
    {
      cell_id: known('cell'),
      source,
      cell_type: cellType,
      idempotency_key: idempotency,
      expected_version: cellVersion,
      seen_version: cellVersion,
    },
    { requiredKeys: ['cell_id'] },
  ),
  delete_cell: fc.record(
    { cell_id: known('cell'), idempotency_key: idempotency, expected_version: cellVersion },
    { requiredKeys: ['cell_id'] },
  ),
  move_cell: fc.record({ cell_id: known('cell'), after_cell_id: fc.oneof(known('cell'), fc.constant(null)) }),
  clear_outputs: fc.record({ cell_id: known('cell') }),
  execute_cell: fc.record({ cell_id: known('cell'), idempotency_key: idempotency }, { requiredKeys: ['cell_id'] }),
  get_execution: fc.record({ execution_id: known('execution') }),
  cancel_execution: fc.record({ execution_id: known('execution') }),
  run_code: fc.record({ source: fc.constantFrom('1 + 1', 'print("scratch")', 'raise ValueError("x")', '') }),
  interrupt: fc.constant({}),
  restart_kernel: fc.constant({}),
  save: fc.oneof(
    fc.constant({}),
    fc.integer({ min: 0, max: 5 }).map((n) => ({ path: inWorkDir(`saved-${n}.ipynb`) })),
  ),
  get_changes: fc.record({ since: fc.oneof(fc.constant('a1b2c3.0'), fuzzString) }, { requiredKeys: [] }),
  start_code: fc.record(
    { source: fc.constantFrom('1 + 1', 'print("scratch")', ''), allow_input: fc.boolean() },
    { requiredKeys: ['source'] },
  ),
  input_reply: fc.record(
    {
      execution_id: fc.oneof(known('execution'), fc.uuid()),
      input_id: fc.oneof(
        fc.uuid(),
        fuzzString.filter((text) => text.length > 0),
      ),
      value: fc.oneof(fc.constant('ada'), fuzzString),
      cancelled: fc.boolean(),
    },
    { requiredKeys: ['execution_id', 'input_id'] },
  ),
  undo: fc.record({ count: fc.integer({ min: 1, max: 5 }), idempotency_key: idempotency }, { requiredKeys: [] }),
  add_comment: fc.record(
    {
      cell_id: known('cell'),
      text: commentText,
      range: fc.oneof(
        fc.constant(null),
        fc.record({ start: fc.integer({ min: -1, max: 6 }), end: fc.integer({ min: -1, max: 8 }) }),
      ),
      idempotency_key: idempotency,
    },
    { requiredKeys: ['cell_id', 'text'] },
  ),
  reply_comment: fc.record(
    { thread_id: threadId, text: commentText, idempotency_key: idempotency },
    { requiredKeys: ['thread_id', 'text'] },
  ),
  resolve_comment: fc.record({ thread_id: threadId }),
  reopen_comment: fc.record({ thread_id: threadId }),
  list_comments: fc.record({ cell_id: known('cell'), include_resolved: fc.boolean() }, { requiredKeys: [] }),
};

/** Every notebook request type the protocol names has fields here: a new one is added above, or the fuzz says so at once. */
const missingFields = [...notebookRequestTypes].filter((type) => requestFields[type] === undefined);
if (missingFields.length > 0) {
  throw new Error(
    `the runtimed fuzz has no fields for the request type(s) ${missingFields.join(', ')}: add them to requestFields`,
  );
}

/** A request type with valid fields; `shutdown_daemon` (it stops the daemon on purpose) is never sent. */
const typedRequest = (types: readonly string[]) =>
  fc
    .constantFrom(...types)
    .chain((type) =>
      (requestFields[type] as fc.Arbitrary<Record<string, unknown>>).map((fields) => ({ type, fields })),
    );

const requestElement: fc.Arbitrary<FrameElement> = fc.record({
  kind: fc.constant('request' as const),
  control: typedRequest(['ping', 'get_daemon_info', 'list_rooms', 'subscribe', 'shutdown_notebook']),
  notebook: typedRequest([...notebookRequestTypes]),
  idSlot: fc.integer({ min: 0, max: 9 }),
  mutations: fc.oneof(
    { weight: 6, arbitrary: fc.constant([] as StructuralMutation[]) },
    { weight: 1, arbitrary: fc.array(frameMutation, { minLength: 1, maxLength: 3 }) },
  ),
  retype: fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>('no_such_request', 'PING', 'get_cells', 'ping', 7, null, '') },
  ),
});

const frameElement: fc.Arbitrary<FrameElement> = fc.oneof(
  { weight: 40, arbitrary: requestElement },
  {
    weight: 1,
    arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: 'json' as const, value: harmlessTree(value) })),
  },
  { weight: 1, arbitrary: fuzzString.map((text) => ({ kind: 'not-json' as const, text })) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: -8, max: 1000 })
      .filter((delta) => delta !== 0)
      .map((delta) => ({ kind: 'bad-length' as const, delta })),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: maxFrameBytes + 1, max: 0xffffffff })
      .map((claimed) => ({ kind: 'oversized' as const, claimed })),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ minLength: 1, maxLength: 32 }).map((bytes) => ({ kind: 'bytes' as const, bytes })),
  },
);

export const runtimedFuzzSession: fc.Arbitrary<RuntimedFuzzSession> = fc.record({
  preamble,
  handshake,
  frames: fc.array(frameElement, { maxLength: 8 }),
  split: splitPoints,
});

/** What a fuzzed connection must see come back. */
export interface RuntimedExpectation {
  /**
   * `accept`: the greeting (`hello`/`connected`) must come; `refuse`: one error frame with one of
   * `closeCodes`, then the close; `either`: a greeting or a refusal (attach, mutated notebook
   * handshakes); `unknown`: the stream is out of step, only the general promises hold.
   */
  readonly handshake: 'accept' | 'refuse' | 'either' | 'unknown';
  readonly channel: Channel | undefined;
  /** Requests by id (numeric, as text) after an accepted handshake, before anything closing. */
  readonly requests: ReadonlyMap<string, { readonly count: number; readonly lines: readonly string[] }>;
  /** Whether the connection must stay open to the end (then the sentinel is answered). */
  readonly end: 'open' | 'closed' | 'unknown';
  /** The error codes the closing error frame may carry (`end: 'closed'`, or a refused handshake). */
  readonly closeCodes: readonly string[];
  readonly sentinelId: number | undefined;
  /** How many frames carried each numeric id (including those after a closing frame), by id as text. */
  readonly sentIds: ReadonlyMap<string, number>;
}

export interface RuntimedMaterializeContext {
  readonly workDir: string;
  readonly known: Readonly<Record<RuntimedKnownKind, readonly string[]>>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function concrete(value: unknown, context: RuntimedMaterializeContext): unknown {
  if (typeof value === 'string') {
    if (value.startsWith(knownMarkerPrefix)) {
      const [kind, slotText] = value.slice(knownMarkerPrefix.length).split(':');
      const list = context.known[kind as RuntimedKnownKind] ?? [];
      const slot = Number(slotText);
      return list.length > slot ? list[list.length - 1 - slot] : `no-such-${kind}-${slot}`;
    }
    return value.startsWith(workDirMarker) ? context.workDir + value.slice(workDirMarker.length) : value;
  }
  if (Array.isArray(value)) return value.map((item) => concrete(item, context));
  if (isRecord(value))
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, concrete(item, context)]));
  return value;
}

function frameOf(body: Buffer, length = body.length): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(length >>> 0, 0);
  return Buffer.concat([header, body]);
}

function jsonBody(value: unknown): Buffer {
  return Buffer.from(expandTextMarkers(JSON.stringify(value) ?? 'null'), 'utf8');
}

function preview(body: Buffer): string {
  const text = body.toString('utf8');
  return text.length > 240 ? `${text.slice(0, 240)}…(${text.length} chars)` : text;
}

/** The error code a handshake frame must be refused with, or `undefined` when its channel is known. */
function handshakeRefusal(body: Buffer, value: unknown): string | undefined {
  if (body.length > maxHandshakeBytes) return 'oversized_frame';
  if (!isRecord(value)) return 'bad_frame';
  return value.channel === 'control' || value.channel === 'notebook' ? undefined : 'unknown_channel';
}

/** The bytes of one session, the writes to send them in, and what must come back. */
export function materializeSession(
  session: RuntimedFuzzSession,
  context: RuntimedMaterializeContext,
): {
  readonly writes: readonly Buffer[];
  readonly expectation: RuntimedExpectation;
  readonly lines: readonly string[];
} {
  const parts: Buffer[] = [];
  const lines: string[] = [];
  const requests = new Map<string, { count: number; lines: string[] }>();
  const sentIds = new Map<string, number>();
  const count = (id: string): void => {
    sentIds.set(id, (sentIds.get(id) ?? 0) + 1);
  };
  const closeCodes: string[] = [];
  let handshakeOutcome: RuntimedExpectation['handshake'] = 'accept';
  let channel: Channel | undefined;
  // The state after each part: open (frames are requests of the channel), closed (an error
  // frame and the close are due; nothing after it counts), unknown (out of step).
  const stream: { state: 'open' | 'closed' | 'unknown' } = { state: 'open' };
  const close = (code: string): void => {
    if (stream.state !== 'open') return;
    stream.state = 'closed';
    closeCodes.push(code);
  };

  switch (session.preamble.op) {
    case 'valid':
      parts.push(Buffer.from([...runtimedMagic, runtimedProtocolVersion]));
      break;
    case 'wrong-magic': {
      const bytes = Buffer.from([...runtimedMagic, runtimedProtocolVersion]);
      const at = session.preamble.at;
      bytes[at] = session.preamble.byte === bytes[at] ? (session.preamble.byte + 1) % 256 : session.preamble.byte;
      parts.push(bytes);
      close('bad_preamble');
      break;
    }
    case 'wrong-version': {
      const version =
        session.preamble.version === runtimedProtocolVersion ? runtimedProtocolVersion + 1 : session.preamble.version;
      parts.push(Buffer.from([...runtimedMagic, version]));
      close('unsupported_protocol');
      break;
    }
    case 'truncated':
      parts.push(Buffer.from([...runtimedMagic, runtimedProtocolVersion].slice(0, session.preamble.length)));
      stream.state = 'unknown';
      break;
    case 'none':
      stream.state = 'unknown';
      break;
  }
  lines.push(`preamble ${session.preamble.op}`);

  const handshakeBody = jsonBody(concrete(session.handshake.value, context));
  const handshakeValue: unknown = JSON.parse(handshakeBody.toString('utf8'));
  parts.push(frameOf(handshakeBody));
  lines.push(`handshake ${preview(handshakeBody)}`);
  if (stream.state === 'open') {
    const refusal = handshakeRefusal(handshakeBody, handshakeValue);
    if (refusal !== undefined) {
      close(refusal);
      handshakeOutcome = 'refuse';
    } else {
      channel = (handshakeValue as { channel: Channel }).channel;
      const seedOk =
        !session.handshake.mutated && (session.handshake.seed === 'create' || session.handshake.seed === 'open');
      if (channel === 'notebook' && !seedOk) handshakeOutcome = 'either';
    }
  } else handshakeOutcome = stream.state === 'closed' ? 'refuse' : 'unknown';

  const types = channel === 'notebook' ? notebookRequestTypes : controlRequestTypes;
  for (const element of session.frames) {
    let part: Buffer;
    switch (element.kind) {
      case 'request': {
        const id = element.idSlot + 1;
        const picked = channel === 'notebook' ? element.notebook : element.control;
        const base: Record<string, unknown> = {
          type: element.retype === undefined ? picked.type : element.retype,
          id,
          ...picked.fields,
        };
        const body = jsonBody(concrete(element.mutations.reduce(applyMutation, base), context));
        // The frame as the daemon reads it (huge number literals and deep nesting expanded).
        const value: unknown = JSON.parse(body.toString('utf8'));
        part = frameOf(body);
        lines.push(`frame ${preview(body)}`);
        const frameId = isRecord(value) ? value.id : undefined;
        if (typeof frameId === 'number') count(String(frameId));
        if (stream.state !== 'open') break;
        // One frame over the frame cap breaks the stream before its body is read.
        if (body.length > maxFrameBytes) close('oversized_frame');
        else if (!isRecord(value) || typeof value.id !== 'number' || typeof value.type !== 'string') close('bad_frame');
        else if (!types.has(value.type)) close('unknown_request');
        else {
          const key = String(value.id);
          const entry = requests.get(key) ?? { count: 0, lines: [] };
          entry.count += 1;
          entry.lines.push(preview(body));
          requests.set(key, entry);
        }
        break;
      }
      case 'json': {
        const body = jsonBody(element.value);
        part = frameOf(body);
        lines.push(`frame ${preview(body)}`);
        const value: unknown = JSON.parse(body.toString('utf8'));
        if (isRecord(value) && typeof value.id === 'number') count(String(value.id));
        if (stream.state === 'open') {
          if (body.length > maxFrameBytes) close('oversized_frame');
          else if (!isRecord(value) || typeof value.id !== 'number' || typeof value.type !== 'string')
            close('bad_frame');
          else stream.state = 'unknown';
        }
        break;
      }
      case 'not-json': {
        const body = Buffer.from(`\u0000${element.text}`, 'utf8');
        part = frameOf(body);
        lines.push(`frame (not JSON) ${preview(body)}`);
        close(body.length > maxFrameBytes ? 'oversized_frame' : 'bad_frame');
        break;
      }
      case 'bad-length': {
        const body = jsonBody({ type: 'ping', id: 99 });
        part = frameOf(body, Math.max(0, body.length + element.delta));
        lines.push(`frame with length off by ${element.delta}`);
        count('99');
        if (stream.state === 'open') stream.state = 'unknown';
        break;
      }
      case 'oversized':
        part = frameOf(Buffer.from('{"type":"ping"'), element.claimed);
        lines.push(`frame claiming ${element.claimed} bytes`);
        close('oversized_frame');
        break;
      case 'bytes':
        part = Buffer.from(element.bytes);
        lines.push(`raw bytes ${Buffer.from(element.bytes).toString('hex')}`);
        if (stream.state === 'open') stream.state = 'unknown';
        break;
    }
    parts.push(part);
  }

  let sentinelId: number | undefined;
  if (stream.state === 'open' && channel !== undefined) {
    sentinelId = 1_000_000;
    count(String(sentinelId));
    parts.push(frameOf(jsonBody({ type: channel === 'control' ? 'ping' : 'get_runtime', id: sentinelId })));
    lines.push('sentinel');
  }
  const bytes = Buffer.concat(parts);
  return {
    writes: splitBytes(bytes, session.split),
    lines,
    expectation: {
      handshake: handshakeOutcome,
      channel,
      requests,
      end: stream.state,
      closeCodes,
      sentinelId,
      sentIds,
    },
  };
}
