import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  announceExtensions,
  type ClientExtension,
  declaredExtensions,
  decorateTool,
  type ToolShows,
} from '../contributions/client-extension.js';
import type { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import type { ServerDescription } from '../contributions/protocol-admission.js';
import { plainToolListMetaKey } from '../handoff/handoff-contract.js';
import type { SessionSlot } from '../session/session-slot.js';
import type { ChildToolRegistry } from './tools/child-tool-registry.js';

/** What {@link ClientExtensionAnswers.decorateResult} needs to know of one answered call. */
export interface AnsweredCall {
  /** What the called tool shows (its declaration), if anything. */
  readonly shows: ToolShows | undefined;
  /** The loaded extensions the client declared for this call. */
  readonly declared: readonly ClientExtension[];
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly slot: SessionSlot;
  readonly resolver: NotebookTargetResolver;
}

/**
 * What the child server adds to its answers for a client that declared a loaded
 * {@link ClientExtension}: the extension in its handshake's capabilities, the `_meta` of the
 * tools that show something, and the structured content of their results. For a client that
 * declared none (or with none loaded) every answer is returned as it was, the same object.
 */
export class ClientExtensionAnswers {
  public readonly all: readonly ClientExtension[];

  public constructor(extensions: readonly ClientExtension[]) {
    this.all = extensions;
  }

  /** The server description a handshake of a client declaring `declared` presents. */
  public describe(
    description: ServerDescription,
    declared: Readonly<Record<string, unknown>> | undefined,
  ): ServerDescription {
    const extensions = declaredExtensions(this.all, declared);
    if (extensions.length === 0) return description;
    return { ...description, capabilities: announceExtensions(description.capabilities, extensions) };
  }

  /** Whether a `tools/list` with `params` asks for the list as an undeclaring client gets it (the proxy's own). */
  public asksPlainList(params: { readonly _meta?: unknown } | undefined): boolean {
    const meta = params?._meta;
    return (
      typeof meta === 'object' && meta !== null && (meta as Record<string, unknown>)[plainToolListMetaKey] === true
    );
  }

  /** The registry's `tools/list` entries, each that shows something with what `declared` add to it. */
  public decorateTools(registry: ChildToolRegistry, declared: readonly ClientExtension[]): Tool[] {
    const tools = registry.list();
    if (declared.length === 0) return tools;
    return tools.map((tool) => decorateTool(tool, registry.policies(tool.name)?.shows, declared));
  }

  /**
   * `result` with the `structuredContent` the first declared extension gives it, when the tool
   * shows something and the result has none; `result` itself otherwise. An extension that fails
   * leaves the result as it was.
   */
  public async decorateResult(result: CallToolResult, call: AnsweredCall): Promise<CallToolResult> {
    if (call.shows === undefined || call.declared.length === 0 || result.structuredContent !== undefined) return result;
    const session = call.slot.active;
    for (const extension of call.declared) {
      const structured = await extension
        .structuredContent({
          shows: call.shows,
          arguments: call.arguments,
          result,
          handle: session?.handle,
          liveView: async () =>
            session === undefined
              ? undefined
              : await call.resolver
                  .backendFor(session.target)
                  .liveView?.()
                  .catch(() => undefined),
        })
        .catch(() => undefined);
      if (structured !== undefined) return { ...result, structuredContent: structured };
    }
    return result;
  }
}
