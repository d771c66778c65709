import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ExtensionResource } from '../../contributions/client-extension.js';
import { restoredSubscriptionMetaKey } from '../../handoff/handoff-contract.js';
import type { SessionRecoveryState } from '../../session/session-recovery-state.js';
import type { SessionSlot } from '../../session/session-slot.js';
import { type NotebookResources, parseNotebookResourceUri } from './notebook-resources.js';
import type { ResourceSubscriptions } from './resource-subscriptions.js';

export interface ResourceHandlersInit {
  readonly slot: SessionSlot;
  readonly recovery: SessionRecoveryState;
  readonly resources: NotebookResources;
  readonly subscriptions: ResourceSubscriptions;
  /** How long a request for a notebook being brought back waits for it, as the tools on the session do. */
  readonly recoveryWaitMs: number;
  /** The resources of the client extensions the client declared for a request (`method`, `params`). */
  readonly extensionResources: (method: string, params: Record<string, unknown>) => readonly ExtensionResource[];
}

/**
 * The child's `resources/*` requests: list, templates, read, and (legacy era only: the native era
 * refuses these methods before the server sees them, its subscriptions come on
 * `subscriptions/listen` streams) subscribe and unsubscribe. A resource of a notebook being
 * brought back (a restarted child rejoining it) is served once it is back, bounded, rather than
 * refused as unknown meanwhile; a subscription restored by the proxy for a new child is taken as is.
 * The resources of the client extensions the client declared are listed after the notebooks' and
 * read, for that client only.
 */
export function registerResourceHandlers(server: Server, init: ResourceHandlersInit): void {
  const { slot, recovery, resources, subscriptions, recoveryWaitMs, extensionResources } = init;
  const whenResourceOpen = async (uri: string, signal: AbortSignal): Promise<void> => {
    const address = parseNotebookResourceUri(uri);
    if (address && !slot.find(address.notebookId)) await recovery.whenRecovered(recoveryWaitMs, signal);
  };
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const listed = await resources.list();
    const added = extensionResources('resources/list', request.params ?? {});
    if (added.length === 0) return { resources: listed };
    const described = added.map(({ uri, name, description, mimeType }) => ({
      uri,
      name,
      ...(description === undefined ? {} : { description }),
      mimeType,
    }));
    return { resources: [...listed, ...described] };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: resources.templates() }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const own = extensionResources('resources/read', request.params).find((resource) => resource.uri === uri);
    if (own !== undefined) {
      const { text, meta } = own.read();
      return {
        contents: [{ uri, mimeType: own.mimeType, text, ...(meta === undefined ? {} : { _meta: { ...meta } }) }],
      };
    }
    await whenResourceOpen(request.params.uri, extra.signal);
    return resources.read(request.params.uri);
  });
  server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const restored = request.params._meta?.[restoredSubscriptionMetaKey] === true;
    if (!restored) await whenResourceOpen(request.params.uri, extra.signal);
    await subscriptions.subscribe(request.params.uri, restored);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscriptions.unsubscribe(request.params.uri);
    return {};
  });
}
