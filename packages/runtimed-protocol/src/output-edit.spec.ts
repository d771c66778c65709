import { describe, expect, it } from 'vitest';
import { applyOutputEdit, outputEditOf, outputEventOf } from './output-edit.js';
import { wireRoomEventSchema } from './schemas/wire-room-event.js';

const stream = (text: string) => ({ output_type: 'stream', name: 'stdout', text });
const place = { document_version: 4, execution_id: 'e1', cell_id: 'c1', seq: 2 };

describe(applyOutputEdit, () => {
  it('sets, appends after what it keeps, and clears, on a new array', () => {
    const outputs = [stream('10%\r')];
    const appended = applyOutputEdit(outputs, { kind: 'append', index: 0, keep: 0, text: '100%\n' });
    expect(appended).toEqual([stream('100%\n')]);
    expect(outputs).toEqual([stream('10%\r')]);
    expect(applyOutputEdit(outputs, { kind: 'set', index: 1, output: { output_type: 'error' } })).toHaveLength(2);
    expect(applyOutputEdit(outputs, { kind: 'clear' })).toEqual([]);
  });

  it('refuses an edit that does not fit: an index past the end, an append to what is not a stream or past its text', () => {
    const outputs = [stream('abc'), { output_type: 'display_data' }];
    expect(applyOutputEdit(outputs, { kind: 'set', index: 3, output: stream('x') })).toBeUndefined();
    expect(applyOutputEdit(outputs, { kind: 'append', index: 1, keep: 0, text: 'x' })).toBeUndefined();
    expect(applyOutputEdit(outputs, { kind: 'append', index: 0, keep: 4, text: 'x' })).toBeUndefined();
    expect(applyOutputEdit(outputs, { kind: 'append', index: 2, keep: 0, text: 'x' })).toBeUndefined();
  });
});

describe(outputEventOf, () => {
  it('makes broadcasts the schema accepts, which tell back the same edit', () => {
    for (const edit of [
      { kind: 'clear' },
      { kind: 'set', index: 0, output: stream('a') },
      { kind: 'append', index: 0, keep: 1, text: 'b' },
    ] as const) {
      const event = outputEventOf(edit, place);
      const read = wireRoomEventSchema.parse(event);
      expect(read).toMatchObject(place);
      expect(outputEditOf(event)).toEqual(edit);
    }
  });
});
