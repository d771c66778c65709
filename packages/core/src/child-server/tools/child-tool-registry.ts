import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { boundClientText, quoteClientText } from '@nteract-mcp/foundation';
import * as z from 'zod';
import type { ToolShows } from '../../contributions/client-extension.js';
import { defaultToolResultBudgetBytes } from '../../handoff/mcp-message-limits.js';
import type { NotebookHandle } from '../../ports/notebook-handle.js';
import type { SessionRequirement } from '../../session/session-slot.js';
import type { TaskRuns } from '../executions/task-runs.js';
import type { ToolCallContext } from '../tool-call-context.js';
import { InvalidParamsError, ToolError, toToolFailure } from './to-tool-failure.js';
import { fitToolResult } from './tool-result-budget.js';

export type { ToolCallContext } from '../tool-call-context.js';

/**
 * One tool of the child server. The handler receives arguments already validated by
 * `inputSchema`; it returns a result built with {@link jsonResult} / {@link textResult}, or throws:
 * a `ToolError` (tool-level failure, bad arguments included), an `McpError` (JSON-RPC error) or
 * anything else, which {@link toToolFailure} converts.
 */
export interface ChildTool<S extends z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: S;
  readonly annotations: ToolAnnotations;
  /** Extra tool metadata advertised in `tools/list` (e.g. `anthropic/alwaysLoad`). */
  readonly meta?: Readonly<Record<string, unknown>>;
  /**
   * Client capabilities the tool cannot work without (e.g. `{ sampling: {} }`): a call from a
   * client that did not declare them is refused -32021 before the handler runs.
   */
  readonly requiredClientCapabilities?: Readonly<Record<string, object>>;
  /**
   * What the tool needs of the active session (default `'none'`). Any other value makes a call
   * made while a lost session is being brought back wait for it, and a call whose session was
   * lost under it run once more on the session brought back (or be answered that its outcome is
   * unknown).
   */
  readonly session?: ToolSessionNeed;
  /** The tool runs as an MCP task for clients that ask (advertised as `execution.taskSupport`). */
  readonly task?: ToolTaskDeclaration;
  /** The code's `input()` during the call is answered through the call (2026-07-28: `input_required`). */
  readonly inputRounds?: true;
  /** What the person is asked before the call runs, when the client can ask. */
  readonly confirm?: ToolConfirmation;
  /**
   * What the tool shows of the notebook (`'cells'`: the cells it touched, their outputs): a client
   * extension that renders it (`ClientExtension`) decorates the tool and its results for the
   * clients that declared it.
   */
  readonly shows?: ToolShows;
  readonly handler: (args: z.output<S>, context: ToolCallContext) => Promise<CallToolResult>;
}

/** What a tool needs of the active session: nothing, or a session access as `SessionSlot.access` gives it. */
export type ToolSessionNeed = 'none' | SessionRequirement;

/**
 * A tool that runs as an MCP task. A task is the daemon's: its id names the execution(s) the call
 * queued, so any child answers for it (see `ExecutionTasks`); `start` queues them with `runs` and
 * answers the task id once the daemon accepted them. It receives the arguments as sent (not yet
 * validated): a `ToolError` it throws is the call's error.
 */
export interface ToolTaskDeclaration {
  readonly support: 'optional';
  readonly start: (args: unknown, context: ToolCallContext, runs: TaskRuns) => Promise<string>;
}

/** What the person is asked before a call runs, and what the result says when nobody could be asked. */
export interface ConfirmationQuestion {
  readonly title: string;
  readonly message: string;
  /** Said with the result when the client cannot ask the person. */
  readonly unasked: string;
  /**
   * The call never runs without the person's yes: a client that cannot ask gets this as an error
   * result instead of `unasked` (say how the person, never the agent, can allow it), and nothing runs.
   */
  readonly refusal?: string;
  /**
   * What exactly the yes is for (e.g. sha256 over what is shown): the handler is told the one the
   * person said yes to (`ToolCallContext.confirmed`); where the answer comes on a retry
   * (`input_required`), a retry whose question's fingerprint differs now is asked again.
   */
  readonly fingerprint?: string;
}

/**
 * Asks the person before the call runs (`PersonConfirmations`): `question` says what to ask about
 * the active notebook (`handle`) and the call's arguments as sent, or `undefined` when this call
 * need not be confirmed. Not asked without an active session.
 */
export interface ToolConfirmation {
  readonly question: (args: unknown, handle: NotebookHandle) => Promise<ConfirmationQuestion | undefined>;
}

/** The policies a tool declares, as the call pipeline reads them. */
export interface ToolPolicies {
  readonly session: ToolSessionNeed;
  readonly task?: ToolTaskDeclaration;
  readonly inputRounds: boolean;
  readonly confirm?: ToolConfirmation;
  readonly shows?: ToolShows;
}

/** A tool with its argument type erased, as the registry keeps it. */
export interface RegisteredChildTool {
  readonly definition: Tool;
  readonly requiredClientCapabilities?: Readonly<Record<string, object>>;
  /** What the call pipeline does around the call; none (no session, no task, no input, no question) when absent. */
  readonly policies?: ToolPolicies;
  call(args: unknown, context: ToolCallContext): Promise<CallToolResult>;
}

const noPolicies: ToolPolicies = { session: 'none', inputRounds: false };

/** Erases a tool's argument type behind validation, so tools of any schema share one registry. */
export function defineChildTool<S extends z.ZodObject>(tool: ChildTool<S>): RegisteredChildTool {
  // An argument the tool does not have is refused, never dropped: a model that passes
  // `path` to a tool without one must hear so, not believe it was used.
  const argumentsSchema = tool.inputSchema.strict();
  const inputSchema = z.toJSONSchema(argumentsSchema, { io: 'input' }) as Tool['inputSchema'];
  const definition: Tool = {
    name: tool.name,
    description: tool.description,
    inputSchema,
    annotations: tool.annotations,
    ...(tool.meta ? { _meta: { ...tool.meta } } : {}),
  };
  const policies: ToolPolicies = {
    session: tool.session ?? 'none',
    inputRounds: tool.inputRounds === true,
    ...(tool.task ? { task: tool.task } : {}),
    ...(tool.confirm ? { confirm: tool.confirm } : {}),
    ...(tool.shows ? { shows: tool.shows } : {}),
  };
  return {
    definition,
    ...(tool.requiredClientCapabilities ? { requiredClientCapabilities: { ...tool.requiredClientCapabilities } } : {}),
    policies,
    call: async (args, context) => {
      const parsed = argumentsSchema.safeParse(args ?? {});
      if (!parsed.success) {
        throw new ToolError(
          `Invalid arguments for ${tool.name}: ${describeIssues(parsed.error, Object.keys(tool.inputSchema.shape))}. Correct them and call ${tool.name} again (its inputSchema in tools/list lists every parameter).`,
        );
      }
      return tool.handler(parsed.data as z.output<S>, context);
    },
  };
}

/** The tools a server advertises and dispatches, by name. */
export class ChildToolRegistry {
  readonly #tools = new Map<string, RegisteredChildTool>();
  readonly #resultBudgetBytes: number;

  /** `resultBudgetBytes`: the serialized size no result exceeds (default 8 MiB); see {@link fitToolResult}. */
  public constructor(
    tools: readonly RegisteredChildTool[] = [],
    options: { readonly resultBudgetBytes?: number } = {},
  ) {
    this.#resultBudgetBytes = options.resultBudgetBytes ?? defaultToolResultBudgetBytes;
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; a second tool with the same name is a programming error. */
  public register(tool: RegisteredChildTool): void {
    const { name } = tool.definition;
    if (this.#tools.has(name)) throw new Error(`ChildToolRegistry: duplicate tool name '${name}'`);
    this.#tools.set(name, tool);
  }

  /**
   * The capabilities tool `name` requires that `declared` (the client's, for this call) lacks, as
   * a `ClientCapabilities` object; `undefined` when nothing is missing or the tool is unknown.
   */
  public missingCapabilities(
    name: string,
    declared: Readonly<Record<string, unknown>> | undefined,
  ): Record<string, object> | undefined {
    const required = this.#tools.get(name)?.requiredClientCapabilities;
    if (!required) return undefined;
    const missing = Object.entries(required).filter(([capability]) => {
      const value = declared?.[capability];
      return typeof value !== 'object' || value === null;
    });
    return missing.length > 0 ? Object.fromEntries(missing) : undefined;
  }

  /** The `tools/list` entry of tool `name`, if there is one. */
  public definition(name: string): Tool | undefined {
    return this.#tools.get(name)?.definition;
  }

  /** What tool `name` declared (none for a tool defined without {@link defineChildTool}); `undefined` when unknown. */
  public policies(name: string): ToolPolicies | undefined {
    const tool = this.#tools.get(name);
    return tool ? (tool.policies ?? noPolicies) : undefined;
  }

  /** The `tools/list` entries, in registration order; a tool that runs as a task says so (`execution.taskSupport`). */
  public list(): Tool[] {
    return [...this.#tools.values()].map((tool) =>
      tool.policies?.task
        ? { ...tool.definition, execution: { taskSupport: tool.policies.task.support } }
        : tool.definition,
    );
  }

  /**
   * Runs a tool. An unknown tool name is a protocol error: throws invalid params (a JSON-RPC
   * error). Everything about a known tool's call is a result the model can act on (SEP-1303,
   * MCP 2025-11-25): arguments that fail the input schema, arguments naming something that does
   * not exist (a cell id, a notebook) and failures inside the tool ⇒ a result with `isError: true`
   * and one text item saying what to fix; an `InvalidParamsError` a tool throws is such a result
   * too. Another JSON-RPC error a tool throws on purpose is rethrown. A result over the budget is
   * cut to fit, saying so.
   */
  public async call(name: string, args: unknown, context: ToolCallContext): Promise<CallToolResult> {
    const tool = this.#tools.get(name);
    if (!tool) throw new InvalidParamsError(`Unknown tool: ${boundClientText(name)}`);
    try {
      return fitToolResult(await tool.call(args, context), this.#resultBudgetBytes);
    } catch (error) {
      const failure = toToolFailure(error);
      if (failure instanceof ToolError || failure instanceof InvalidParamsError) return errorResult(failure.message);
      throw failure;
    }
  }
}

/** A successful result: one text item holding `value` as pretty-printed JSON. */
export function jsonResult(value: unknown): CallToolResult {
  return textResult(JSON.stringify(value, null, 2));
}

/** A successful result: one text item. */
export function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

/** A tool-level failure: one text item and `isError: true`. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function describeIssues(error: z.ZodError, known: readonly string[]): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys' && issue.path.length === 0) {
        const unknown = issue.keys.slice(0, 5).map((key) => quoteClientText(key));
        const more = issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : '';
        const has = known.length > 0 ? `its arguments are ${known.join(', ')}` : 'it takes no arguments';
        return `no argument ${unknown.join(', ')}${more} (${has})`;
      }
      return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
