import {
  type BackendConnectContext,
  type Clock,
  CoreError,
  type Logger,
  type SecretToken,
  type Timer,
} from '@nteract-mcp/core';
import { HostedTokenPage } from './hosted-token-page.js';
import { unauthorizedErrorCode } from './jupyter-server-port.js';
import { hubLocationOf, hubServerLabel } from './jupyterhub-api.js';

/** How a person gives a token when the client cannot ask them (the README lists the variables). */
export const tokenHint =
  "To give nteract-mcp a token: set JUPYTER_TOKEN (a Jupyter Server) or JUPYTERHUB_API_TOKEN (a JupyterHub) in the env of nteract-mcp's entry in the MCP client's config, or add ?token=… to the URL (an MCP client with URL-mode elicitation may instead have the person paste it on a local page).";

/** How often a call waiting for the person's token says it still waits (as its progress). */
const waitingBeatMs = 10_000;

/** Where a hosted attempt goes: a server and the token it is tried with. */
interface TokenHolder {
  readonly serverUrl: string;
  readonly token: SecretToken | undefined;
}

export interface HostedTokenPromptInit {
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * A hosted attempt (a connect, a create) that a server refused for its token (HTTP 401/403, or no
 * token at all), tried once more with a token the person gives: when the call's client declared
 * URL-mode elicitation (`context.urlElicitation`), a one-time local {@link HostedTokenPage} is
 * opened, offered to the person with a message naming the server, and the attempt is made again
 * with what they paste there (nothing else learns it: no log, result or status; it is kept, as any
 * token that opened a notebook, in memory for that server). A client that cannot be asked gets the
 * refusal with {@link tokenHint}. Declined, expired or refused again: the refusal, saying so.
 */
export class HostedTokenPrompt {
  readonly #init: HostedTokenPromptInit;

  public constructor(init: HostedTokenPromptInit) {
    this.#init = init;
  }

  public async attempt<T extends TokenHolder, R>(
    where: T,
    context: BackendConnectContext,
    run: (where: T) => Promise<R>,
  ): Promise<R> {
    try {
      return await run(where);
    } catch (error) {
      if (!isRefusal(error)) throw error;
      const elicitation = context.urlElicitation;
      if (!elicitation) throw withSentence(error, tokenHint);
      const token = await this.ask(where, elicitation, error, context.signal);
      try {
        return await run({ ...where, token });
      } catch (again) {
        if (!isRefusal(again)) throw again;
        throw new CoreError(again.kind, `The token the person gave on the page was refused too. ${again.message}`, {
          code: unauthorizedErrorCode,
          cause: again,
        });
      }
    }
  }

  /** The token the person gives for `where`'s server; rejects with `refused`, saying why none came. */
  private async ask(
    where: TokenHolder,
    elicitation: NonNullable<BackendConnectContext['urlElicitation']>,
    refused: CoreError,
    signal: AbortSignal,
  ): Promise<SecretToken> {
    const label = serverLabelOf(where.serverUrl);
    const { clock } = this.#init;
    const page = await HostedTokenPage.open({ serverLabel: label, clock });
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const { cancelled } = elicitation;
    const onCancel = (): void =>
      stop.abort(new Error('the call was cancelled while the person had the page, and the page is closed'));
    cancelled?.addEventListener('abort', onCancel, { once: true });
    if (cancelled?.aborted) onCancel();
    // The page ending (expired) ends the question too.
    page.token().catch((ended: unknown) => stop.abort(ended));
    // While the person is away, the call says every so often that it still waits for them.
    const startedAt = clock.now();
    let heartbeat: Timer | undefined;
    const beat = (): void => {
      heartbeat = clock.setTimer(waitingBeatMs, () => {
        const waited = Math.round((clock.now() - startedAt) / 1000);
        elicitation.waiting?.(
          waited,
          `Waiting for the person to paste a token for ${label} on the local page (${waited} s so far).`,
        );
        beat();
      });
    };
    beat();
    try {
      this.#init.logger.info('asking the person for a token on a local page', {
        server: where.serverUrl,
        elicitation: page.elicitationId,
      });
      const message = `${where.token ? `${capitalized(label)} refused the token nteract-mcp has for it` : `nteract-mcp has no token for ${label}`}. Open this page to paste one: it goes to nteract-mcp only (not to the agent) and is kept in its memory for that server.`;
      let answer: 'accept' | 'decline' | 'cancel';
      try {
        answer = await elicitation.ask({ elicitationId: page.elicitationId, url: page.url, message }, stop.signal);
      } catch (failed) {
        if (signal.aborted) throw signal.reason;
        throw withSentence(
          refused,
          `The person was asked for a token on a local page, and no answer came (${reasonOf(failed)}).`,
        );
      }
      if (answer !== 'accept') {
        throw withSentence(
          refused,
          `The person was asked for a token on a local page and ${answer === 'decline' ? 'declined' : 'cancelled'}.`,
        );
      }
      const token = await Promise.race([
        page.token(),
        new Promise<never>((_resolve, reject) => {
          if (stop.signal.aborted) reject(stop.signal.reason);
          stop.signal.addEventListener('abort', () => reject(stop.signal.reason), { once: true });
        }),
      ]).catch((ended: unknown) => {
        if (signal.aborted) throw signal.reason;
        throw withSentence(refused, `The person was asked for a token on a local page: ${reasonOf(ended)}`);
      });
      elicitation.completed(page.elicitationId);
      this.#init.logger.info('the person gave a token on the local page', { server: where.serverUrl });
      return token;
    } finally {
      heartbeat?.cancel();
      signal.removeEventListener('abort', onAbort);
      cancelled?.removeEventListener('abort', onCancel);
      page.close();
    }
  }
}

/** A server's refusal of its token (or of having none), as the hosted plugin reports it. */
function isRefusal(error: unknown): error is CoreError {
  return CoreError.is(error) && error.code === unauthorizedErrorCode;
}

/** `error` with `sentence` added to its message; same kind, code and cause. */
function withSentence(error: CoreError, sentence: string): CoreError {
  return new CoreError(error.kind, `${error.message} ${sentence}`, {
    ...(error.code === undefined ? {} : { code: error.code }),
    cause: error,
  });
}

/** How a server is named to the person: `the JupyterHub server of user 'alice' (http://…/user/alice/)`, `the Jupyter Server at http://…/`. */
function serverLabelOf(serverUrl: string): string {
  const hub = hubLocationOf(serverUrl);
  if (hub?.kind === 'user-server')
    return `the JupyterHub ${hubServerLabel(hub.server).slice('the '.length)} (${serverUrl})`;
  if (hub?.kind === 'user-redirect') return `the JupyterHub at ${hub.prefix}`;
  return `the Jupyter Server at ${serverUrl}`;
}

function capitalized(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
