import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreError } from '../errors/core-error.js';
import { describeNotebookTarget, isSameNotebookTarget } from './notebook-target.js';
import {
  detectNotebookTargetKind,
  inspectPathOnDisk,
  parseHostedUrlTarget,
  parseLocalPathTarget,
  parseNotebookIdTarget,
  parseNotebookTarget,
} from './parse-notebook-target.js';

const uuid = '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90';
let root: string;
let canonicalRoot: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'nteract-target-'));
  canonicalRoot =
    inspectPathOnDisk(root).kind === 'directory'
      ? (inspectPathOnDisk(root) as { canonicalPath: string }).canonicalPath
      : root;
  mkdirSync(join(root, 'real'));
  writeFileSync(join(root, 'real', 'a.ipynb'), '{}');
  symlinkSync(join(root, 'real'), join(root, 'link'));
  mkdirSync(join(root, 'home'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

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

describe(parseLocalPathTarget, () => {
  it('resolves a relative path against the given cwd and canonicalises an existing file', () => {
    const target = parseLocalPathTarget('link/a.ipynb', { cwd: root });
    expect(target).toEqual({ kind: 'local-path', path: join(canonicalRoot, 'real', 'a.ipynb'), existed: true });
  });

  it('expands ~ and ~/ with the home directory', () => {
    writeFileSync(join(root, 'home', 'h.ipynb'), '{}');
    expect(parseLocalPathTarget('~/h.ipynb', { cwd: '/', homeDir: join(root, 'home') }).path).toBe(
      join(canonicalRoot, 'home', 'h.ipynb'),
    );
    expectInvalid(() => parseLocalPathTarget('~', { cwd: '/', homeDir: join(root, 'home') }), /is a directory/);
  });

  it('keeps a missing file, canonicalising its nearest existing directory', () => {
    const target = parseLocalPathTarget(join(root, 'link', 'new', 'b.ipynb'), { cwd: '/' });
    expect(target).toEqual({ kind: 'local-path', path: join(canonicalRoot, 'real', 'new', 'b.ipynb'), existed: false });
  });

  it('accepts a file:// URL', () => {
    expect(parseLocalPathTarget(pathToFileURL(join(root, 'real', 'a.ipynb')).href, { cwd: '/' }).path).toBe(
      join(canonicalRoot, 'real', 'a.ipynb'),
    );
  });

  it('refuses empty input, a directory, ~user and a relative cwd with actionable messages', () => {
    expectInvalid(
      () => parseLocalPathTarget('', { cwd: root }),
      "Notebook path is empty: give the path of a .ipynb file, e.g. 'analysis.ipynb'.",
    );
    expectInvalid(() => parseLocalPathTarget('   ', { cwd: root }), /Notebook path is empty/);
    expectInvalid(
      () => parseLocalPathTarget('real', { cwd: root }),
      /is a directory\. Give the path of a notebook file inside it/,
    );
    expectInvalid(() => parseLocalPathTarget('~bob/x.ipynb', { cwd: root }), /'~user' paths are not supported/);
    expectInvalid(() => parseLocalPathTarget('x.ipynb', { cwd: 'relative/dir' }), /is not absolute/);
    expectInvalid(() => parseLocalPathTarget('a\0b.ipynb', { cwd: root }), /NUL byte/);
  });

  it('uses the injected file-system view', () => {
    const target = parseLocalPathTarget('x.ipynb', {
      cwd: '/work',
      inspectPath: (path) =>
        path === '/work/x.ipynb' ? { kind: 'file', canonicalPath: '/data/x.ipynb' } : { kind: 'missing' },
    });
    expect(target.path).toBe('/data/x.ipynb');
  });
});

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

describe(parseNotebookTarget, () => {
  it('detects each kind from a single string', () => {
    expect(parseNotebookTarget(uuid, { cwd: root }).kind).toBe('notebook-id');
    expect(parseNotebookTarget('https://h/lab/tree/a.ipynb', { cwd: root }).kind).toBe('hosted-url');
    expect(parseNotebookTarget('real/a.ipynb', { cwd: root }).kind).toBe('local-path');
  });

  it('refuses an empty string and unsupported URL schemes', () => {
    expectInvalid(
      () => detectNotebookTargetKind(''),
      /^Notebook target is empty: give a notebook file path, a notebook UUID/,
    );
    expectInvalid(() => parseNotebookTarget('  ', { cwd: root }), /Notebook target is empty/);
    expectInvalid(
      () => parseNotebookTarget('ftp://files.example.org/a.ipynb', { cwd: root }),
      /^Unsupported URL scheme 'ftp:'\. Give a local notebook file path, a notebook UUID, or an http\(s\) Jupyter Server notebook URL/,
    );
    expectInvalid(() => parseNotebookTarget('s3://bucket/a.ipynb', { cwd: root }), /Unsupported URL scheme 's3:'/);
  });
});
