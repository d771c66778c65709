import { CoreError } from '../errors/core-error.js';
import type { SecretToken } from './secret-token.js';

/** A notebook file on this machine, opened through the local daemon (first-party kind). */
export interface LocalPathTarget {
  readonly kind: 'local-path';
  /** Absolute, `~` expanded, resolved against the caller's cwd; canonical (symlinks resolved) when the file exists. */
  readonly path: string;
  /** Whether the file existed when the target was parsed. A missing file may still be created by a save. */
  readonly existed: boolean;
}

/** A notebook room known to the local daemon by its UUID (lowercase, hyphenated; first-party kind). */
export interface NotebookIdTarget {
  readonly kind: 'notebook-id';
  readonly notebookId: string;
}

/** A notebook on a Jupyter Server (first-party kind). */
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

/**
 * A target of a kind a plugin contributes: its kind is a dotted name (`acme.archive`), so it never
 * collides with the first-party kinds, and its other fields are the plugin's. Its identity,
 * description and recovery target come from the plugin's notebook backend.
 */
export interface ContributedNotebookTarget {
  readonly kind: `${string}.${string}`;
}

/**
 * What an agent asks to work on. The model is open: the three first-party shapes (a local file, a
 * daemon notebook id, a hosted URL) and any contributed kind. Only the plugin that owns a kind
 * reads its fields; everyone else goes through {@link describeNotebookTarget} and
 * {@link isSameNotebookTarget}.
 */
export type NotebookTarget = LocalPathTarget | NotebookIdTarget | HostedUrlTarget | ContributedNotebookTarget;

/** The printable identity of a target (the path, the UUID, the credential-free URL, or what its backend says). */
export function describeNotebookTarget(target: NotebookTarget): string {
  return identityOfTarget(target).describe(target);
}

/** Whether two targets name the same notebook by identity (credentials are not part of identity). */
export function isSameNotebookTarget(a: NotebookTarget, b: NotebookTarget): boolean {
  if (a.kind !== b.kind) return false;
  const identity = identityOfTarget(a);
  return identity.isSame ? identity.isSame(a, b) : identity.describe(a) === identity.describe(b);
}

/** Narrows to the first-party local file shape. */
export function isLocalPathTarget(target: NotebookTarget): target is LocalPathTarget {
  return target.kind === 'local-path';
}

/** Narrows to the first-party notebook id shape. */
export function isNotebookIdTarget(target: NotebookTarget): target is NotebookIdTarget {
  return target.kind === 'notebook-id';
}

/** Narrows to the first-party hosted URL shape. */
export function isHostedUrlTarget(target: NotebookTarget): target is HostedUrlTarget {
  return target.kind === 'hosted-url';
}

/** The `connect_notebook` argument that names targets of a kind. */
export type TargetArgument = 'path' | 'notebook_id' | 'url';

/** What identity rules see of a session: the target it was reached by and what its handle says now. */
export interface TargetSessionView {
  readonly target: NotebookTarget;
  readonly notebookId: string;
  readonly notebookPath: string | undefined;
}

/**
 * How the targets of one kind are told apart and printed. Every notebook backend is one; the
 * resolver ties each target it parses to its backend, so core's target functions work for any kind.
 */
export interface NotebookTargetIdentity {
  readonly kind: NotebookTarget['kind'];
  /** The `connect_notebook` argument that takes this kind (used in reconnect hints). */
  readonly argument: TargetArgument;
  /** The printable identity; never a credential. Parsing it again gives the same target. */
  describe(target: NotebookTarget): string;
  /** Same notebook by identity; defaults to equal descriptions. */
  isSame?(a: NotebookTarget, b: NotebookTarget): boolean;
  /** The best target to bring this session back after a loss; defaults to the session's own target. */
  recoveryTarget?(session: TargetSessionView): NotebookTarget;
  /** Whether `session` is the notebook `target` names; defaults to {@link isSame} on the session's target. */
  isSessionFor?(session: TargetSessionView, target: NotebookTarget): boolean;
}

const identitySymbol = Symbol.for('@nteract-mcp/core/NotebookTargetIdentity');

/**
 * `target`, tied to the identity that describes it (a non-enumerable property: JSON, equality of
 * fields and printing do not see it), then frozen. The resolver does this for every target a
 * backend parses.
 */
export function bindTargetIdentity<T extends NotebookTarget>(target: T, identity: NotebookTargetIdentity): T {
  if (identity.kind !== target.kind) {
    throw new CoreError(
      'invalidContribution',
      `A notebook backend for '${identity.kind}' produced a target of kind '${target.kind}'.`,
    );
  }
  if (Object.isFrozen(target)) {
    const copy = { ...target };
    Object.defineProperty(copy, identitySymbol, { value: identity, enumerable: false });
    return Object.freeze(copy);
  }
  Object.defineProperty(target, identitySymbol, { value: identity, enumerable: false });
  return Object.freeze(target);
}

/**
 * The identity of a target: the backend that parsed it, else the built-in rules of the three
 * first-party shapes (targets written as literals). A contributed kind that did not come from its
 * backend is refused: core does not guess another plugin's identity rules.
 */
export function identityOfTarget(target: NotebookTarget): NotebookTargetIdentity {
  const bound = (target as { readonly [identitySymbol]?: NotebookTargetIdentity })[identitySymbol];
  if (bound) return bound;
  const builtIn = firstPartyIdentities[target.kind as keyof typeof firstPartyIdentities];
  if (builtIn) return builtIn;
  throw new CoreError(
    'unsupportedTarget',
    `A '${target.kind}' target was not made by its notebook backend: parse it with the NotebookTargetResolver.`,
  );
}

const localPathIdentity: NotebookTargetIdentity = {
  kind: 'local-path',
  argument: 'path',
  describe: (target) => (target as LocalPathTarget).path,
  // The saved file survives a daemon restart; an untitled notebook has only its id.
  recoveryTarget: (session) =>
    session.notebookPath !== undefined
      ? { kind: 'local-path', path: session.notebookPath, existed: true }
      : { kind: 'notebook-id', notebookId: session.notebookId },
  isSessionFor: (session, target) =>
    session.notebookPath === (target as LocalPathTarget).path ||
    (session.target.kind === 'local-path' && session.target.path === (target as LocalPathTarget).path),
};

const notebookIdIdentity: NotebookTargetIdentity = {
  kind: 'notebook-id',
  argument: 'notebook_id',
  describe: (target) => (target as NotebookIdTarget).notebookId,
  recoveryTarget: localPathIdentity.recoveryTarget,
  isSessionFor: (session, target) => session.notebookId === (target as NotebookIdTarget).notebookId,
};

const hostedUrlIdentity: NotebookTargetIdentity = {
  kind: 'hosted-url',
  argument: 'url',
  describe: (target) => (target as HostedUrlTarget).url,
};

/**
 * The identity rules of the first-party shapes, which core keeps as types: the path, the UUID, the
 * credential-free URL. A local session comes back by its saved file, else by its notebook id.
 */
export const firstPartyIdentities: Readonly<
  Record<'local-path' | 'notebook-id' | 'hosted-url', NotebookTargetIdentity>
> = Object.freeze({
  'local-path': localPathIdentity,
  'notebook-id': notebookIdIdentity,
  'hosted-url': hostedUrlIdentity,
});
