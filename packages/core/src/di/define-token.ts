import type { ServiceIdentifier } from 'inversify';

/**
 * A typed DI token. The interface it names and the token share one identifier:
 * `export interface Clock {…}` next to `export const Clock = defineToken<Clock>('core', 'Clock')`.
 */
export type Token<T> = ServiceIdentifier<T> & symbol;

/**
 * The only way to mint a token. The key is `@nteract-mcp/<pkg>/<name>` under `Symbol.for`, so two
 * copies of a package (a plugin installed twice, a bundled and an unbundled build) mint the same
 * token and see the same bindings. Tokens of different packages cannot collide because the
 * package name is part of the key.
 */
export function defineToken<T>(pkg: string, name: string): Token<T> {
  return Symbol.for(`@nteract-mcp/${pkg}/${name}`) as Token<T>;
}
