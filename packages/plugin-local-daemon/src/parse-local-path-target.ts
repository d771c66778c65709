import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreError, type LocalPathTarget, type TargetParseContext } from '@nteract-mcp/core';

/** What the file system says about a path, for canonicalisation. */
export type PathInspection =
  | { readonly kind: 'file'; readonly canonicalPath: string }
  | { readonly kind: 'directory'; readonly canonicalPath: string }
  | { readonly kind: 'missing' };

/** Where a local path is parsed from: core's context plus an optional file-system view. */
export interface LocalPathParseContext extends TargetParseContext {
  /** File-system view; defaults to the real one. */
  readonly inspectPath?: (path: string) => PathInspection;
}

/**
 * A local notebook path: `~` expanded, relative paths resolved against `context.cwd`, symlinks
 * resolved when the file exists (else its directory is canonicalised). Accepts `file://` URLs.
 * A directory is refused, and so is a missing file whose directory does not exist (a missing file
 * in an existing directory is a new notebook: `existed: false`).
 */
export function parseLocalPathTarget(raw: string, context: LocalPathParseContext): LocalPathTarget {
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
  if (inspect(dirname(absolute)).kind !== 'directory') {
    throw new CoreError(
      'invalidTarget',
      `Cannot open '${absolute}': the directory ${dirname(absolute)} does not exist. Create it first, or give a path in an existing directory.`,
    );
  }
  return Object.freeze({ kind: 'local-path', path: canonicalMissingPath(absolute, inspect), existed: false });
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
