import { type EraDialect, sdkDialect } from '@nteract-mcp/core';

/**
 * How the child server speaks on an `initialize`-based connection (2025-11-25 and before): exactly
 * what the MCP SDK's own server speaks, which is core's dialect before any era opens
 * (`sdkDialect`). The server may send the client requests (the person is asked with
 * `elicitation/create` while a call runs); a call asks to run as a task with its `task` param
 * (task augmentation) and is answered `{ task }` at once, or an invalid-params error when it cannot
 * start; a task spells `ttl` and `pollInterval`, its result is asked for with `tasks/result`, its
 * status changes are told with `notifications/tasks/status`, a cancel answers the cancelled task
 * and refuses one that already ended; a missing resource is -32002.
 */
export const legacyDialect: EraDialect = sdkDialect;
