import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { CoreError } from '../../errors/core-error.js';
import { ChildToolRegistry, defineChildTool, type ToolCallContext, textResult } from './child-tool-registry.js';
import { InvalidParamsError, ToolError } from './to-tool-failure.js';

const context: ToolCallContext = {
  idempotencyKey: undefined,
  signal: new AbortController().signal,
  cancelled: new AbortController().signal,
  reportProgress: () => undefined,
};

/** One tool whose handler does what `behave` says with its validated `cell_id`. */
function registryWith(behave: (cellId: string) => never | string): ChildToolRegistry {
  return new ChildToolRegistry([
    defineChildTool({
      name: 'get_cell',
      description: 'Read a cell.',
      inputSchema: z.object({ cell_id: z.string() }),
      annotations: { readOnlyHint: true },
      handler: async (args) => textResult(behave(args.cell_id)),
    }),
  ]);
}

describe(ChildToolRegistry, () => {
  it('answers arguments the input schema refuses with a tool result (isError) naming the argument and what to do', async () => {
    let ran = false;
    const registry = registryWith(() => {
      ran = true;
      return 'ok';
    });
    for (const args of [{}, { cell_id: 7 }, undefined]) {
      const result = await registry.call('get_cell', args, context);
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([
        {
          type: 'text',
          text: expect.stringMatching(
            /^Invalid arguments for get_cell: cell_id: .+\. Correct them and call get_cell again \(its inputSchema in tools\/list lists every parameter\)\.$/,
          ),
        },
      ]);
    }
    expect(ran).toBe(false);
  });

  it('refuses an argument the tool does not have, naming it and the ones it has, and advertises that', async () => {
    let ran = false;
    const registry = registryWith(() => {
      ran = true;
      return 'ok';
    });
    const result = await registry.call('get_cell', { cell_id: 'c1', path: '/x.ipynb', ['k\n'.repeat(60)]: 1 }, context);
    expect(result).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: `Invalid arguments for get_cell: no argument 'path', "${'k\\n'.repeat(40)}…" (its arguments are cell_id). Correct them and call get_cell again (its inputSchema in tools/list lists every parameter).`,
        },
      ],
    });
    expect(ran).toBe(false);
    expect(registry.list()[0]?.inputSchema).toMatchObject({ additionalProperties: false });
  });

  it('answers an argument naming nothing that exists (cellNotFound, or invalid params a tool throws) with a tool result, text as is', async () => {
    const notFound = registryWith((id) => {
      throw new CoreError('cellNotFound', `Cell not found: ${id}`);
    });
    expect(await notFound.call('get_cell', { cell_id: 'nope' }, context)).toEqual({
      content: [{ type: 'text', text: 'Cell not found: nope' }],
      isError: true,
    });
    const invalid = registryWith(() => {
      throw new InvalidParamsError('Nothing to change: give source.');
    });
    expect(await invalid.call('get_cell', { cell_id: 'a' }, context)).toEqual({
      content: [{ type: 'text', text: 'Nothing to change: give source.' }],
      isError: true,
    });
    const failing = registryWith(() => {
      throw new ToolError('The kernel is busy.');
    });
    expect((await failing.call('get_cell', { cell_id: 'a' }, context)).isError).toBe(true);
  });

  it('keeps protocol errors JSON-RPC errors: an unknown tool is invalid params, a JSON-RPC error a tool chose is rethrown', async () => {
    const registry = registryWith(() => 'ok');
    const unknown = await registry.call('no_such_tool', {}, context).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(InvalidParamsError);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((unknown as McpError).message).toBe('Unknown tool: no_such_tool');
    const huge = await registry.call(`x\u0000${'y'.repeat(150_000)}`, {}, context).catch((error: unknown) => error);
    expect((huge as McpError).message).toBe(`Unknown tool: "x\\u0000${'y'.repeat(78)}…"`);
    const chosen = new McpError(ErrorCode.InternalError, 'on purpose');
    const rethrowing = registryWith(() => {
      throw chosen;
    });
    await expect(rethrowing.call('get_cell', { cell_id: 'a' }, context)).rejects.toBe(chosen);
  });
});

describe('the policies a tool declares', () => {
  const start = async (): Promise<string> => 'execution-1';
  const question = async () => undefined;
  const registry = new ChildToolRegistry([
    defineChildTool({
      name: 'plain',
      description: 'Declares nothing.',
      inputSchema: z.object({}),
      annotations: { readOnlyHint: true },
      handler: async () => textResult('plain'),
    }),
    defineChildTool({
      name: 'declared',
      description: 'Declares every policy.',
      inputSchema: z.object({}),
      annotations: { readOnlyHint: false },
      session: 'runtime',
      task: { support: 'optional', start },
      inputRounds: true,
      confirm: { question },
      handler: async () => textResult('declared'),
    }),
  ]);

  it('are kept with the tool (none by default; an unknown tool has none to give) for the call pipeline to read', () => {
    expect(registry.policies('plain')).toEqual({ session: 'none', inputRounds: false });
    expect(registry.policies('declared')).toEqual({
      session: 'runtime',
      task: { support: 'optional', start },
      inputRounds: true,
      confirm: { question },
    });
    expect(registry.policies('unknown')).toBeUndefined();
  });

  it('advertise task support in tools/list only for a tool that declared it', () => {
    const [plain, declared] = registry.list();
    expect(plain?.execution).toBeUndefined();
    expect(declared?.execution).toEqual({ taskSupport: 'optional' });
  });
});
