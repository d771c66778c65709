import {
  type AdmissionRejection,
  type AdmissionRequest,
  type ConnectionRequestId,
  type OutboundNotification,
  requestIdKey,
  type ServerDescription,
  type StreamEnding,
  tasksExtension,
} from '@nteract-mcp/core';
import { envelopeKeys, nativeErrorCodes } from './native-envelope.js';

/** The notification kinds a `subscriptions/listen` filter can ask for (2026-07-28 `SubscriptionFilter`). */
interface SubscriptionFilter {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  readonly resourceSubscriptions?: readonly string[];
  /** The tasks extension: `notifications/tasks` for these task ids. */
  readonly taskIds?: readonly string[];
}

type ListChangedFlag = 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged';

/** Which filter flag each list-change notification needs, and which server capability makes the flag honourable. */
const listChanges: Readonly<Record<string, { readonly flag: ListChangedFlag; readonly capability: string }>> = {
  'notifications/tools/list_changed': { flag: 'toolsListChanged', capability: 'tools' },
  'notifications/prompts/list_changed': { flag: 'promptsListChanged', capability: 'prompts' },
  'notifications/resources/list_changed': { flag: 'resourcesListChanged', capability: 'resources' },
};

const resourceUpdated = 'notifications/resources/updated';
/** The tasks extension's status notification (the whole task); the 2025 era's `notifications/tasks/status` is not sent here. */
const taskStatus = 'notifications/tasks';
const legacyTaskStatus = 'notifications/tasks/status';
/** MissingRequiredClientCapability (2026-07-28). */
const missingClientCapability = -32021;
const acknowledged = 'notifications/subscriptions/acknowledged';

/** Severity order of `LoggingLevel`, least severe first. */
const logLevels = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;

/** At most this many streams are open on one connection; a further `subscriptions/listen` is refused. */
export const maxNotificationStreams = 32;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The `subscriptions/listen` streams of one native connection, and the rules by which server
 * notifications reach the client in this era (2026-07-28): nothing is sent unsolicited. A list
 * change goes, tagged with `_meta["io.modelcontextprotocol/subscriptionId"]` (the listen request's
 * id), to each stream whose filter asked for it; `notifications/resources/updated` to the streams
 * that named its URI; a `notifications/message` only when a request it may belong to asked for a
 * log level at or below its level. Everything else (progress, for one) is request-scoped and goes
 * as it is.
 *
 * A stream opens with `notifications/subscriptions/acknowledged`, which names the part of the
 * filter the server honours (what its capabilities announce), and stays open until the client
 * cancels the listen request or the connection ends ({@link end}: the listen result).
 */
export class NotificationStreams {
  readonly #streams = new Map<string, { readonly id: ConnectionRequestId; readonly filter: SubscriptionFilter }>();

  public open(
    id: ConnectionRequestId,
    request: AdmissionRequest,
    server: ServerDescription,
  ): readonly OutboundNotification[] | AdmissionRejection {
    const requested = (request.params as { notifications?: unknown } | undefined)?.notifications;
    if (!isRecord(requested)) {
      return {
        kind: 'reject',
        code: nativeErrorCodes.invalidParams,
        message:
          'Invalid params: subscriptions/listen needs params.notifications, an object such as {"toolsListChanged": true}.',
      };
    }
    if (requested.taskIds !== undefined && !declaresTasks(request)) {
      return {
        kind: 'reject',
        code: missingClientCapability,
        message: `Missing required client capability: task status notifications need the ${tasksExtension} extension in the request's client capabilities.`,
        data: { requiredCapabilities: { extensions: { [tasksExtension]: {} } } },
      };
    }
    if (this.#streams.has(requestIdKey(id))) {
      return {
        kind: 'reject',
        code: -32600,
        message: `Invalid Request: a stream is already open under id ${JSON.stringify(id)}.`,
      };
    }
    if (this.#streams.size >= maxNotificationStreams) {
      return {
        kind: 'reject',
        code: nativeErrorCodes.invalidParams,
        message: `Too many subscriptions: ${maxNotificationStreams} streams are open on this connection; cancel one first.`,
      };
    }
    const filter = honoured(requested, server.capabilities);
    this.#streams.set(requestIdKey(id), { id, filter });
    return [{ method: acknowledged, params: { notifications: filter, _meta: { [envelopeKeys.subscriptionId]: id } } }];
  }

  public cancel(id: ConnectionRequestId): boolean {
    return this.#streams.delete(requestIdKey(id));
  }

  public deliver(
    notification: OutboundNotification,
    related: readonly AdmissionRequest[],
  ): readonly OutboundNotification[] {
    // Acknowledgements are made by `open` for this connection's own streams, never relayed.
    if (notification.method === acknowledged) return [];
    const change = listChanges[notification.method];
    if (change !== undefined) return this.#tagged(notification, (filter) => filter[change.flag] === true);
    if (notification.method === resourceUpdated) {
      const uri = notification.params?.uri;
      return this.#tagged(
        notification,
        (filter) => typeof uri === 'string' && (filter.resourceSubscriptions ?? []).includes(uri),
      );
    }
    if (notification.method === taskStatus) {
      const taskId = notification.params?.taskId;
      return this.#tagged(
        notification,
        (filter) => typeof taskId === 'string' && (filter.taskIds ?? []).includes(taskId),
      );
    }
    if (notification.method === legacyTaskStatus) return [];
    if (notification.method === 'notifications/message') {
      return related.some((request) => asksForLevel(request, notification.params?.level)) ? [notification] : [];
    }
    return [notification];
  }

  /** The resource URIs the open streams were acknowledged with, sorted, each once. */
  public watchedResources(): readonly string[] {
    const uris = new Set<string>();
    for (const { filter } of this.#streams.values())
      for (const uri of filter.resourceSubscriptions ?? []) uris.add(uri);
    return [...uris].sort();
  }

  /** The task ids the open streams were acknowledged with, sorted, each once. */
  public watchedTasks(): readonly string[] {
    const ids = new Set<string>();
    for (const { filter } of this.#streams.values()) for (const id of filter.taskIds ?? []) ids.add(id);
    return [...ids].sort();
  }

  public end(): readonly StreamEnding[] {
    const endings = [...this.#streams.values()].map(({ id }) => ({
      id,
      result: { _meta: { [envelopeKeys.subscriptionId]: id } },
    }));
    this.#streams.clear();
    return endings;
  }

  #tagged(notification: OutboundNotification, wants: (filter: SubscriptionFilter) => boolean): OutboundNotification[] {
    const out: OutboundNotification[] = [];
    for (const { id, filter } of this.#streams.values()) {
      if (!wants(filter)) continue;
      const params = notification.params ?? {};
      const meta = isRecord(params._meta) ? params._meta : {};
      out.push({
        method: notification.method,
        params: { ...params, _meta: { ...meta, [envelopeKeys.subscriptionId]: id } },
      });
    }
    return out;
  }
}

/** The part of `requested` the server honours: a list change where it announces `listChanged`, resource updates where it announces `subscribe`. */
function honoured(
  requested: Record<string, unknown>,
  capabilities: Readonly<Record<string, unknown>>,
): SubscriptionFilter {
  const filter: Record<string, unknown> = {};
  for (const { flag, capability } of Object.values(listChanges)) {
    const announced = capabilities[capability];
    if (requested[flag] === true && isRecord(announced) && announced.listChanged === true) filter[flag] = true;
  }
  const resources = capabilities.resources;
  const uris = requested.resourceSubscriptions;
  if (Array.isArray(uris) && isRecord(resources) && resources.subscribe === true) {
    filter.resourceSubscriptions = uris.filter((uri): uri is string => typeof uri === 'string');
  }
  const extensions = capabilities.extensions;
  const taskIds = requested.taskIds;
  if (Array.isArray(taskIds) && isRecord(extensions) && tasksExtension in extensions) {
    filter.taskIds = taskIds.filter((taskId): taskId is string => typeof taskId === 'string');
  }
  return filter as SubscriptionFilter;
}

/** The request's client capabilities name the tasks extension. */
function declaresTasks(request: AdmissionRequest): boolean {
  const meta = (request.params as { _meta?: unknown } | undefined)?._meta;
  const declared = isRecord(meta) ? meta[envelopeKeys.clientCapabilities] : undefined;
  const extensions = isRecord(declared) ? declared.extensions : undefined;
  return isRecord(extensions) && tasksExtension in extensions;
}

/** `request` asked for log messages of `level` (its `_meta` log level is at or below it). */
function asksForLevel(request: AdmissionRequest, level: unknown): boolean {
  const meta = (request.params as { _meta?: unknown } | undefined)?._meta;
  const asked = isRecord(meta) ? meta[envelopeKeys.logLevel] : undefined;
  const askedRank = logLevels.indexOf(asked as (typeof logLevels)[number]);
  const rank = logLevels.indexOf(level as (typeof logLevels)[number]);
  return askedRank >= 0 && rank >= askedRank;
}
