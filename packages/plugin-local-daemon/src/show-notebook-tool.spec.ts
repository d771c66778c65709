import type { ListedNotebook, LivePage, SessionSlot, ToolCallContext } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import type { RuntimedDaemonPort } from './runtimed-daemon-port.js';
import { ShowNotebookTool } from './show-notebook-tool.js';

const active = '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90';
const other = '6f1c2a9e-0000-4000-8000-000000000001';
const context = { idempotencyKey: undefined, signal: new AbortController().signal } as unknown as ToolCallContext;

/** show_notebook over a stand-in daemon whose page answers `page` (per notebook id), with `active` the daemon's active notebook. */
function showNotebook(page: (notebookId?: string) => LivePage | undefined) {
  const asked: (string | undefined)[] = [];
  const daemon = {
    page: async (notebookId?: string) => {
      asked.push(notebookId);
      return page(notebookId);
    },
    listRooms: async () => [{ notebookId: active }, { notebookId: other }] as unknown as readonly ListedNotebook[],
  } as unknown as RuntimedDaemonPort;
  const slot = { active: { handle: { notebookId: active, daemonIncarnation: { pid: 1 } } } } as unknown as SessionSlot;
  const [tool] = new ShowNotebookTool(slot, daemon).tools();
  if (!tool) throw new Error('show_notebook is missing');
  const call = async (args: Record<string, unknown> = {}) => {
    const result = await tool.call(args, context);
    return { isError: result.isError === true, text: (result.content[0] as { text: string }).text };
  };
  return { call, asked };
}

const launching = (notebookId?: string): LivePage => ({
  url: 'http://127.0.0.1:8765/',
  launchUrl: `http://127.0.0.1:8765/notebooks/${notebookId}#launch=one-time-code`,
});

describe(ShowNotebookTool, () => {
  it('answers the launch address of the active notebook, or the one named, saying it opens the page once', async () => {
    const { call, asked } = showNotebook(launching);
    const shown = await call();
    expect(shown.isError).toBe(false);
    expect(shown.text.split('\n')[0]).toBe(`http://127.0.0.1:8765/notebooks/${active}#launch=one-time-code`);
    expect(shown.text).toContain('opens the page once, within an hour');
    expect(shown.text).toContain('call show_notebook again for a new one');
    expect(shown.text).not.toContain('token');
    expect((await call({ notebook_id: other.toUpperCase() })).text.split('\n')[0]).toBe(
      `http://127.0.0.1:8765/notebooks/${other}#launch=one-time-code`,
    );
    expect(asked).toEqual([active, other]);
  });

  it('refuses, building no address, when the daemon is too old for launch addresses or serves no page', async () => {
    const older = await showNotebook(() => ({ url: 'http://127.0.0.1:8765/', launchUrl: undefined })).call();
    expect(older.isError).toBe(true);
    expect(older.text).toContain('older than one-time page addresses and cannot give a safe address');
    expect(older.text).not.toContain('http://');
    const none = await showNotebook(() => undefined).call();
    expect(none).toEqual({
      isError: true,
      text: 'The local daemon serves no web page (it was started with --no-page).',
    });
  });

  it('refuses a notebook that is not open, before asking for an address', async () => {
    const { call, asked } = showNotebook(launching);
    const missing = await call({ notebook_id: '00000000-0000-4000-8000-000000000000' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('is not open in the local daemon');
    expect(asked).toEqual([]);
  });
});
