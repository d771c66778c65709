import { describe, expect, it } from 'vitest';
import type { HostedUrlTarget } from '../notebook-target/notebook-target.js';
import { noSessionMessage } from './session-drop-info.js';

const hosted: HostedUrlTarget = {
  kind: 'hosted-url',
  url: 'http://h:8888/lab/tree/a.ipynb',
  serverUrl: 'http://h:8888/',
  notebookPath: 'a.ipynb',
  token: undefined,
};

describe(noSessionMessage, () => {
  it('keeps the original texts for local drops', () => {
    expect(
      noSessionMessage({
        reason: 'disconnected',
        notebookId: 'b2c3d4e5-0000-4000-8000-000000000001',
        notebookPath: '/w/a.ipynb',
        rejoinTarget: { kind: 'local-path', path: '/w/a.ipynb', existed: true },
        at: 0,
      }),
    ).toBe(
      'No active notebook session (daemon connection lost). Reconnect with: connect_notebook(notebook_id="b2c3d4e5-0000-4000-8000-000000000001") — file: /w/a.ipynb',
    );
  });

  it('tells a hosted drop to reconnect by URL (its id names no daemon room), and says why a bounded rejoin gave up', () => {
    const drop = {
      reason: 'disconnected' as const,
      notebookId: 'c6029665-458a-8b25-a85c-459962e12558',
      notebookPath: hosted.url,
      rejoinTarget: hosted,
      at: 0,
    };
    expect(noSessionMessage(drop)).toBe(
      `No active notebook session (connection to its server lost). Reconnect with: connect_notebook(url="${hosted.url}") — file: ${hosted.url}`,
    );
    expect(noSessionMessage({ ...drop, detail: 'Could not rejoin it after 10 attempts.' })).toBe(
      'No active notebook session (connection to its server lost). Could not rejoin it after 10 attempts.',
    );
  });
});
