// Any MCP client built on the SDK: start nteract-mcp (installed, on PATH) over stdio, then call its tools.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const transport = new StdioClientTransport({ command: 'nteract-mcp' });
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(transport);
await client.callTool({ name: 'create_notebook', arguments: {} });
const run = await client.callTool({ name: 'create_cell', arguments: { source: '6 * 7', and_run: true } });
process.stdout.write(`${run.content.map((item) => item.text).join('\n')}\n`);
await client.close();
