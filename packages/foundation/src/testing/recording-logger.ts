import type { LogFields, Logger, LogLevel } from '../logger.js';
import { redactLogFields } from '../redact-log-fields.js';

export interface LogRecord {
  readonly level: LogLevel;
  readonly scope: string | undefined;
  readonly message: string;
  /** Already redacted, as a real logger would print them. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Keeps every line in memory (shared with its children) so tests can assert on logs. */
export class RecordingLogger implements Logger {
  public constructor(
    public readonly records: LogRecord[] = [],
    private readonly scope?: string,
  ) {}

  public debug(message: string, fields?: LogFields): void {
    this.record('debug', message, fields);
  }
  public info(message: string, fields?: LogFields): void {
    this.record('info', message, fields);
  }
  public warn(message: string, fields?: LogFields): void {
    this.record('warn', message, fields);
  }
  public error(message: string, fields?: LogFields): void {
    this.record('error', message, fields);
  }

  public child(scope: string): Logger {
    return new RecordingLogger(this.records, this.scope ? `${this.scope}:${scope}` : scope);
  }

  /** Records at `level` (any level when omitted) whose message contains `text`. */
  public find(text: string, level?: LogLevel): readonly LogRecord[] {
    return this.records.filter(
      (record) => record.message.includes(text) && (level === undefined || record.level === level),
    );
  }

  /** Everything recorded, as printed text; for asserting that a secret never appears. */
  public dump(): string {
    return this.records
      .map((record) => `${record.level} ${record.scope ?? ''} ${record.message} ${JSON.stringify(record.fields)}`)
      .join('\n');
  }

  private record(level: LogLevel, message: string, fields?: LogFields): void {
    this.records.push({ level, scope: this.scope, message, fields: fields ? redactLogFields(fields) : {} });
  }
}
