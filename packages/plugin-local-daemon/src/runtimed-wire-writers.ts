import type { ExecuteOptions, MutationOptions } from '@nteract-mcp/core';

/** What a mutation request carries from core's options: its idempotency key and expected cell version. */
export function mutationFields(options: MutationOptions | undefined): {
  idempotency_key?: string;
  expected_version?: string;
} {
  return {
    ...(options?.idempotencyKey === undefined ? {} : { idempotency_key: options.idempotencyKey }),
    ...(options?.expectedVersion === undefined ? {} : { expected_version: options.expectedVersion }),
  };
}

/** What an edit (`update_cell`, `delete_cell`) carries: {@link mutationFields} and the version the caller last saw. */
export function editFields(options: MutationOptions | undefined): ReturnType<typeof mutationFields> & {
  seen_version?: string;
} {
  return {
    ...mutationFields(options),
    ...(options?.seenVersion === undefined ? {} : { seen_version: options.seenVersion }),
  };
}

/** What `execute_cell` carries: {@link mutationFields}, whether this peer answers `input()`, the execution it runs after. */
export function executeFields(
  options: ExecuteOptions | undefined,
): ReturnType<typeof mutationFields> & { allow_input?: true; run_after?: string } {
  return {
    ...mutationFields(options),
    ...(options?.allowInput === true ? { allow_input: true } : {}),
    ...(options?.runAfter === undefined ? {} : { run_after: options.runAfter }),
  };
}
