import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreError } from '../errors/core-error.js';
import type { HostedUrlTarget, LocalPathTarget, NotebookIdTarget, NotebookTarget } from './notebook-target.js';
import { SecretToken } from './secret-token.js';

/** What the file system says about a path, for canonicalisation. */
export type PathInspection =
  | { readonly kind: 'file'; readonly canonicalPath: string }
  | { readonly kind: 'directory'; readonly canonicalPath: string }
  | { readonly kind: 'missing' };

/** Where a target is parsed from. */
export interface TargetParseContext {
  /** Absolute directory relative paths are resolved against (the MCP process cwd). */
  readonly cwd: string;
  /** Home directory for `~`; defaults to the OS home. */
  readonly homeDir?: string;
  /** Token for hosted URLs without `?token=` (usually `JUPYTER_TOKEN`). */
  readonly defaultHostedToken?: string;
  /** File-system view; defaults to the real one. */
  readonly inspectPath?: (path: string) => PathInspection;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const schemePattern = /^([a-z][a-z0-9+.-]*):\/\//i;
const hostedRoutes = ['/lab/tree/', '/notebooks/', '/tree/'] as const;

/**
 * Which kind of target a single string names: a UUID is a notebook id, `http(s)://` a hosted URL,
 * anything else (including `file://`) a local path. Throws `invalidTarget` for an empty string or
 * an unsupported URL scheme.
 */
export function detectNotebookTargetKind(raw: string): NotebookTarget['kind'] {
  const text = raw.trim();
  if (text.length === 0) {
    throw new CoreError(
      'invalidTarget',
      'Notebook target is empty: give a notebook file path, a notebook UUID (from list_active_notebooks) or a Jupyter Server notebook URL.',
    );
  }
  if (uuidPattern.test(text)) return 'notebook-id';
  const scheme = schemePattern.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === 'file') return 'local-path';
  if (scheme === 'http' || scheme === 'https') return 'hosted-url';
  throw new CoreError(
    'invalidTarget',
    `Unsupported URL scheme '${scheme}:'. Give a local notebook file path, a notebook UUID, or an http(s) Jupyter Server notebook URL (http://host:8888/lab/tree/notebook.ipynb).`,
  );
}

/** Parses any single-string target (the handoff variable, a resource URI) by its detected kind. */
export function parseNotebookTarget(raw: string, context: TargetParseContext): NotebookTarget {
  switch (detectNotebookTargetKind(raw)) {
    case 'notebook-id':
      return parseNotebookIdTarget(raw);
    case 'hosted-url':
      return parseHostedUrlTarget(raw, context);
    case 'local-path':
      return parseLocalPathTarget(raw, context);
  }
}

/**
 * A notebook id must be a UUID. The error text is the one agents know from the original server.
 * The result is trimmed and lowercased.
 */
export function parseNotebookIdTarget(raw: string): NotebookIdTarget {
  const text = raw.trim();
  if (!uuidPattern.test(text)) {
    throw new CoreError(
      'invalidTarget',
      `Invalid notebook_id '${raw}': must be a UUID (e.g. from list_active_notebooks). To open a file, use the 'path' parameter instead.`,
    );
  }
  return Object.freeze({ kind: 'notebook-id', notebookId: text.toLowerCase() });
}

/**
 * A local notebook path: `~` expanded, relative paths resolved against `context.cwd`, symlinks
 * resolved when the file exists (else its nearest existing directory is canonicalised).
 * Accepts `file://` URLs. A directory is refused.
 */
export function parseLocalPathTarget(raw: string, context: TargetParseContext): LocalPathTarget {
  if (raw.trim().length === 0) {
    throw new CoreError(
      'invalidTarget',
      "Notebook path is empty: give the path of a .ipynb file, e.g. 'analysis.ipynb'.",
    );
  }
  if (raw.includes('\0')) {
    throw new CoreError('invalidTarget', 'Notebook path contains a NUL byte.');
  }
  if (!isAbsolute(context.cwd)) {
    throw new CoreError(
      'invalidTarget',
      `Cannot resolve '${raw}': the working directory '${context.cwd}' is not absolute.`,
    );
  }
  const absolute = resolve(context.cwd, expandHome(fromFileUrl(raw), context.homeDir ?? homedir()));
  const inspect = context.inspectPath ?? inspectPathOnDisk;
  const inspection = inspect(absolute);
  if (inspection.kind === 'directory') {
    throw new CoreError(
      'invalidTarget',
      `'${absolute}' is a directory. Give the path of a notebook file inside it, e.g. '${join(absolute, 'notebook.ipynb')}'.`,
    );
  }
  if (inspection.kind === 'file') {
    return Object.freeze({ kind: 'local-path', path: inspection.canonicalPath, existed: true });
  }
  return Object.freeze({ kind: 'local-path', path: canonicalMissingPath(absolute, inspect), existed: false });
}

/**
 * A Jupyter Server notebook URL: `http(s)://host[:port][/base]/{lab/tree|notebooks|tree}/path.ipynb`.
 * The token comes from `?token=` or `context.defaultHostedToken` and is kept in a {@link SecretToken};
 * the identity URL carries no credentials, query or fragment and uses the `lab/tree` route.
 * Error messages never repeat the raw URL, since it may hold a token.
 */
export function parseHostedUrlTarget(
  raw: string,
  context: Pick<TargetParseContext, 'defaultHostedToken'>,
): HostedUrlTarget {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new CoreError('invalidTarget', 'Hosted notebook URL is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CoreError('invalidTarget', `Hosted notebook URL must use http or https, not '${url.protocol}'.`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new CoreError(
      'invalidTarget',
      `Hosted notebook URL for ${url.host} carries a user name or password; pass the Jupyter token as ?token=… or in JUPYTER_TOKEN instead.`,
    );
  }
  const route = hostedRoutes
    .map((marker) => ({ marker, index: url.pathname.indexOf(marker) }))
    .filter((candidate) => candidate.index >= 0)
    .sort((a, b) => a.index - b.index)[0];
  const encodedPath = route ? url.pathname.slice(route.index + route.marker.length).replace(/\/+$/, '') : '';
  let notebookPath = '';
  try {
    notebookPath = encodedPath.split('/').filter(Boolean).map(decodeURIComponent).join('/');
  } catch {
    notebookPath = '';
  }
  if (!route || !notebookPath.endsWith('.ipynb') || notebookPath.split('/').some((part) => part === '..')) {
    throw new CoreError(
      'invalidTarget',
      `Hosted URL ${url.origin}${url.pathname} does not name a notebook. Expected http(s)://host[:port][/base]/lab/tree/<path>.ipynb (or /notebooks/…, /tree/…).`,
    );
  }
  const basePath = url.pathname.slice(0, route.index + 1);
  const serverUrl = `${url.origin}${basePath}`;
  const identityPath = notebookPath.split('/').map(encodeURIComponent).join('/');
  const tokenText = url.searchParams.get('token') ?? context.defaultHostedToken;
  return Object.freeze({
    kind: 'hosted-url',
    url: `${serverUrl}lab/tree/${identityPath}`,
    serverUrl,
    notebookPath,
    token: tokenText ? new SecretToken(tokenText) : undefined,
  });
}

function fromFileUrl(raw: string): string {
  return /^file:\/\//i.test(raw) ? fileURLToPath(raw) : raw;
}

function expandHome(path: string, homeDir: string): string {
  if (path === '~') return homeDir;
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(homeDir, path.slice(2));
  if (/^~[^/\\]/.test(path)) {
    throw new CoreError(
      'invalidTarget',
      `'${path}': '~user' paths are not supported; give an absolute path or one relative to the working directory.`,
    );
  }
  return path;
}

function canonicalMissingPath(absolute: string, inspect: (path: string) => PathInspection): string {
  const parent = dirname(absolute);
  if (parent === absolute) return absolute;
  const parentInspection = inspect(parent);
  if (parentInspection.kind === 'directory') return join(parentInspection.canonicalPath, basename(absolute));
  if (parentInspection.kind === 'missing') return join(canonicalMissingPath(parent, inspect), basename(absolute));
  return absolute;
}

/** The real file system: `realpath` + `stat`; any error reading a path counts as missing. */
export function inspectPathOnDisk(path: string): PathInspection {
  try {
    const canonicalPath = realpathSync.native(path);
    return statSync(canonicalPath).isDirectory()
      ? { kind: 'directory', canonicalPath }
      : { kind: 'file', canonicalPath };
  } catch {
    return { kind: 'missing' };
  }
}
