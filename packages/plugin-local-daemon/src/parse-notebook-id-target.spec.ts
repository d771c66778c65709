import { CoreError } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import { parseNotebookIdTarget } from './parse-notebook-id-target.js';

const uuid = '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90';

function expectInvalid(run: () => unknown, message: string | RegExp): void {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(CoreError.is(caught, 'invalidTarget')).toBe(true);
  if (typeof message === 'string') expect((caught as Error).message).toBe(message);
  else expect((caught as Error).message).toMatch(message);
}

describe(parseNotebookIdTarget, () => {
  it('accepts a UUID, trimmed and lowercased', () => {
    expect(parseNotebookIdTarget(` ${uuid.toUpperCase()} `)).toEqual({ kind: 'notebook-id', notebookId: uuid });
  });

  it.each(['', 'notebook-1', '0b9f2c44-5d1e-4a7b-9c3d', `${uuid}0`, 'analysis.ipynb'])(
    'refuses %j with the original text',
    (raw) => {
      expectInvalid(
        () => parseNotebookIdTarget(raw),
        `Invalid notebook_id '${raw}': must be a UUID (e.g. from list_active_notebooks). To open a file, use the 'path' parameter instead.`,
      );
    },
  );
});
