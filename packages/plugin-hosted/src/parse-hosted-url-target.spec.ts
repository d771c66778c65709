import { inspect } from 'node:util';
import { CoreError, describeNotebookTarget, isSameNotebookTarget } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import { parseHostedUrlTarget } from './parse-hosted-url-target.js';

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

describe(parseHostedUrlTarget, () => {
  it('splits server, path and token; the identity has no credentials', () => {
    const target = parseHostedUrlTarget(
      'https://hub.example.org:8443/user/ada/lab/tree/work/My%20Plot.ipynb?token=s3cret#cell',
      {},
    );
    expect(target.url).toBe('https://hub.example.org:8443/user/ada/lab/tree/work/My%20Plot.ipynb');
    expect(target.serverUrl).toBe('https://hub.example.org:8443/user/ada/');
    expect(target.notebookPath).toBe('work/My Plot.ipynb');
    expect(target.token?.reveal()).toBe('s3cret');
  });

  it('never prints the token: JSON, inspect, template strings and describe', () => {
    const target = parseHostedUrlTarget('http://localhost:8888/notebooks/a.ipynb?token=s3cret', {});
    const printed = [
      JSON.stringify(target),
      inspect(target, { depth: 5 }),
      `${target.token}`,
      describeNotebookTarget(target),
    ].join('\n');
    expect(printed).not.toContain('s3cret');
    expect(printed).toContain('[redacted]');
  });

  it('takes the default token when the URL has none, and normalises routes to lab/tree', () => {
    const a = parseHostedUrlTarget('http://localhost:8888/tree/dir/a.ipynb', { defaultHostedToken: 'env-token' });
    const b = parseHostedUrlTarget('http://localhost:8888/notebooks/dir/a.ipynb?token=other', {});
    expect(a.token?.reveal()).toBe('env-token');
    expect(a.url).toBe('http://localhost:8888/lab/tree/dir/a.ipynb');
    expect(isSameNotebookTarget(a, b)).toBe(true);
    expect(parseHostedUrlTarget('http://localhost:8888/lab/tree/a.ipynb', {}).token).toBeUndefined();
  });

  it('reads JupyterLab 4 / Notebook 7 doc/tree and workspace links, and Hub URLs under a path prefix, to the same server and identity', () => {
    const doc = parseHostedUrlTarget('https://hub.example.org/jhub/user/ada/doc/tree/work/a.ipynb?token=s3cret', {});
    expect(doc.serverUrl).toBe('https://hub.example.org/jhub/user/ada/');
    expect(doc.notebookPath).toBe('work/a.ipynb');
    expect(doc.url).toBe('https://hub.example.org/jhub/user/ada/lab/tree/work/a.ipynb');
    for (const route of ['lab/tree', 'notebooks', 'tree', 'lab/workspaces/auto-q/tree', 'doc/workspaces/w/tree']) {
      const other = parseHostedUrlTarget(`https://hub.example.org/jhub/user/ada/${route}/work/a.ipynb`, {});
      expect(other.serverUrl, route).toBe(doc.serverUrl);
      expect(isSameNotebookTarget(other, doc), route).toBe(true);
    }
    // A named server called 'doc' keeps its name: the route is matched whole.
    expect(parseHostedUrlTarget('http://h/user/ada/doc/doc/tree/a.ipynb', {}).serverUrl).toBe('http://h/user/ada/doc/');
  });

  it('refuses URLs that do not name a notebook, without echoing credentials', () => {
    expectInvalid(() => parseHostedUrlTarget('http://localhost:8888/lab?token=s3cret', {}), /does not name a notebook/);
    expectInvalid(
      () => parseHostedUrlTarget('http://localhost:8888/lab/tree/data.csv', {}),
      /does not name a notebook/,
    );
    expectInvalid(
      () => parseHostedUrlTarget('http://localhost:8888/lab/tree/../x.ipynb', {}),
      /does not name a notebook/,
    );
    expectInvalid(
      () => parseHostedUrlTarget('http://ada:pw@localhost:8888/lab/tree/a.ipynb', {}),
      /user name or password/,
    );
    expectInvalid(() => parseHostedUrlTarget('http://', {}), 'Hosted notebook URL is not a valid URL.');
    try {
      parseHostedUrlTarget('http://ada:pw@localhost:8888/lab/tree/a.ipynb?token=s3cret', {});
    } catch (error) {
      expect((error as Error).message).not.toMatch(/s3cret|pw@/);
    }
  });
});
