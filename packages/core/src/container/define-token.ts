import type { ServiceIdentifier } from 'inversify';
import { CoreError } from '../errors/core-error.js';

/**
 * A typed DI token. The interface it names and the token share one identifier:
 * `export interface Clock {…}` next to `export const Clock = defineToken<Clock>('core', 'Clock')`.
 */
export type Token<T> = ServiceIdentifier<T> & symbol;

const declaredTokens = new Set<string>();

/**
 * The only way to mint a token. The key is `@nteract-mcp/<pkg>/<name>` under `Symbol.for`, so two
 * copies of a package agree on it. Declaring the same key twice in one copy is a programming error
 * and throws `duplicateToken`.
 */
export function defineToken<T>(pkg: string, name: string): Token<T> {
  const key = `@nteract-mcp/${pkg}/${name}`;
  if (declaredTokens.has(key)) {
    throw new CoreError('duplicateToken', `defineToken('${pkg}', '${name}'): token ${key} is already declared`);
  }
  declaredTokens.add(key);
  return Symbol.for(key) as Token<T>;
}

/** The readable name of a token, for error messages. */
export function describeToken(token: ServiceIdentifier<unknown>): string {
  if (typeof token === 'symbol') return token.description ?? token.toString();
  if (typeof token === 'function') return token.name;
  return String(token);
}
