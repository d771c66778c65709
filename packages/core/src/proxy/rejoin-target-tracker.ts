import { randomBytes } from 'node:crypto';
import { formatPeerLabel } from '../child-server/format-peer-label.js';
import type { SessionReport } from '../contract/session-report.js';
import { type ClientIdentity, readClientIdentity } from '../contributions/protocol-admission.js';

/** The variable a restarted child reads its rejoin target from (a path, a UUID or a hosted URL). */
export const rejoinNotebookEnvironmentVariable = 'NTERACT_MCP_REJOIN_NOTEBOOK';

/** The variable carrying the `<session>` part of the peer label suffix `agent:<slug>:<session>`. */
export const agentSessionEnvironmentVariable = 'NTERACT_MCP_AGENT_SESSION';

/** Tools whose success makes their notebook the preferred restart target (`open_notebook` is the legacy alias). */
const activatingTools: ReadonlySet<string> = new Set(['connect_notebook', 'open_notebook', 'create_notebook']);

export interface RejoinTargetTrackerOptions {
  /** The `<session>` of the peer label suffix; a random 8-hex value when absent or blank. */
  readonly agentSession?: string;
}

/** Where the current target came from: the child's session report, or the text of a tool result. */
export type RejoinTargetSource = 'report' | 'tool-text';

/**
 * The proxy's one preferred restart target: what it seeds as `NTERACT_MCP_REJOIN_NOTEBOOK` when it
 * starts a new child, learned from the tool results it forwards.
 *
 * A child that sends session reports (`_meta['nteract/session']`, see `session-report.ts`) is
 * believed as it is: {@link observeSessionReport} takes the report's target (`null` clears it).
 * The text rules below are the fallback for a child that sends no report
 * ({@link observeToolResult}); the proxy decides which one applies to a result.
 *
 * - A successful (`isError` not `true`) `connect_notebook` / `open_notebook` / `create_notebook`
 *   sets it, from the child's JSON text result: a hosted notebook's URL (result `url`, else the
 *   `url` argument, when it is an http(s) URL) without credentials (user info and the
 *   `token` query parameter are dropped); else the child-reported canonical `path` of a local
 *   file-backed notebook; else its `notebook_id`. When the result names none of these, the
 *   arguments are used as the original proxy did: `notebook_id` when that key is present (and only
 *   if it is a non-empty string: a present non-string value yields nothing, not the `path`), else a
 *   string `path`, verbatim.
 * - A successful `save_notebook` whose result has `path` and `notebook_id` moves the target to the
 *   saved path when the target is that notebook (its UUID, or a target learned with that
 *   `notebook_id`: a save-as rebinds the room to the new file). Hosted targets are never moved.
 * - A successful `disconnect_notebook` clears the target when the active notebook was released (no
 *   `notebook_id` argument, a reply starting `Disconnected active session`, or an explicit id that
 *   is the tracked notebook) and keeps it when a parked one was (`Disconnected parked session`).
 * - Failed calls, other tools, and results that are not objects never change it.
 *
 * Also holds the upstream client's identity and the agent session, so restarted children keep the
 * same `agent:<slug>:<session>` peer label suffix.
 * Does not guarantee that the target still exists or that a rejoin will succeed; it is a hint for
 * the next child. Pure: no I/O (the session value comes from `crypto.randomBytes`).
 */
export class RejoinTargetTracker {
  readonly #agentSession: string;
  #target: string | undefined;
  /** The daemon notebook id the target was learned with, when known (for save/disconnect matching). */
  #targetNotebookId: string | undefined;
  #client: ClientIdentity | undefined;
  #source: RejoinTargetSource | undefined;

  public constructor(options: RejoinTargetTrackerOptions = {}) {
    this.#agentSession = options.agentSession?.trim() || randomBytes(4).toString('hex');
  }

  /** The preferred restart target, if any. */
  public current(): string | undefined {
    return this.#target;
  }

  /** Where {@link current} came from; `undefined` while nothing set it. */
  public targetSource(): RejoinTargetSource | undefined {
    return this.#source;
  }

  /**
   * Takes the target from a child's session report: its `target` (`null` clears), with its
   * `notebookId`. A hosted URL loses any credentials (user info, `token`) even if the child left
   * them in, so they never reach a child environment or `session_status`.
   */
  public observeSessionReport(report: SessionReport): void {
    const target = report.target === null ? undefined : (hostedIdentity(report.target) ?? report.target.trim());
    this.#set(target, target === undefined ? undefined : report.notebookId, 'report');
  }

  /** Updates the target from one forwarded `tools/call` and its result (the text rules of the class). */
  public observeToolResult(toolName: string, args: unknown, result: unknown): void {
    if (!isRecord(result) || result.isError === true) return;
    const argumentsRecord = isRecord(args) ? args : {};
    if (activatingTools.has(toolName)) this.#observeActivation(argumentsRecord, result);
    else if (toolName === 'save_notebook') this.#observeSave(result);
    else if (toolName === 'disconnect_notebook') this.#observeDisconnect(argumentsRecord, result);
  }

  /** Records the upstream `clientInfo` (from `initialize` or a native request's `_meta`); invalid values are ignored. */
  public observeClientInfo(clientInfo: unknown): void {
    const identity = readClientIdentity(clientInfo);
    if (identity) this.#client = identity;
  }

  /** The upstream client's identity, once seen. */
  public clientIdentity(): ClientIdentity | undefined {
    return this.#client;
  }

  /** The stable session value of this proxy, passed to every child as `NTERACT_MCP_AGENT_SESSION`. */
  public agentSession(): string {
    return this.#agentSession;
  }

  /** The peer label a child builds from the client identity and the agent session. */
  public peerLabel(): string {
    return formatPeerLabel(this.#client, this.#agentSession);
  }

  /** `agent:<slug>:<session>`: the part of the peer label kept across child restarts. */
  public agentSuffix(): string {
    const label = this.peerLabel();
    return label.slice(label.lastIndexOf(' agent:') + 1);
  }

  /**
   * The variables to add to a child's environment: always the agent session; the rejoin target
   * only on a restart (never on the first spawn) and only when one is known.
   */
  public childEnvironment(spawn: { readonly restart: boolean }): Record<string, string> {
    const env: Record<string, string> = { [agentSessionEnvironmentVariable]: this.#agentSession };
    if (spawn.restart && this.#target !== undefined) env[rejoinNotebookEnvironmentVariable] = this.#target;
    return env;
  }

  #observeActivation(args: Record<string, unknown>, result: Record<string, unknown>): void {
    const chosen = activatedTarget(args, firstJsonObject(result));
    if (chosen) this.#set(chosen.target, chosen.notebookId, 'tool-text');
  }

  #observeSave(result: Record<string, unknown>): void {
    const reply = firstJsonObject(result);
    const savedPath = nonEmptyString(reply?.path);
    const savedId = nonEmptyString(reply?.notebook_id);
    if (savedPath === undefined || savedId === undefined || this.#target === undefined) return;
    if (hostedIdentity(this.#target) !== undefined) return;
    if (sameId(this.#target, savedId) || sameId(this.#targetNotebookId, savedId))
      this.#set(savedPath, savedId, 'tool-text');
  }

  #observeDisconnect(args: Record<string, unknown>, result: Record<string, unknown>): void {
    const reply = firstText(result)?.trimStart() ?? '';
    if (reply.startsWith('Disconnected parked session')) return;
    const requested = args.notebook_id;
    const activeReleased =
      requested === undefined ||
      requested === null ||
      reply.startsWith('Disconnected active session') ||
      (typeof requested === 'string' && (sameId(this.#target, requested) || sameId(this.#targetNotebookId, requested)));
    if (activeReleased) this.#set(undefined, undefined, 'tool-text');
  }

  #set(target: string | undefined, notebookId: string | undefined, source: RejoinTargetSource): void {
    this.#target = target;
    this.#targetNotebookId = notebookId;
    this.#source = source;
  }
}

/** The target a successful connect/open/create names, by the precedence of the class rules. */
function activatedTarget(
  args: Record<string, unknown>,
  reply: Record<string, unknown> | undefined,
): { readonly target: string; readonly notebookId: string | undefined } | undefined {
  const replyId = nonEmptyString(reply?.notebook_id);
  const hosted = [reply?.url, args.url].map(hostedIdentity).find((url) => url !== undefined);
  if (hosted !== undefined) return { target: hosted, notebookId: undefined };
  const replyPath = nonEmptyString(reply?.path);
  if (replyPath !== undefined) return { target: replyPath, notebookId: replyId };
  if (replyId !== undefined) return { target: replyId, notebookId: replyId };
  if (Object.hasOwn(args, 'notebook_id')) {
    const argumentId = nonEmptyString(args.notebook_id);
    return argumentId === undefined ? undefined : { target: argumentId, notebookId: argumentId };
  }
  const argumentPath = nonEmptyString(args.path);
  return argumentPath === undefined ? undefined : { target: argumentPath, notebookId: undefined };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim().length > 0 ? value.trim() : undefined;
}

function sameId(a: string | undefined, b: string): boolean {
  return a !== undefined && a.trim().toLowerCase() === b.trim().toLowerCase();
}

function textItems(result: Record<string, unknown>): string[] {
  const content = Array.isArray(result.content) ? result.content : [];
  return content
    .filter((item): item is { type: 'text'; text: string } => isRecord(item) && item.type === 'text')
    .map((item) => item.text)
    .filter((text) => typeof text === 'string');
}

function firstText(result: Record<string, unknown>): string | undefined {
  return textItems(result)[0];
}

/** The first text item of a result that parses as a JSON object. */
function firstJsonObject(result: Record<string, unknown>): Record<string, unknown> | undefined {
  for (const text of textItems(result)) {
    try {
      const value: unknown = JSON.parse(text);
      if (isRecord(value)) return value;
    } catch {
      // not JSON: try the next item
    }
  }
  return undefined;
}

/** An http(s) notebook URL without user info and without the `token` query parameter; else `undefined`. */
function hostedIdentity(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value.trim())) return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  url.username = '';
  url.password = '';
  if (url.searchParams.has('token')) url.searchParams.delete('token');
  return url.toString();
}
