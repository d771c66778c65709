/** Structured context of a log line. Values under secret-looking keys are redacted by loggers. */
export type LogFields = Readonly<Record<string, unknown>>;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Diagnostics. Guarantees: never writes to stdout (in every MCP process stdout carries protocol
 * bytes only); never prints a value under a key that names a secret (`token`, `password`,
 * `secret`, `authorization`, `cookie`) or a `SecretToken`.
 * Does not guarantee: delivery (a logger may drop lines below its level) or ordering across
 * processes.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose lines carry `scope` (convention: `package:Class`). */
  child(scope: string): Logger;
}
