import { restoredSubscriptionMetaKey } from '../../handoff/handoff-contract.js';
import { requestIdKey } from '../../json-rpc/request-id-key.js';
import type { ExecutionTasks } from '../executions/execution-tasks.js';
import type { ResourceSubscriptions } from '../resources/resource-subscriptions.js';
import type { NotificationStreamObserver } from './era-gated-transport.js';

/** The strings of `value` when it is an array; `undefined` otherwise. */
function stringsOf(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : undefined;
}

/**
 * What an open notification stream asks for (native `subscriptions/listen`): the task ids it
 * names are watched by `tasks` and the resources it names (`resourceSubscriptions`) by
 * `subscriptions` while it is open; a stream the proxy restored for a new child is taken as is.
 */
export function watchedStreams(
  tasks: ExecutionTasks,
  subscriptions: ResourceSubscriptions,
): NotificationStreamObserver {
  return {
    opened: (id, request) => {
      const params = request.params as
        | { notifications?: { resourceSubscriptions?: unknown; taskIds?: unknown }; _meta?: Record<string, unknown> }
        | undefined;
      const taskIds = stringsOf(params?.notifications?.taskIds);
      if (taskIds) tasks.watch(requestIdKey(id), taskIds);
      const uris = stringsOf(params?.notifications?.resourceSubscriptions);
      if (uris) {
        subscriptions.openStream(requestIdKey(id), uris, params?._meta?.[restoredSubscriptionMetaKey] === true);
      }
    },
    closed: (id) => {
      subscriptions.closeStream(requestIdKey(id));
      tasks.unwatch(requestIdKey(id));
    },
  };
}
