import { describe, expect, it } from 'vitest';
import { RuntimedProtocolError } from '../runtimed-protocol-error.js';
import { parseFromDaemon } from './parse-from-daemon.js';
import { runtimedHandshakeSchema } from './runtimed-handshake.js';
import { wireControlAnswerSchemas } from './wire-control-answer.js';
import { wireDaemonEventSchema } from './wire-daemon-event.js';
import {
  connectedFixture,
  controlAnswerFixtures,
  daemonEventFixtures,
  handshakeFixtures,
  helloFixture,
  notebookAnswerFixtures,
  roomEventFixtures,
  sourceEditAnswerFixture,
  wireCellFixture,
} from './wire-fixtures.js';
import { wireControlHelloSchema, wireNotebookConnectedSchema } from './wire-greeting.js';
import { wireNotebookAnswerSchemas } from './wire-notebook-answer.js';
import { wireRoomEventSchema } from './wire-room-event.js';

/** As it travels: JSON text in, JSON text out, with the envelope fields of its kind. */
function overTheWire(value: object): unknown {
  return JSON.parse(JSON.stringify(value));
}

function violation(run: () => unknown): RuntimedProtocolError {
  try {
    run();
  } catch (error) {
    if (RuntimedProtocolError.is(error, 'protocolViolation')) return error;
    throw error;
  }
  throw new Error('expected a protocolViolation');
}

describe('parseFromDaemon', () => {
  it.each(Object.entries(notebookAnswerFixtures))('reads the %s answer as sent, envelope dropped', (type, answer) => {
    const schema = wireNotebookAnswerSchemas[type as keyof typeof wireNotebookAnswerSchemas];
    expect(parseFromDaemon(schema, overTheWire({ ...answer, type: 'ok', id: 9 }), `${type} answer`)).toEqual(answer);
  });

  it('reads the answer to a source edit in either form: the whole cell, or its source fields', () => {
    const schema = wireNotebookAnswerSchemas.update_cell;
    const whole = notebookAnswerFixtures.update_cell;
    expect(parseFromDaemon(schema, overTheWire({ ...whole, type: 'ok', id: 9 }), 'update_cell answer')).toEqual(whole);
    const parsed = parseFromDaemon(
      schema,
      overTheWire({ ...sourceEditAnswerFixture, type: 'ok', id: 9 }),
      'update_cell answer',
    );
    expect(parsed).toEqual(sourceEditAnswerFixture);
    expect('cell' in parsed).toBe(false);
    // Neither form: refused, nothing read.
    expect(() => parseFromDaemon(schema, { type: 'ok', id: 9, document_version: 6 }, 'update_cell answer')).toThrow(
      /invalid update_cell answer/,
    );
  });

  it.each(Object.entries(controlAnswerFixtures))('reads the %s answer as sent, envelope dropped', (type, answer) => {
    const schema = wireControlAnswerSchemas[type as keyof typeof wireControlAnswerSchemas];
    expect(parseFromDaemon(schema, overTheWire({ ...answer, type: 'ok', id: 9 }), `${type} answer`)).toEqual(answer);
  });

  it.each(roomEventFixtures)('reads the $event broadcast', (event) => {
    expect(parseFromDaemon(wireRoomEventSchema, overTheWire({ type: 'broadcast', ...event }), 'broadcast')).toEqual(
      event,
    );
  });

  it.each(daemonEventFixtures)('reads the $event daemon event', (event) => {
    expect(parseFromDaemon(wireDaemonEventSchema, overTheWire({ type: 'event', ...event }), 'event')).toEqual(event);
  });

  it('reads the greetings and every handshake', () => {
    expect(parseFromDaemon(wireControlHelloSchema, overTheWire(helloFixture), 'hello')).toEqual(helloFixture);
    expect(parseFromDaemon(wireNotebookConnectedSchema, overTheWire(connectedFixture), 'greeting')).toEqual(
      connectedFixture,
    );
    for (const handshake of handshakeFixtures) {
      expect(parseFromDaemon(runtimedHandshakeSchema, overTheWire(handshake), 'handshake')).toEqual(handshake);
    }
  });

  it('keeps every field of an output, and lets unknown fields elsewhere pass (dropped)', () => {
    const output = { output_type: 'display_data', data: { 'text/html': '<b>x</b>' }, metadata: { isolated: true } };
    const cell = { ...wireCellFixture(1), outputs: [output], new_in_v3: 'x' };
    const parsed = parseFromDaemon(wireNotebookAnswerSchemas.get_cell, { type: 'ok', id: 1, cell }, 'get_cell answer');
    expect(parsed.cell.outputs).toEqual([output]);
    expect(parsed.cell.outputs[0]).toBe(cell.outputs[0]);
    expect(parsed.cell).not.toHaveProperty('new_in_v3');
  });

  it.each([
    [
      'get_cells',
      { document_version: 1, cells: [{ ...wireCellFixture(1), id: 7 }] },
      "The daemon sent an invalid get_cells answer: Field 'cells[0].id' must be a string, got 7",
    ],
    [
      'get_cells',
      { cells: [] },
      "The daemon sent an invalid get_cells answer: Missing required number field 'document_version'",
    ],
    [
      'get_cell',
      { cell: { ...wireCellFixture(1), outputs: [{ text: 'no type' }] } },
      "The daemon sent an invalid get_cell answer: Field 'cell.outputs[0]' must be an nbformat output (an object with a string output_type)",
    ],
    [
      'get_execution',
      { ...notebookAnswerFixtures.get_execution, status: 'finished' },
      `The daemon sent an invalid get_execution answer: Field 'status' must be 'queued', 'running', 'ok', 'error' or 'aborted', got "finished"`,
    ],
    [
      'get_runtime',
      { runtime: { state: 'ready' } },
      "The daemon sent an invalid get_runtime answer: Missing required string field 'runtime.kernel_status'",
    ],
  ] as const)('refuses a %s answer with a broken field, naming it', (type, answer, message) => {
    const error = violation(() => parseFromDaemon(wireNotebookAnswerSchemas[type], answer, `${type} answer`));
    expect(error.message).toBe(message);
  });

  it('refuses a broadcast of a known event without what it must carry, naming the field', () => {
    const error = violation(() =>
      parseFromDaemon(wireRoomEventSchema, { type: 'broadcast', event: 'execution_output', cell_id: 'c' }, 'broadcast'),
    );
    expect(error.message).toBe("The daemon sent an invalid broadcast: Missing required string field 'execution_id'");
    const unknown = violation(() => parseFromDaemon(wireRoomEventSchema, { event: 'teleported' }, 'broadcast'));
    expect(unknown.message).toBe(
      `The daemon sent an invalid broadcast: Field 'event' has an unknown value "teleported"`,
    );
  });

  it('refuses a greeting whose daemon identity is missing', () => {
    const { daemon_pid: _, ...withoutPid } = connectedFixture;
    expect(violation(() => parseFromDaemon(wireNotebookConnectedSchema, withoutPid, 'notebook greeting')).message).toBe(
      "The daemon sent an invalid notebook greeting: Missing required number field 'daemon_pid'",
    );
  });
});
