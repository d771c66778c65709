import type { ChildToolRegistry } from '../tools/child-tool-registry.js';
import type { CallStep } from './call-step.js';
import { toolResult } from './tool-call.js';

/** Run: the tool's handler, through the registry (validation, failures as results, the result budget). */
export function runTool(registry: ChildToolRegistry): CallStep {
  return async (call) => toolResult(await registry.call(call.name, call.args, call.context));
}
