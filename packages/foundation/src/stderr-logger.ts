import type { LogFields, Logger, LogLevel } from './logger.js';
import { redactLogFields } from './redact-log-fields.js';

const levelRank: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Something lines can be written to; `process.stderr` in production. */
export interface LineSink {
  write(chunk: string): unknown;
}

/**
 * Writes one line per entry to stderr (never stdout):
 * `2026-11-29T21:00:00.000Z INFO [scope] message {"key":"value"}`.
 */
export class StderrLogger implements Logger {
  public constructor(
    private readonly sink: LineSink = process.stderr,
    private readonly minLevel: LogLevel = parseLogLevel(process.env.NTERACT_MCP_LOG_LEVEL),
    private readonly scope?: string,
  ) {}

  public debug(message: string, fields?: LogFields): void {
    this.write('debug', message, fields);
  }
  public info(message: string, fields?: LogFields): void {
    this.write('info', message, fields);
  }
  public warn(message: string, fields?: LogFields): void {
    this.write('warn', message, fields);
  }
  public error(message: string, fields?: LogFields): void {
    this.write('error', message, fields);
  }

  public child(scope: string): Logger {
    return new StderrLogger(this.sink, this.minLevel, this.scope ? `${this.scope}:${scope}` : scope);
  }

  private write(level: LogLevel, message: string, fields?: LogFields): void {
    if (levelRank[level] < levelRank[this.minLevel]) return;
    const scope = this.scope ? ` [${this.scope}]` : '';
    const context = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(redactLogFields(fields))}` : '';
    this.sink.write(`${new Date().toISOString()} ${level.toUpperCase()}${scope} ${message}${context}\n`);
  }
}

/** Reads a level name; anything unknown falls back to `info`. */
export function parseLogLevel(value: string | undefined): LogLevel {
  const normalized = value?.trim().toLowerCase();
  return normalized === 'debug' || normalized === 'warn' || normalized === 'error' ? normalized : 'info';
}
