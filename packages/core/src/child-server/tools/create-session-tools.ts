import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { quoteClientText } from '@nteract-mcp/foundation';
import * as z from 'zod';
import type { BackendConnectContext, CreatedNotebook, NotebookBackend } from '../../contributions/notebook-backend.js';
import type { NotebookTargetResolver } from '../../contributions/notebook-target-resolver.js';
import { supervisionStatusMetaKey } from '../../handoff/session-report.js';
import {
  describeNotebookTarget,
  isLocalPathTarget,
  type NotebookTarget,
  type TargetArgument,
} from '../../notebook-target/notebook-target.js';
import type { ListedNotebook, ListedPeer } from '../../ports/listed-notebook.js';
import type { NotebookHandle, NotebookReadiness } from '../../ports/notebook-handle.js';
import type { NotebookSession } from '../../session/notebook-session.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { lostStateJson } from '../executions/kernel-history.js';
import {
  defineChildTool,
  jsonResult,
  type RegisteredChildTool,
  type ToolCallContext,
  textResult,
} from './child-tool-registry.js';
import { lostKernelStateOf } from './create-restore-tools.js';
import { summarizeCells } from './summarize-cells.js';
import { ToolError, toToolFailure } from './to-tool-failure.js';
import { given, toolParameters } from './tool-parameters.js';

/** Lines of the cell summary in a `connect_notebook` answer (the rest: `get_all_cells`). */
export const connectSummaryCells = 100;

const missingTargetText =
  "Missing required parameter: provide either 'path' (file path) or 'notebook_id' (UUID from list_active_notebooks), not both.";
const ambiguousTargetText = "Ambiguous parameters: provide either 'path' or 'notebook_id', not both.";
const noListerText = 'This server has no local daemon (runtimed) configured: no loaded plugin lists notebooks.';
const noCreatorText = 'This server cannot create notebooks: no loaded plugin creates them.';
const noPathText =
  "No path specified. For notebooks created with create_notebook(), you must provide a path (e.g., save_notebook(path='/path/to/file.ipynb'))";

/**
 * The session tools: `list_active_notebooks`, `connect_notebook`, `create_notebook`,
 * `save_notebook`, `disconnect_notebook`, `session_status`. Texts follow the original server
 * (nteract-behaviour §2.6–2.10). Every argument is validated before the slot is touched: a call
 * that fails validation parks, closes and records nothing.
 */
export function createSessionTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  let createCounter = 0;

  /** Resolves a notebook file path for `save_notebook` (the local file kind's rules: a `.ipynb` file). */
  const resolveNotebookPath = (raw: string): NotebookTarget =>
    deps.resolver.resolveAs('local-path', raw, { cwd: deps.cwd });

  const listActiveNotebooks = defineChildTool({
    name: 'list_active_notebooks',
    description:
      'List the notebooks open in the local nteract daemon (rooms), with their notebook_id, path, peers and kernel status. Use a notebook_id with connect_notebook.',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    meta: { 'anthropic/alwaysLoad': true },
    handler: async () => {
      const listers = deps.resolver.listers();
      if (listers.length === 0) throw new ToolError(noListerText);
      const rooms: ListedNotebook[] = [];
      try {
        // Every backend that lists (the daemon's rooms, then e.g. hosted notebooks by URL).
        for (const lister of listers) rooms.push(...((await lister.list?.()) ?? []));
      } catch (error) {
        throw toToolFailure(error, { wrap: (m) => `Failed to list notebooks. Is the daemon running? Error: ${m}` });
      }
      return jsonResult(rooms.map(roomJson));
    },
  });

  const connectNotebook = defineChildTool({
    name: 'connect_notebook',
    description:
      'Connect to a notebook and make it your active session: a .ipynb file by path (opened in the daemon) or an open notebook by notebook_id (UUID from list_active_notebooks). Give exactly one. A path that does not exist yet, in a directory that does, becomes a new empty notebook there (the answer says created: true); a path in a missing directory is an error. Connecting again switches the active session; the previous one stays parked (its kernel keeps running). Returns at once with the notebook as currently known; check readiness before running code.',
    inputSchema: z.object({
      path: toolParameters.optionalString(
        'Path of a .ipynb file (absolute, ~/…, or relative to the working directory).',
      ),
      notebook_id: toolParameters.optionalString('UUID of an open notebook (from list_active_notebooks).'),
      url: toolParameters.optionalString(
        'URL of a notebook on a Jupyter Server (http(s)://host[:port][/base]/lab/tree/<path>.ipynb, or /doc/tree/…, /notebooks/…; a JupyterHub user server: …/user/<name>/lab/tree/<path>.ipynb or …/hub/user-redirect/lab/tree/<path>.ipynb; the token as ?token=… or in JUPYTER_TOKEN / JUPYTERHUB_API_TOKEN).',
      ),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    meta: { 'anthropic/alwaysLoad': true },
    handler: async (args, context) => {
      const path = given(args.path);
      const notebookId = given(args.notebook_id);
      const url = given(args.url);
      const provided = [path, notebookId, url].filter((value) => value !== undefined).length;
      if (provided === 0) throw new ToolError(missingTargetText);
      if (provided > 1) throw new ToolError(ambiguousTargetText);

      // Validation first: no argument error may come once the slot is touched.
      const argument: TargetArgument = notebookId !== undefined ? 'notebook_id' : path !== undefined ? 'path' : 'url';
      const raw = (notebookId ?? path ?? url) as string;
      if (deps.resolver.takers(argument).length === 0) throw new ToolError(noBackendText(argument));
      const target = deps.resolver.resolveArgument(argument, raw, { cwd: deps.cwd });
      const backend = deps.resolver.backendFor(target);
      const previous = deps.slot.active?.handle.notebookId;
      const peerLabel = deps.peerLabel();
      let session: NotebookSession;
      try {
        session = await deps.activation.activate({
          key: `${target.kind}:${describeNotebookTarget(target)}`,
          target,
          origin: 'connect',
          connect: (signal) => backend.connect(target, { peerLabel, signal, ...askingOf(context) }),
        });
      } catch (error) {
        throw toToolFailure(error, {
          wrap: (m) =>
            path !== undefined ? `Failed to open notebook '${path}': ${m}` : `Failed to join notebook: ${m}`,
        });
      }
      const { handle } = session;
      const readiness = handle.readiness();
      return jsonResult({
        notebook_id: handle.notebookId,
        ...(handle.notebookPath !== undefined ? { path: handle.notebookPath } : {}),
        connected: true,
        ...(isLocalPathTarget(target) && !target.existed
          ? { created: true, note: `${target.path} did not exist: a new empty notebook was created there.` }
          : {}),
        readiness,
        projection: readiness.runtime === 'ready' ? 'ready' : 'retained',
        cells: await cellSummary(handle),
        ...(previous !== undefined && previous !== handle.notebookId ? { switched_from: previous } : {}),
        ...(await liveViewOf(backend)),
      });
    },
  });

  const createNotebook = defineChildTool({
    name: 'create_notebook',
    description:
      'Create a new untitled notebook in the daemon and make it your active session (waits until it is ready). It runs in the installed Jupyter kernel named by kernel (see list_kernels; default python3), or else one of the language runtime. The previous active session stays parked. Ephemeral notebooks (the default) are not kept once closed: save_notebook(path=…) to keep one. The kernel gets the environment of this server, and a Python kernel runs in the project virtualenv when there is one ($VIRTUAL_ENV, or .venv/venv here or above, with ipykernel); the result names its working directory and interpreter.',
    inputSchema: z.object({
      kernel: toolParameters.optionalString(
        "Name of an installed Jupyter kernel (from list_kernels), e.g. 'python3' (default) or 'ir' for R.",
      ),
      runtime: toolParameters.optionalString(
        "Language of the kernel when kernel is not given: 'python' (default) or another installed language, e.g. 'r'.",
      ),
      working_dir: toolParameters.optionalString(
        'Working directory of the kernel (default: the server working directory).',
      ),
      ephemeral: toolParameters.optionalBoolean('Discard the notebook when its room closes (default true).'),
      url: toolParameters.optionalString(
        'Create it on a Jupyter Server instead: the URL of a directory there (a new untitled notebook) or of a new .ipynb path.',
      ),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args, context) => {
      const runtimeArg = given(args.runtime)?.trim() || undefined;
      const kernelArg = given(args.kernel)?.trim() || undefined;
      const kernelChoice = {
        ...(runtimeArg === undefined ? {} : { runtime: runtimeArg }),
        ...(kernelArg === undefined ? {} : { kernel: kernelArg }),
      };
      const ephemeral = given(args.ephemeral) ?? true;
      const workingDir = resolveWorkingDir(given(args.working_dir), deps.cwd);
      const location = given(args.url)?.trim() || undefined;
      const creator = deps.resolver.creator(location === undefined ? undefined : 'url');
      const create = creator?.create?.bind(creator);
      if (!create) throw new ToolError(noCreatorText);
      const previous = deps.slot.active?.handle.notebookId;
      const peerLabel = deps.peerLabel();
      createCounter += 1;
      // Set by `connect` before the activation asks for the target of the handle it returned.
      let created: CreatedNotebook | undefined;
      let session: NotebookSession;
      try {
        session = await deps.activation.activate({
          key: `create:${createCounter}`,
          target: () => (created as CreatedNotebook).target,
          origin: 'create',
          connect: async (signal) => {
            created = await create(
              { ...kernelChoice, workingDir, ephemeral, ...(location === undefined ? {} : { location }) },
              { peerLabel, signal, ...askingOf(context) },
            );
            const { handle } = created;
            let readiness: NotebookReadiness;
            try {
              readiness = await handle.waitUntilReady(signal);
            } catch (error) {
              void handle.close();
              if (signal.aborted) throw error;
              throw new ToolError(
                `Notebook created but did not become ready: ${error instanceof Error ? error.message : String(error)}`,
                { cause: error },
              );
            }
            if (readiness.runtime === 'failed') {
              // A notebook whose kernel never came up is no answer to "create a notebook to run in".
              await handle.close().catch(() => undefined);
              throw new ToolError(
                `Failed to create notebook: its kernel did not start (${readiness.reason ?? 'no reason given'}). ${
                  ephemeral
                    ? 'The new notebook was closed; being ephemeral, it is not kept.'
                    : `The untitled notebook ${handle.notebookId} is kept without a kernel; connect_notebook(notebook_id) opens it.`
                } Check the kernel with list_kernels, or pick another (kernel=…).`,
              );
            }
            return handle;
          },
        });
      } catch (error) {
        throw toToolFailure(error, { wrap: (m) => `Failed to create notebook: ${m}` });
      }
      const { handle } = session;
      const room = location === undefined ? await listedNotebook(deps.resolver, handle.notebookId) : undefined;
      return jsonResult({
        notebook_id: handle.notebookId,
        ...(location === undefined ? {} : { url: describeNotebookTarget(session.target) }),
        ...(kernelArg === undefined && runtimeArg === undefined
          ? { kernel: handle.kernelName ?? 'python3', runtime: 'python' }
          : { ...kernelChoice, ...(handle.kernelName === undefined ? {} : { kernel: handle.kernelName }) }),
        ephemeral: location === undefined ? ephemeral : false,
        ...(location === undefined ? { working_dir: workingDir, interpreter: room?.kernelInterpreter ?? null } : {}),
        readiness: handle.readiness(),
        ...(previous !== undefined && previous !== handle.notebookId ? { switched_from: previous } : {}),
        ...(await liveViewOf(creator)),
      });
    },
  });

  const saveNotebook = defineChildTool({
    name: 'save_notebook',
    session: 'mutation',
    description:
      'Save the active notebook as a .ipynb file: to path, or to its own file when it has one. The notebook_id stays the same; later rejoins use the file.',
    inputSchema: z.object({
      path: toolParameters.optionalString(
        'Where to save (.ipynb; absolute, ~/…, or relative to the working directory).',
      ),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler: async (args) => {
      const rawPath = given(args.path);
      const path = rawPath === undefined ? undefined : describeNotebookTarget(resolveNotebookPath(rawPath));
      const access = deps.slot.access('mutation');
      try {
        const saved = await access.handle.save(path);
        return jsonResult({ path: saved.path, notebook_id: saved.notebookId });
      } catch (error) {
        throw toToolFailure(error, {
          wrap: (m) => `Failed to save notebook: ${m}`,
          codes: { path_already_open: (m) => m, no_path: () => noPathText },
        });
      }
    },
  });

  const disconnectNotebook = defineChildTool({
    name: 'disconnect_notebook',
    description:
      'Release a session: the active one (no notebook_id) or a given active or parked one. Only this peer leaves; the notebook stays open for others, and the daemon may stop its kernel after a while once no peer is left.',
    inputSchema: z.object({
      notebook_id: toolParameters.optionalString('Notebook to release (default: the active session).'),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args) => {
      const requested = given(args.notebook_id)?.trim();
      if (requested === undefined) {
        const recovering = deps.recovery.recovering;
        const removed = deps.slot.disconnect();
        if (!removed && recovering) {
          // The disconnect advanced the intent epoch: the automatic rejoin will not happen.
          return textResult(
            `No active session. Cancelled the automatic rejoin of ${describeNotebookTarget(recovering)}; use connect_notebook or create_notebook to start a new one.`,
          );
        }
        if (!removed) {
          throw new ToolError(
            'No active session to disconnect. Pass notebook_id to disconnect a specific parked session.',
          );
        }
        return textResult(disconnectedText(removed.kind, removed.session.handle.notebookId));
      }
      const removed =
        deps.slot.disconnect(requested) ??
        (requested.toLowerCase() !== requested ? deps.slot.disconnect(requested.toLowerCase()) : undefined);
      if (!removed) {
        throw new ToolError(
          `No active or parked session with notebook_id ${quoteClientText(requested)}. Use list_active_notebooks to see available sessions.`,
        );
      }
      return textResult(disconnectedText(removed.kind, removed.session.handle.notebookId));
    },
  });

  const sessionStatus = defineChildTool({
    name: 'session_status',
    description:
      'Where this server stands: the active session (target, readiness, daemon incarnation, the working directory and interpreter of its kernel), parked sessions, why the last session was dropped, parked-session evictions, the daemon (live, version, pid), the peer label, and the session report (the rejoin target; after a restart, whether the handed notebook was rejoined).',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    // A supervising proxy adds its own section to this answer.
    meta: { [supervisionStatusMetaKey]: true },
    handler: async () => {
      const services = await deps.resolver.serviceStatus();
      const listed = await listedNotebooks(deps.resolver);
      // Read the slot after the awaits, so the answer describes one moment.
      const { slot } = deps;
      const active = slot.active;
      const drop = slot.lastDrop;
      const room = listed.find((candidate) => candidate.notebookId === active?.handle.notebookId);
      return jsonResult({
        active: active
          ? {
              ...activeJson(active),
              ...(active.handle.kernelNotice === undefined
                ? {}
                : lostStateJson(lostKernelStateOf(deps, active.handle))),
              ephemeral: room?.ephemeral ?? null,
              working_dir: room?.workingDir ?? null,
              interpreter: room?.kernelInterpreter ?? null,
              ...(room?.peers === undefined ? {} : { peers: room.peers.map(peerJson) }),
            }
          : null,
        parked: slot.parked.map((session) => ({
          notebook_id: session.handle.notebookId,
          path: session.handle.notebookPath ?? null,
        })),
        last_drop: drop
          ? {
              reason: drop.reason,
              notebook_id: drop.notebookId ?? null,
              notebook_path: drop.notebookPath ?? null,
              rejoin_target: drop.rejoinTarget ? describeNotebookTarget(drop.rejoinTarget) : null,
              ...(drop.detail === undefined ? {} : { detail: drop.detail }),
            }
          : null,
        evictions: slot.evictions.map((eviction) => ({
          notebook_id: eviction.notebookId,
          notebook_path: eviction.notebookPath ?? null,
          at: new Date(eviction.at).toISOString(),
        })),
        ...services,
        peer_label: deps.peerLabel(),
        session_report: deps.recovery.report(),
      });
    },
  });

  return [listActiveNotebooks, connectNotebook, createNotebook, saveNotebook, disconnectNotebook, sessionStatus];
}

/** `connect_notebook` got an argument no loaded backend takes. */
/** What a backend reaching a notebook for this call may ask the person through (none: it may not ask). */
function askingOf(context: ToolCallContext): Pick<BackendConnectContext, 'urlElicitation'> {
  return context.urlElicitation === undefined ? {} : { urlElicitation: context.urlElicitation };
}

function noBackendText(argument: TargetArgument): string {
  return `This server cannot open notebooks by '${argument}': no loaded plugin handles them.`;
}

function disconnectedText(kind: 'active' | 'parked', notebookId: string): string {
  return kind === 'parked'
    ? `Disconnected parked session ${notebookId}. Peer connection released; daemon eviction timer will start.`
    : `Disconnected active session ${notebookId}. No active session now; use connect_notebook or create_notebook to start a new one.`;
}

function roomJson(room: ListedNotebook): Record<string, unknown> {
  return {
    notebook_id: room.notebookId,
    active_peers: room.activePeers,
    has_kernel: room.hasKernel,
    kernel_status: room.kernelStatus ?? null,
    ephemeral: room.ephemeral,
    notebook_path: room.notebookPath ?? null,
    ...(room.peers === undefined ? {} : { peers: room.peers.map(peerJson) }),
  };
}

/** A peer of a notebook as the session tools show it: its label, the cell it is on, the cell it runs. */
function peerJson(peer: ListedPeer): Record<string, unknown> {
  return { label: peer.label, cell_id: peer.cellId, running_cell_id: peer.runningCellId };
}

function activeJson(session: NotebookSession): Record<string, unknown> {
  const { handle } = session;
  return {
    notebook_id: handle.notebookId,
    path: handle.notebookPath ?? null,
    target: describeNotebookTarget(session.target),
    origin: session.origin,
    activation: session.activation,
    readiness: handle.readiness(),
    ...(handle.kernelNotice === undefined ? {} : { kernel_notice: handle.kernelNotice }),
    conditions: handle.conditions ?? [],
    daemon_incarnation: handle.daemonIncarnation?.toJSON() ?? null,
  };
}

/** The notebooks every listing backend has open now; a backend that cannot list now is left out. */
async function listedNotebooks(backends: NotebookTargetResolver): Promise<readonly ListedNotebook[]> {
  const lists = await Promise.all(backends.listers().map((backend) => backend.list?.().catch(() => []) ?? []));
  return lists.flat();
}

/** What the listing backends say of one notebook (e.g. its kernel's interpreter), when they can say. */
async function listedNotebook(
  backends: NotebookTargetResolver,
  notebookId: string,
): Promise<ListedNotebook | undefined> {
  return (await listedNotebooks(backends)).find((room) => room.notebookId === notebookId);
}

/** The cells as known now (the retained projection before convergence); a failure is said, not thrown. */
/** `{ live_page: <where a person watches it> }` when the backend serves a live view now, else nothing. */
async function liveViewOf(backend: NotebookBackend | undefined): Promise<{ live_page?: string }> {
  const view = await backend?.liveView?.().catch(() => undefined);
  return view === undefined ? {} : { live_page: view };
}

async function cellSummary(handle: NotebookHandle): Promise<string> {
  try {
    return summarizeCells(await handle.listCells(), { limit: connectSummaryCells });
  } catch (error) {
    return `(cells not available yet: ${error instanceof Error ? error.message : String(error)})`;
  }
}

/** `~` expanded, relative to the cwd; must be an existing directory. */
function resolveWorkingDir(raw: string | undefined, cwd: string): string {
  if (raw === undefined || raw.trim() === '') return cwd;
  let expanded = raw.trim();
  if (expanded === '~') expanded = homedir();
  else if (expanded.startsWith('~/') || expanded.startsWith('~\\')) expanded = join(homedir(), expanded.slice(2));
  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
  let isDirectory = false;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) throw new ToolError(`working_dir '${absolute}' is not an existing directory.`);
  return absolute;
}
