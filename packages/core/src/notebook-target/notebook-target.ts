import type { SecretToken } from './secret-token.js';

/** A notebook file on this machine, opened through the local daemon. */
export interface LocalPathTarget {
  readonly kind: 'local-path';
  /** Absolute, `~` expanded, resolved against the caller's cwd; canonical (symlinks resolved) when the file exists. */
  readonly path: string;
  /** Whether the file existed when the target was parsed. A missing file may still be created by a save. */
  readonly existed: boolean;
}

/** A notebook room known to the local daemon by its UUID (lowercase, hyphenated). */
export interface NotebookIdTarget {
  readonly kind: 'notebook-id';
  readonly notebookId: string;
}

/** A notebook on a Jupyter Server. */
export interface HostedUrlTarget {
  readonly kind: 'hosted-url';
  /** The identity: the notebook URL without credentials, query or fragment. Safe to print. */
  readonly url: string;
  /** The server's base URL (origin plus base path), without credentials, ending in `/`. */
  readonly serverUrl: string;
  /** The notebook's path on the server, decoded, without a leading slash (`dir/a.ipynb`). */
  readonly notebookPath: string;
  /** The credential, if one was given (`?token=` or `JUPYTER_TOKEN`). Never printed. */
  readonly token: SecretToken | undefined;
}

/** What an agent asks to work on: a local file, a daemon notebook id, or a hosted notebook URL. */
export type NotebookTarget = LocalPathTarget | NotebookIdTarget | HostedUrlTarget;

/** The printable identity of a target: the path, the UUID or the credential-free URL. */
export function describeNotebookTarget(target: NotebookTarget): string {
  switch (target.kind) {
    case 'local-path':
      return target.path;
    case 'notebook-id':
      return target.notebookId;
    case 'hosted-url':
      return target.url;
  }
}

/** Whether two targets name the same notebook by identity (credentials are not part of identity). */
export function isSameNotebookTarget(a: NotebookTarget, b: NotebookTarget): boolean {
  return a.kind === b.kind && describeNotebookTarget(a) === describeNotebookTarget(b);
}
