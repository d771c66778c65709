import type { ToolCallContext } from './tools/child-tool-registry.js';

/**
 * The idempotency key of one of several mutations of a call (`<key>:<step>`), so a replay of the
 * call applies each once; `undefined` when the call carried no key.
 */
export function subKey(context: Pick<ToolCallContext, 'idempotencyKey'>, step: string): string | undefined {
  return context.idempotencyKey === undefined ? undefined : `${context.idempotencyKey}:${step}`;
}
