import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ChildToolRegistry } from '../tools/child-tool-registry.js';
import type { CallStep } from './call-step.js';

/** `MissingRequiredClientCapabilityError` (2026-07-28): the request needs a capability the client did not declare. */
export const missingClientCapabilityCode = -32021;

/**
 * Capabilities: a tool that needs a client capability the client did not declare (for this
 * request, in the native era) is refused -32021 before anything else is done for the call.
 */
export function checkCapabilities(registry: ChildToolRegistry): CallStep {
  return (call, next) => {
    const missing = registry.missingCapabilities(call.name, call.declared);
    if (missing !== undefined) {
      throw new McpError(
        missingClientCapabilityCode,
        `Missing required client capability: ${call.name} needs ${Object.keys(missing).join(', ')}; declare it in the request's client capabilities.`,
        { requiredCapabilities: missing },
      );
    }
    return next();
  };
}
