import { type EraDialect, sdkDialect } from '@nteract-mcp/core';

/**
 * How core's child server speaks on a DRAFT-2027-01 connection. Acme's draft keeps 2025-11-25's
 * conversation but for two changes, and the dialect is where they live:
 * - the server may send the client requests (the person is asked with `elicitation/create` while
 *   a call runs), as in 2025-11-25;
 * - an unknown resource is -32602, the code 2026-07-28 settled on (SEP-2164), not -32002;
 * - no tasks: the draft dropped 2025-11-25's task augmentation and has not specified the tasks
 *   extension yet, so no task method is served (core answers each -32601) and no call runs as one.
 */
export const draftDialect: EraDialect = Object.freeze({
  sendsRequests: true,
  resourceNotFoundCode: -32602,
  tasks: Object.freeze({
    // The members not set here word a task core started, and none is ever started here: they are
    // 2025-11-25's (the SDK server's), as `TaskDialect` asks for every member.
    ...sdkDialect.tasks,
    /** None: `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` are "method not found". */
    methods: Object.freeze([]),
    /** Never: a call runs to its result (the connection refuses a call that asks, see `DraftConnection.check`). */
    requested: () => false,
  }),
});
