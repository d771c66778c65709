import { format } from 'node:util';
import type { Logger } from '@nteract-mcp/core';

const routed = Symbol.for('@nteract-mcp/plugin-hosted/route-library-console');
const secrets = new Set<string>();
const tokenInUrl = /([?&]token=)[^&#\s'"]+/gi;
const tokenHeader = /(authorization["']?\s*[:=]\s*["']?token\s+)[^\s'"]+/gi;

/** Registers a credential to be blanked out of every line {@link routeLibraryConsole} writes. */
export function redactFromLibraryConsole(secret: string): void {
  if (secret.length > 0) secrets.add(secret);
}

/** `text` with every registered credential, `?token=…` and `Authorization: token …` replaced by `[redacted]`. Pure but for the registry. */
export function redactCredentials(text: string): string {
  let out = text.replace(tokenInUrl, '$1[redacted]').replace(tokenHeader, '$1[redacted]');
  for (const secret of secrets) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * `@jupyterlab/services` writes to the global `console` (`console.debug` on every kernel
 * websocket, `console.log` for odd protocols): in `runt-mcp` stdout is the MCP channel, so those
 * would corrupt it. Once per process this sends every `console` method to `logger` (stderr), with
 * credentials redacted; `debug`/`log`/`info` at debug level, `warn` and `error` at theirs.
 * Idempotent; the first logger given stays.
 */
export function routeLibraryConsole(logger: Logger): void {
  const target = console as Console & { [routed]?: true };
  if (target[routed]) return;
  target[routed] = true;
  const line = (args: unknown[]): string => redactCredentials(format(...args));
  console.debug = (...args: unknown[]) => logger.debug(line(args));
  console.log = (...args: unknown[]) => logger.debug(line(args));
  console.info = (...args: unknown[]) => logger.debug(line(args));
  console.warn = (...args: unknown[]) => logger.warn(line(args));
  console.error = (...args: unknown[]) => logger.error(line(args));
}
