import { describe, expect, it } from 'vitest';
import { checkClientRequest } from './check-client-request.js';
import { controlRequestFixtures, notebookRequestFixtures } from './wire-fixtures.js';

describe('checkClientRequest', () => {
  it.each(Object.values(notebookRequestFixtures))('reads a valid notebook request: $type', (request) => {
    expect(checkClientRequest('notebook', { id: 7, ...request })).toEqual({ kind: 'ok', id: 7, request });
  });

  it.each(Object.values(controlRequestFixtures))('reads a valid control request: $type', (request) => {
    expect(checkClientRequest('control', { id: 7, ...request })).toEqual({ kind: 'ok', id: 7, request });
  });

  it('tells a frame without a numeric id or a string type apart from an unknown type', () => {
    expect(checkClientRequest('notebook', { type: 'get_cells' })).toEqual({ kind: 'malformed' });
    expect(checkClientRequest('notebook', { id: '1', type: 'get_cells' })).toEqual({ kind: 'malformed' });
    expect(checkClientRequest('notebook', { id: 1, type: 7 })).toEqual({ kind: 'malformed' });
    expect(checkClientRequest('notebook', [1])).toEqual({ kind: 'malformed' });
    expect(checkClientRequest('notebook', { id: 1, type: 'ping' })).toEqual({ kind: 'unknown', id: 1, type: 'ping' });
    expect(checkClientRequest('control', { id: 1, type: 'get_cells' })).toEqual({
      kind: 'unknown',
      id: 1,
      type: 'get_cells',
    });
    // Not a key of the schema table by inheritance either.
    expect(checkClientRequest('control', { id: 1, type: 'toString' })).toMatchObject({ kind: 'unknown' });
  });

  it.each([
    [{ type: 'get_cell' }, 'cell_id', "Missing required string field 'cell_id'"],
    [{ type: 'get_cell', cell_id: 3 }, 'cell_id', "Field 'cell_id' must be a string, got 3"],
    [{ type: 'get_cell', cell_id: '' }, 'cell_id', "Field 'cell_id' must be a non-empty string"],
    [{ type: 'insert_cell', index: 1.5 }, 'index', "Field 'index' must be a non-negative integer"],
    [{ type: 'insert_cell', index: '1' }, 'index', "Field 'index' must be a non-negative integer"],
    [{ type: 'insert_cell', source: {} }, 'source', "Field 'source' must be a string, got an object"],
    [
      { type: 'update_cell', cell_id: 'c', cell_type: null },
      'cell_type',
      "Field 'cell_type' must be 'code', 'markdown' or 'raw', got null",
    ],
    [
      { type: 'move_cell', cell_id: 'c', after_cell_id: [] },
      'after_cell_id',
      "Field 'after_cell_id' must be a string or null",
    ],
    [{ type: 'save', path: 1 }, 'path', "Field 'path' must be a string, got 1"],
  ])('refuses %j naming the field', (request, field, message) => {
    expect(checkClientRequest('notebook', { id: 2, ...request })).toEqual({
      kind: 'invalid',
      id: 2,
      type: request.type,
      field,
      message,
    });
  });

  it('refuses a control request with a broken field', () => {
    expect(checkClientRequest('control', { id: 3, type: 'shutdown_notebook', notebook_id: null })).toMatchObject({
      kind: 'invalid',
      field: 'notebook_id',
      message: "Field 'notebook_id' must be a string, got null",
    });
  });

  it('lets extra fields pass and drops them from the request', () => {
    const checked = checkClientRequest('notebook', {
      id: 4,
      type: 'insert_cell',
      source: 'x',
      from_the_future: { deep: [1, 2] },
    });
    expect(checked).toEqual({ kind: 'ok', id: 4, request: { type: 'insert_cell', source: 'x' } });
  });

  it('takes null for the optional fields that allow it', () => {
    expect(
      checkClientRequest('notebook', { id: 5, type: 'insert_cell', source: null, index: null, idempotency_key: null }),
    ).toMatchObject({ kind: 'ok' });
  });
});
