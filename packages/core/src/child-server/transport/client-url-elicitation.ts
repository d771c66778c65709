import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { UrlElicitation } from '../../contributions/notebook-backend.js';
import type { Logger } from '../../ports/logger.js';

/**
 * How long the client has to answer a URL elicitation (the person agreeing to open the page, not
 * what they do there). Longer than the SDK's default of 60 s: a person may be away for a while;
 * the caller's signal ends it sooner (its page expires).
 */
const answerWaitMs = 15 * 60_000;

/** Whether `declared` (a client's capabilities) include URL-mode elicitation (`elicitation: { url: {} }`). */
export function declaresUrlElicitation(declared: Readonly<Record<string, unknown>> | undefined): boolean {
  const elicitation = declared?.elicitation;
  return typeof elicitation === 'object' && elicitation !== null && 'url' in elicitation;
}

/**
 * The {@link UrlElicitation} of a connection where the server may send requests: `elicitation/create`
 * with `mode: 'url'` sent as a request to the client (its answer read as `accept`, `decline` or
 * `cancel`), and `notifications/elicitation/complete` when the page is done with. The notification
 * goes straight to the connected transport: the SDK server checks it against client capabilities
 * it never saw (the protocol era answered `initialize`).
 */
export function clientUrlElicitation(server: Server, logger: Logger): UrlElicitation {
  return {
    ask: async (request, signal) => {
      const params = { mode: 'url', ...request };
      const answer = await server.request({ method: 'elicitation/create', params } as never, ElicitResultSchema, {
        signal,
        timeout: answerWaitMs,
      });
      return answer.action;
    },
    completed: (elicitationId) => {
      server.transport
        ?.send({ jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId } })
        .catch((error: unknown) => logger.debug('notifications/elicitation/complete was not sent', { error }));
    },
  };
}
