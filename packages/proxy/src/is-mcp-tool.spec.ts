import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { isMcpTool } from './is-mcp-tool.js';

const objectSchema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

const good: Record<string, unknown>[] = [
  { name: 'get_cell', inputSchema: { type: 'object' } },
  {
    name: 'create_cell',
    title: 'Create a cell',
    description: 'Adds a cell',
    inputSchema: objectSchema,
    outputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: false, idempotentHint: true },
    _meta: { 'nteract/idempotency': 'honored' },
    icons: [{ src: 'https://example.org/i.png', mimeType: 'image/png', sizes: ['48x48'] }],
    execution: { taskSupport: 'optional' },
    somethingNew: { allowed: true },
  },
];

const bad: unknown[] = [
  null,
  [],
  'get_cell',
  {},
  { name: 42, inputSchema: { type: 'object' } },
  { name: 'no_schema' },
  { name: 'array_schema', inputSchema: { type: 'array' } },
  { name: 'schema_not_object', inputSchema: 'object' },
  { name: 'bad_title', title: 7, inputSchema: { type: 'object' } },
  { name: 'bad_description', description: ['x'], inputSchema: { type: 'object' } },
  { name: 'bad_required', inputSchema: { type: 'object', required: [1] } },
  { name: 'bad_properties', inputSchema: { type: 'object', properties: [] } },
  { name: 'bad_output', inputSchema: { type: 'object' }, outputSchema: { type: 'string' } },
  { name: 'bad_annotations', inputSchema: { type: 'object' }, annotations: 'read-only' },
  { name: 'bad_meta', inputSchema: { type: 'object' }, _meta: [] },
  { name: 'bad_icons', inputSchema: { type: 'object' }, icons: [{ mimeType: 'image/png' }] },
];

describe('isMcpTool', () => {
  it('accepts tool definitions, with every optional member and unknown ones', () => {
    for (const tool of good) expect(isMcpTool(tool), JSON.stringify(tool)).toBe(true);
  });

  it('refuses what is not a tool definition, naming nothing it cannot check', () => {
    for (const value of bad) expect(isMcpTool(value), JSON.stringify(value)).toBe(false);
  });

  it('agrees with the MCP SDK schema on every case (the SDK is not loaded by the proxy for this)', () => {
    for (const value of [...good, ...bad]) {
      expect(isMcpTool(value), JSON.stringify(value)).toBe(ToolSchema.safeParse(value).success);
    }
  });
});
