import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';
import { CoreError } from '../errors/core-error.js';
import type { NotebookTarget, NotebookTargetIdentity, TargetArgument } from '../notebook-target/notebook-target.js';
import type { KernelInfo } from '../ports/kernel-info.js';
import type { ListedNotebook } from '../ports/listed-notebook.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';

/** Where a target is parsed from. */
export interface TargetParseContext {
  /** Absolute directory relative paths are resolved against (the MCP process cwd). */
  readonly cwd: string;
  /** Home directory for `~`; defaults to the OS home. */
  readonly homeDir?: string;
}

/**
 * Sends the person to a page of this process, out of band, through the client (MCP URL-mode
 * elicitation): for what must not pass through the client or the agent, such as a server's token.
 */
export interface UrlElicitation {
  /**
   * Asks the client to offer the person `url` with `message` (`elicitation/create`, mode `url`).
   * Resolves with the person's answer: `accept` (they agreed to open it; what they do there the
   * page itself learns), `decline` or `cancel`. Rejects when the client fails or `signal` aborts.
   */
  ask(
    request: { readonly elicitationId: string; readonly url: string; readonly message: string },
    signal: AbortSignal,
  ): Promise<'accept' | 'decline' | 'cancel'>;
  /** Tells the client the person finished at the page of `elicitationId` (`notifications/elicitation/complete`). */
  completed(elicitationId: string): void;
  /**
   * Aborted when the client cancels the call the person is asked for (`notifications/cancelled`):
   * the page is closed and the wait ends. Absent outside a call.
   */
  readonly cancelled?: AbortSignal;
  /**
   * Tells the client, as the call's progress, that the call still waits for the person
   * (`secondsWaited` so far): a person may take minutes, and a client that resets its call timeout
   * on progress then keeps the call open. Does nothing when the call asked for no progress.
   */
  waiting?(secondsWaited: number, message: string): void;
}

/** What a backend is given to reach a notebook for a tool call or a rejoin. */
export interface BackendConnectContext {
  /** The peer label this server shows in the notebook's room. */
  readonly peerLabel: string;
  /** Aborted when the attempt is no longer wanted (superseded, disconnected, shutdown). */
  readonly signal: AbortSignal;
  /**
   * Present during a tool call whose client declared URL-mode elicitation, on a connection where
   * the server may send it requests; absent in a rejoin (nobody to ask).
   */
  readonly urlElicitation?: UrlElicitation;
}

/** The arguments of `create_notebook`, resolved. */
export interface CreateNotebookRequest {
  /** The kernel's language (`python`, `r`, ...) when `kernel` is not given; default Python. */
  readonly runtime?: string;
  /** The installed kernelspec to run ({@link NotebookBackend.listKernels}); default `python3`. */
  readonly kernel?: string;
  readonly workingDir: string;
  readonly ephemeral: boolean;
  /**
   * Where to create it, in the terms of the backend that takes the `url` argument (a Jupyter
   * Server directory URL, or a new `.ipynb` URL there); absent for the local daemon.
   */
  readonly location?: string;
}

/** A notebook a backend created, and the target that names it from now on. */
export interface CreatedNotebook {
  readonly handle: NotebookHandle;
  readonly target: NotebookTarget;
}

/**
 * One kind of notebook target, end to end: how a raw string of that kind is recognised, parsed
 * and printed, and how its notebooks are reached. `connect_notebook` maps its argument (`path`,
 * `notebook_id`, `url`) to the backends that take it; `create_notebook` uses the first backend
 * that creates; `list_active_notebooks` the first that lists; a lost session comes back through
 * {@link NotebookBackend.reopen} (or `connect`). Core never names a
 * kind's fields: a plugin adds a kind without touching core.
 *
 * Guarantees expected of implementations:
 * - `recognizes` and `parse` are pure apart from reading the file system; `parse` throws
 *   `CoreError('invalidTarget')` with an actionable message and never echoes a credential;
 * - `describe(parse(describe(t)))` equals `describe(t)` (the handoff to a restarted child relies on it);
 * - `connect` returns a handle as soon as the notebook is reachable (readiness is the caller's
 *   concern) and honours the signal; it closes any handle it does not return;
 * - an operation the kind cannot do answers `CoreError('unsupportedOperation')`, which the tool
 *   reports as is.
 */
export interface NotebookBackend extends Contribution, NotebookTargetIdentity {
  readonly specificationVersion: 'v1';
  /** The kind it owns: a first-party name or a dotted contributed name (`acme.archive`). Unique per container. */
  readonly kind: NotebookTarget['kind'];
  /** Which `connect_notebook` argument carries its targets. */
  readonly argument: TargetArgument;
  /** Whether a single string (the handoff variable, a resource URI) names a target of this kind by its form. */
  recognizes(raw: string): boolean;
  /** Parses and canonicalises a raw target. */
  parse(raw: string, context: TargetParseContext): NotebookTarget;
  /** Reaches the existing notebook `target` names (`connect_notebook`). */
  connect(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle>;
  /**
   * Reaches it again to rejoin after a loss; defaults to {@link connect}. This is the kind's way
   * back: core rejoins every lost session of the kind through it.
   * `CoreError('notebookUnavailable')` means definitively gone (the session is dropped, never
   * retried); any other `CoreError` means try again later.
   */
  reopen?(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle>;
  /**
   * When a reopened session counts as back: `settled` (default) once its kernel is ready too;
   * `document` once its document is loaded, its kernel coming up in the background (tools that
   * need the kernel wait for it).
   */
  readonly rejoinWhen?: 'settled' | 'document';
  /** Creates a new notebook (`create_notebook`), when the kind can. */
  create?(request: CreateNotebookRequest, context: BackendConnectContext): Promise<CreatedNotebook>;
  /** The notebooks open now (`list_active_notebooks`), when the kind can list them. */
  list?(): Promise<readonly ListedNotebook[]>;
  /** The kernels its new notebooks can run in (`list_kernels`), when the kind creates notebooks. */
  listKernels?(): Promise<readonly KernelInfo[]>;
  /**
   * The name of the `session_status` section where {@link serviceStatus} goes (`daemon` for the
   * local daemon). Backends of one service share a name; the first backend of a name answers.
   */
  readonly statusSection?: string;
  /**
   * What stands behind the kind's notebooks now (for the local daemon: live, version, pid), as the
   * fields of its `session_status` section. Asks the service itself; never throws: an unknown
   * state is said in the fields.
   */
  serviceStatus?(): Promise<Readonly<Record<string, unknown>>>;
  /**
   * Where a person can watch the kind's notebooks live, as one sentence for the
   * `connect_notebook` and `create_notebook` answers (which tool gives the address; never a secret);
   * `undefined` when nothing serves such a view now. Never throws.
   */
  liveView?(): Promise<string | undefined>;
}

const targetArguments: readonly TargetArgument[] = ['path', 'notebook_id', 'url'];
const firstPartyKinds: readonly string[] = ['local-path', 'notebook-id', 'hosted-url'];
const contributedKindPattern = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

/**
 * Each backend owns one well-named kind and takes a known argument; no two backends own the same
 * kind. Checked when a container is built.
 */
function assertValidBackends(backends: readonly NotebookBackend[]): void {
  const owners = new Map<string, string>();
  for (const backend of backends) {
    const kind = String(backend.kind);
    if (!firstPartyKinds.includes(kind) && !contributedKindPattern.test(kind)) {
      throw new CoreError(
        'invalidContribution',
        `NotebookBackend '${backend.id}': kind '${kind}' must be a dotted lowercase name such as 'acme.archive'.`,
      );
    }
    if (!targetArguments.includes(backend.argument)) {
      throw new CoreError(
        'invalidContribution',
        `NotebookBackend '${backend.id}': argument '${String(backend.argument)}' is not one of ${targetArguments.join(', ')}.`,
      );
    }
    const owner = owners.get(kind);
    if (owner !== undefined) {
      throw new CoreError(
        'duplicateTargetKind',
        `NotebookBackend: '${owner}' and '${backend.id}' both handle '${kind}' targets; load only one of them.`,
      );
    }
    owners.set(kind, backend.id);
  }
}

/** The point plugins contribute {@link NotebookBackend}s to (listed in `contributionPoints`). */
export const notebookBackendPoint = defineContributionPoint<NotebookBackend>('core', 'NotebookBackend', ['v1'], {
  validate: assertValidBackends,
});

/** The token a plugin binds its NotebookBackend to. */
export const NotebookBackend = notebookBackendPoint.token;
