import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';
import { CoreError } from '../errors/core-error.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';

/** What a tool shows of the notebook, as the tool declares it (`ChildTool.shows`): the cells it touched. */
export type ToolShows = 'cells';

/** A resource served only to clients that declared the extension (listed and read like any other). */
export interface ExtensionResource {
  readonly uri: string;
  readonly name: string;
  readonly description?: string;
  readonly mimeType: string;
  /** The resource's text and the `_meta` of its contents entry. */
  read(): { readonly text: string; readonly meta?: Readonly<Record<string, unknown>> };
}

/** A call of a tool that shows something, answered, as an extension sees it to add its structured content. */
export interface ShownCall {
  readonly shows: ToolShows;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The tool's result as it goes to the client (content, isError, `_meta`). */
  readonly result: Readonly<Record<string, unknown>>;
  /** The active notebook's handle after the call, if there is one. */
  readonly handle: NotebookHandle | undefined;
  /** Where a person watches the active notebook live, when its backend serves such a page. */
  liveView(): Promise<string | undefined>;
}

/**
 * A protocol extension a client may declare (`capabilities.extensions[<extension>]`, in
 * `initialize` or in a request's declared capabilities): what the server then adds for that client
 * and for no other. The server announces it in its own capabilities, lists and reads its
 * {@link resources}, merges {@link toolMeta} into the `_meta` of the tools that show something, and
 * gives their results {@link structuredContent}. A client that did not declare it gets answers as
 * if no extension were loaded. Consumed by the child server and by the proxy (which announces it
 * in its own handshake and keeps its cached tool list free of it).
 */
export interface ClientExtension extends Contribution {
  readonly specificationVersion: 'v1';
  /** The extension's name in the capabilities' `extensions` map, e.g. `io.modelcontextprotocol/ui`. */
  readonly extension: string;
  /** What the server announces under `capabilities.extensions[extension]`. */
  readonly settings: Readonly<Record<string, unknown>>;
  readonly resources: readonly ExtensionResource[];
  /** The `_meta` members a tool that shows `shows` carries in `tools/list`; `undefined`: none. */
  toolMeta(shows: ToolShows): Readonly<Record<string, unknown>> | undefined;
  /** The result's `structuredContent`; `undefined` leaves the result as it is. Must not throw. */
  structuredContent(call: ShownCall): Promise<Record<string, unknown> | undefined>;
}

/** The point plugins contribute {@link ClientExtension}s to (listed in `contributionPoints`). */
export const clientExtensionPoint = defineContributionPoint<ClientExtension>('core', 'ClientExtension', ['v1'], {
  validate: (extensions) => {
    const names = extensions.map((extension) => extension.extension);
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice !== undefined)
      throw new CoreError('invalidContribution', `ClientExtension: two contributions serve '${twice}'`);
  },
});

/** The token a plugin binds its ClientExtension to. */
export const ClientExtension = clientExtensionPoint.token;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The extensions of `extensions` that the client capabilities `declared` name (in their `extensions` map). */
export function declaredExtensions(
  extensions: readonly ClientExtension[],
  declared: Readonly<Record<string, unknown>> | undefined,
): readonly ClientExtension[] {
  const map = declared?.extensions;
  if (!isRecord(map) || extensions.length === 0) return [];
  return extensions.filter((extension) => map[extension.extension] !== undefined);
}

/**
 * `capabilities` with the `extensions` the client declared announced (each with its settings);
 * `capabilities` itself when it declared none of them.
 */
export function announceExtensions(
  capabilities: Readonly<Record<string, unknown>>,
  declared: readonly ClientExtension[],
): Readonly<Record<string, unknown>> {
  if (declared.length === 0) return capabilities;
  const present = isRecord(capabilities.extensions) ? capabilities.extensions : {};
  const added = Object.fromEntries(declared.map((extension) => [extension.extension, { ...extension.settings }]));
  return { ...capabilities, extensions: { ...present, ...added } };
}

/** `tool` (a `tools/list` entry that shows `shows`) with the `_meta` the declared extensions add; `tool` itself when none adds any. */
export function decorateTool<T extends { readonly _meta?: unknown }>(
  tool: T,
  shows: ToolShows | undefined,
  declared: readonly ClientExtension[],
): T {
  if (shows === undefined || declared.length === 0) return tool;
  const added = declared.map((extension) => extension.toolMeta(shows)).filter((meta) => meta !== undefined);
  if (added.length === 0) return tool;
  const meta = isRecord(tool._meta) ? tool._meta : {};
  return { ...tool, _meta: Object.assign({}, meta, ...added) };
}
