import type { Logger as LoggerContract } from '@nteract-mcp/foundation';
import { defineToken } from '../di/define-token.js';

export type { LogFields, LogLevel } from '@nteract-mcp/foundation';

/** Diagnostics on stderr; the contract (never stdout, secrets redacted) is `@nteract-mcp/foundation`'s. */
export type Logger = LoggerContract;

export const Logger = defineToken<Logger>('core', 'Logger');
