import { defineToken } from '../di/define-token.js';
import type { SecretToken } from '../notebook-target/secret-token.js';

/**
 * The tokens this child knows for hosted scopes (a server's base URL without credentials), kept
 * for the children the proxy starts after it: a backend keeps a token it was given in a URL, and
 * looks one up when a URL comes without (a handed-off rejoin target never carries one).
 * Guarantees: tokens stay in memory (and in the proxy's credential channel); they are never
 * logged, stored in a file, or put into a result.
 */
export interface SessionCredentials {
  /** Keeps `token` for `scope`, replacing an older one, and passes it to the proxy when one listens. */
  keep(scope: string, token: SecretToken): void;
  /** The token kept for `scope`, if any. */
  find(scope: string): SecretToken | undefined;
}

export const SessionCredentials = defineToken<SessionCredentials>('core', 'SessionCredentials');
