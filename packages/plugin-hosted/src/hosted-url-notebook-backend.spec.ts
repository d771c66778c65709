import { type ChildServerTestHarness, startChildServerTestHarness, toolError } from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createHostedPlugin } from './create-hosted-plugin.js';

/** `connect_notebook(url=…)` and `create_notebook` in the child server, with this plugin's backend. */
describe('the hosted notebook backend in the child server', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  it('parses the URL, then says hosted notebooks are not supported yet, without the token, leaving the slot alone', async () => {
    harness = await startChildServerTestHarness({ plugins: [createHostedPlugin({ env: {} })] });
    const kept = await harness.callJson('connect_notebook', { path: 'keep.ipynb' });
    const calls = harness.daemon?.calls.length;
    const text = await toolError(
      harness.call('connect_notebook', { url: 'https://hub.example/user/ada/notebooks/a.ipynb?token=s3cret' }),
    );
    expect(text).toBe(
      "Hosted notebooks (https://hub.example/user/ada/lab/tree/a.ipynb) are not supported by this version yet: connect a local file with 'path' or an open notebook with 'notebook_id'.",
    );
    expect(harness.slot.active?.handle.notebookId).toBe(kept.notebook_id);
    expect(harness.slot.parked).toEqual([]);
    expect(harness.daemon?.calls.length).toBe(calls);
    expect(JSON.stringify(harness.logger.records)).not.toContain('s3cret');
  });

  it('refuses a URL that names no notebook with its own text, as a tool error', async () => {
    harness = await startChildServerTestHarness({ plugins: [createHostedPlugin({ env: {} })] });
    expect(await toolError(harness.call('connect_notebook', { url: 'https://host/files/a.ipynb?token=s3cret' }))).toBe(
      'Hosted URL https://host/files/a.ipynb does not name a notebook. Expected http(s)://host[:port][/base]/lab/tree/<path>.ipynb (or /notebooks/…, /tree/…).',
    );
  });

  it('alone (no local daemon), says creating is not supported yet', async () => {
    harness = await startChildServerTestHarness({ daemon: false, plugins: [createHostedPlugin({ env: {} })] });
    expect(await toolError(harness.call('create_notebook'))).toBe(
      'Creating notebooks on a Jupyter Server is not supported by this version yet: this server has no backend that creates local notebooks.',
    );
    expect(await toolError(harness.call('connect_notebook', { path: 'a.ipynb' }))).toBe(
      "This server cannot open notebooks by 'path': no loaded plugin handles them.",
    );
  });
});
