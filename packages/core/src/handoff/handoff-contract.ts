/**
 * What the proxy (`nteract-mcp`) and the child (`runt-mcp`) agree on, besides MCP itself. The
 * two processes import these names from here and nowhere else; the other parts of the contract
 * are the structured session report (`session-report.ts`), the peer label (`format-peer-label.ts`)
 * and the message size limits (`mcp-message-limits.ts`), all in this folder.
 *
 * Nothing in a result's human text is part of the contract: the child states what the proxy
 * needs in `_meta`, and the proxy repeats only that.
 */

/**
 * The environment the proxy gives every child it starts (on top of its own environment).
 * - `rejoinNotebook`: the notebook a restarted child rejoins before it serves (a canonical path, a
 *   notebook UUID or a hosted URL without credentials); set on every spawn after the first when a
 *   rejoin target is known, never on the first.
 * - `agentSession`: the `<session>` part of the peer label suffix `agent:<slug>:<session>`, stable
 *   for the life of one proxy, so restarted children keep their attribution.
 * - `peerLabel`: the label to use until the client's (replayed) `initialize` arrives.
 * - `changeCursor`: where the previous child last told the agent about other peers' changes:
 *   `<notebook id> <cursor>` (from its session report), so the next child's first answer names
 *   the changes made since, not none.
 * - `credentialFd`: the child's file descriptor of the credential channel
 *   (`credential-channel.ts`), set when the proxy opened one; the tokens themselves never travel
 *   in the environment.
 * - `knownTasks`: the ids of the tasks the client created through the proxy with earlier children
 *   (read from their answers), oldest first, as a JSON array of strings, so the next child's
 *   `tasks/list` lists them too; set on restarts when there are any. The proxy bounds it (see its
 *   `ClientTasks`): the oldest are left out past the bound.
 */
export const handoffEnvironment = Object.freeze({
  rejoinNotebook: 'NTERACT_MCP_REJOIN_NOTEBOOK',
  agentSession: 'NTERACT_MCP_AGENT_SESSION',
  peerLabel: 'NTERACT_MCP_PEER_LABEL',
  changeCursor: 'NTERACT_MCP_CHANGE_CURSOR',
  credentialFd: 'NTERACT_MCP_CREDENTIAL_FD',
  knownTasks: 'NTERACT_MCP_KNOWN_TASKS',
} as const);

/** The handoff a child reads from its environment (absent fields: not handed). Pure. */
export interface ChildHandoff {
  readonly rejoinNotebook?: string;
  readonly agentSession?: string;
  readonly peerLabel?: string;
  readonly changeCursor?: string;
  readonly credentialFd?: string;
  /** Task ids, oldest first (blank ones left out). */
  readonly knownTasks?: readonly string[];
}

/** The handoff fields carried as one plain string each. */
type TextKey = Exclude<keyof ChildHandoff, 'knownTasks'>;
const textKeys = (Object.keys(handoffEnvironment) as (keyof ChildHandoff)[]).filter(
  (key): key is TextKey => key !== 'knownTasks',
);

/** The variables a proxy adds to a child's environment for `handoff` (blank values and an empty list left out). Pure. */
export function handoffToEnvironment(handoff: ChildHandoff): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of textKeys) {
    const value = handoff[key]?.trim();
    if (value) env[handoffEnvironment[key]] = value;
  }
  const tasks = handoff.knownTasks?.filter((taskId) => taskId.trim().length > 0) ?? [];
  if (tasks.length > 0) env[handoffEnvironment.knownTasks] = JSON.stringify(tasks);
  return env;
}

/**
 * The handoff in a child's environment; blank values count as absent, and so does a task list
 * that is not a JSON array of strings (its blank entries are left out). Pure.
 */
export function handoffFromEnvironment(env: Readonly<Record<string, string | undefined>>): ChildHandoff {
  const handoff: { -readonly [K in TextKey]?: string } & { knownTasks?: readonly string[] } = {};
  for (const key of textKeys) {
    const value = env[handoffEnvironment[key]]?.trim();
    if (value) handoff[key] = value;
  }
  const tasks = readTaskIds(env[handoffEnvironment.knownTasks]);
  if (tasks.length > 0) handoff.knownTasks = tasks;
  return handoff;
}

/** The task ids of a `knownTasks` value; none when it is not a JSON array of strings. */
function readTaskIds(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) return [];
  return (parsed as string[]).filter((taskId) => taskId.trim().length > 0);
}

/** One line per handoff variable, for a child's `--help`. */
export const handoffEnvironmentHelp: readonly (readonly [name: string, meaning: string])[] = [
  [handoffEnvironment.rejoinNotebook, 'A notebook to rejoin at start (path, UUID, URL); set by the proxy on restarts.'],
  [handoffEnvironment.agentSession, 'The <session> part of the peer label suffix agent:<slug>:<session>.'],
  [handoffEnvironment.peerLabel, "The peer label to use until the client's initialize arrives (set by the proxy)."],
  [
    handoffEnvironment.changeCursor,
    "Where the previous child's change notes stood: '<notebook id> <cursor>' (set by the proxy).",
  ],
  [handoffEnvironment.credentialFd, 'The fd of the private pipe the proxy hands URL tokens over (set by the proxy).'],
  [
    handoffEnvironment.knownTasks,
    'A JSON array of the task ids the client created with earlier children, oldest first (set by the proxy).',
  ],
];

/**
 * The `_meta` key of a forwarded `tools/call` request carrying the proxy's idempotency key, and
 * of a tool definition (in `tools/list`) whose value {@link idempotencyHonored} says the child
 * passes the key to the daemon, so the proxy may resend that call once after a crash.
 */
export const idempotencyMetaKey = 'nteract/idempotencyKey';

/** The value of {@link idempotencyMetaKey} in a tool definition whose mutations are deduplicated. */
export const idempotencyHonored = 'honored';

/** The `_meta` of a tool definition that honours the idempotency key. */
export const idempotencyHonoredMeta: Readonly<Record<string, unknown>> = Object.freeze({
  [idempotencyMetaKey]: idempotencyHonored,
});

/** True when a tool definition's `_meta` says the child deduplicates its mutations. Pure. */
export function honorsIdempotency(meta: unknown): boolean {
  return (
    typeof meta === 'object' &&
    meta !== null &&
    (meta as Record<string, unknown>)[idempotencyMetaKey] === idempotencyHonored
  );
}

/**
 * The `_meta` key (value `true`) of a `tools/list` the proxy sends a child on its own behalf: the
 * list as a client that declared no extension gets it (what the proxy keeps in its cache, shared
 * by every client), whatever extensions the client the child serves declared.
 */
export const plainToolListMetaKey = 'nteract/plainToolList';

/**
 * The `_meta` key (value `true`) of a resource subscription the proxy gives a new child on the
 * client's behalf (a legacy `resources/subscribe`, or a native `subscriptions/listen` naming
 * `resourceSubscriptions`): the client made it with an earlier child. The child keeps it even
 * while its notebook is not open there (yet), and tells one `notifications/resources/updated` for
 * it once the notebook is, since what changed while no child watched is unknown.
 */
export const restoredSubscriptionMetaKey = 'nteract/restoredSubscription';

/**
 * Child exit codes with a meaning to the proxy. `upgradeHandoff` (75, `EX_TEMPFAIL`): the daemon's
 * version changed under the child; the proxy starts a new child at once, outside the crash budget.
 */
export const childExitCodes = Object.freeze({ upgradeHandoff: 75 } as const);

const daemonMarker = '(daemon ';

/** The child's `serverInfo.title` when it knows its daemon's version: `nteract (daemon 2.3.2)`. Pure. */
export function formatServerTitle(daemonVersion: string): string {
  return `nteract ${daemonMarker}${daemonVersion})`;
}

/**
 * A rejoin target as it may cross the process boundary, be echoed or be stored: trimmed, and a
 * http(s) URL without user info and without its `token` query parameter (credentials never travel
 * with a target). Anything else is returned trimmed. Pure.
 */
export function rejoinTargetWithoutCredentials(value: string): string {
  const trimmed = value.trim();
  if (!/^https?:\/\//i.test(trimmed)) return trimmed;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return trimmed;
  }
  if (!url.username && !url.password && !url.searchParams.has('token')) return trimmed;
  url.username = '';
  url.password = '';
  url.searchParams.delete('token');
  return url.toString();
}
