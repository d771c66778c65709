import { afterEach, describe, expect, it } from 'vitest';
import type { FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
  toolError,
} from '../../testing/start-child-server-test-harness.js';

/** A JSON Schema property as the child advertises it in tools/list. */
interface PropertySchema {
  readonly type?: string | readonly string[];
  readonly anyOf?: readonly PropertySchema[];
  readonly enum?: readonly unknown[];
}

/** The JSON types a property admits (`enum` counts as its own kind). */
function admittedKinds(schema: PropertySchema): Set<string> {
  const kinds = new Set<string>();
  for (const part of schema.anyOf ?? [schema]) {
    if (part.enum) kinds.add('enum');
    else for (const type of [part.type ?? []].flat()) kinds.add(type);
  }
  return kinds;
}

/** A value of the wrong kind an agent plausibly sends for a parameter that admits `kinds`. */
function wrongValueFor(kinds: Set<string>): unknown {
  if (kinds.has('boolean')) return 'yes';
  if (kinds.has('number') || kinds.has('integer')) return 'ten';
  if (kinds.has('enum')) return 'fancy';
  if (kinds.has('object')) return 'not an object';
  return { not: 'a string' };
}

describe('tool parameters', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  it('refuses a value of the wrong kind for every parameter of every tool, naming it, and does nothing', async () => {
    harness = await startChildServerTestHarness();
    await harness.callJson('create_notebook');
    await harness.callJson('create_cell', { source: 'x = 1' });
    const handle = harness.daemon?.handles.at(-1) as FakeNotebookHandle;
    const cellsBefore = JSON.stringify(await handle.listCells());
    const { tools } = await harness.client.listTools();
    let checked = 0;
    for (const tool of tools) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, PropertySchema>;
      for (const [name, schema] of Object.entries(properties)) {
        const args = {
          cell_id: 'cell-1',
          code: 'x',
          execution_id: 'e1',
          find: 'x',
          replace: 'y',
          name: 'x',
          query: 'x',
          text: 'x',
          thread_id: 't-1',
          packages: ['x'],
        };
        const text = await toolError(
          harness.call(tool.name, { ...args, [name]: wrongValueFor(admittedKinds(schema)) }),
        );
        expect(text, `${tool.name}.${name}`).toMatch(new RegExp(`^Invalid arguments for ${tool.name}: ${name}: `));
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(JSON.stringify(await handle.listCells())).toBe(cellsBefore);
    expect(harness.daemon?.handles).toHaveLength(1);
  });

  it('takes "true" / "false" for a boolean in any case, and runs the cell only when asked', async () => {
    harness = await startChildServerTestHarness();
    await harness.callJson('create_notebook');
    const run = await harness.callJson('create_cell', { source: 'print(1)', and_run: 'True' });
    expect(run.status).toBe('done');
    const made = await harness.callJson('create_cell', { source: 'print(2)', and_run: 'false' });
    expect(made.status).toBeUndefined();
    expect(made.execution_id).toBeUndefined();
  });
});
