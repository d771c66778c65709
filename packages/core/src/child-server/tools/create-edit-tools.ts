import { ResultShaper } from '@nteract-mcp/output-shaping';
import * as z from 'zod';
import { CoreError } from '../../errors/core-error.js';
import { idempotencyHonoredMeta } from '../../handoff/handoff-contract.js';
import type { NotebookHandle } from '../../ports/notebook-handle.js';
import { accessWhenReady } from '../access-when-ready.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { isPythonKernel, lostStateJson } from '../executions/kernel-history.js';
import { subKey } from '../idempotency-sub-key.js';
import {
  type ConfirmationQuestion,
  defineChildTool,
  jsonResult,
  type RegisteredChildTool,
} from './child-tool-registry.js';
import { imagesParameter } from './output-parameters.js';
import { ToolError } from './to-tool-failure.js';
import { given, toolParameters } from './tool-parameters.js';
import { expectedVersionParameter, replacedText, writeVersions } from './write-versions.js';

/** Seconds a scratch run is waited for unless `timeout_secs` says otherwise. */
export const defaultScratchTimeoutSecs = 30;

/** The longest `find` pattern accepted (a guard against pathological regular expressions is the client's; this bounds the input). */
const maxPatternLength = 10_000;

/**
 * The precise-edit tools: find/replace within a cell (`replace_in_cell`), clearing outputs
 * (`clear_outputs`) and scratch runs in the notebook's kernel (`run_code`). Like the notebook
 * tools, they work on the active session, wait (bounded) for one still starting, re-check it
 * after awaiting, and carry the call's idempotency key (sub-keys per mutation), so a replay
 * applies each mutation once.
 */
export function createEditTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  const replaceInCell = defineChildTool({
    name: 'replace_in_cell',
    session: 'mutation',
    description:
      'Find and replace text within one cell of the active notebook (literal by default, or a JavaScript regular expression with regex=true; $1… refer to groups). Replaces every match unless count is given. Fails, changing nothing, when nothing matches.',
    inputSchema: z.object({
      cell_id: toolParameters.requiredString('The cell id.'),
      find: z.string().min(1, 'find must not be empty').max(maxPatternLength).describe('Text (or pattern) to find.'),
      replace: z.string().describe('Replacement text (may be empty).'),
      regex: toolParameters.optionalBoolean('Treat find as a regular expression (default false).'),
      count: toolParameters.optionalIndex('Replace at most this many matches, first ones first (default all).'),
      expected_version: expectedVersionParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args, context) => {
      const pattern = compilePattern(args.find, given(args.regex) ?? false);
      const limit = given(args.count);
      if (limit === 0) throw new ToolError('count must be at least 1 (leave it out to replace every match).');
      const access = await accessWhenReady(deps, 'mutation', context);
      const regex = given(args.regex) ?? false;
      const expected = given(args.expected_version);
      const notebookId = access.handle.notebookId;
      // Read, replace, write only over what was read: a change by another peer in between makes the
      // write stale, and the replacement is made again on the new source (once; then it is refused).
      const attempt = async (step: string) => {
        const cell = await access.handle.getCell(args.cell_id);
        const { source, replacements } = replaceMatches(cell.source, pattern, args.replace, limit, regex);
        if (replacements === 0) {
          throw new ToolError(
            `No match for ${regex ? 'the pattern' : 'the text'} ${JSON.stringify(args.find)} in cell ${cell.id}; nothing was changed. Read the cell with get_cell to see its source.`,
          );
        }
        const updated = await access.handle.updateCell(
          cell.id,
          { source },
          {
            idempotencyKey: subKey(context, step),
            ...writeVersions(expected ?? cell.version, deps.awareness.seenVersion(notebookId, cell.id)),
          },
        );
        return { updated, replacements };
      };
      const { updated, replacements } = await attempt('update').catch((error: unknown) => {
        if (expected !== undefined || !CoreError.is(error, 'staleCell')) throw error;
        return attempt('update-again');
      });
      access.ensureCurrent();
      deps.awareness.saw(notebookId, [updated]);
      return jsonResult({
        cell_id: updated.id,
        replacements,
        source: updated.source,
        ...(updated.version === undefined ? {} : { version: updated.version }),
        ...(updated.replaced === undefined ? {} : { replaced_change: replacedText(updated.replaced) }),
      });
    },
  });

  const clearOutputs = defineChildTool({
    name: 'clear_outputs',
    session: 'mutation',
    confirm: { question: clearAllQuestion },
    description:
      'Clear the outputs (and execution count) of one cell of the active notebook, or of every code cell when cell_id is left out.',
    inputSchema: z.object({
      cell_id: toolParameters.optionalString('The cell to clear (default: every code cell with outputs).'),
      expected_version: expectedVersionParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, context) => {
      const access = await accessWhenReady(deps, 'mutation', context);
      const only = given(args.cell_id);
      const targets =
        only !== undefined
          ? [await access.handle.getCell(only)]
          : (await access.handle.listCells()).filter(
              (cell) => cell.cellType === 'code' && (cell.outputs.length > 0 || cell.executionCount !== null),
            );
      for (const cell of targets) {
        await access.handle.clearOutputs(cell.id, {
          idempotencyKey: subKey(context, `clear:${cell.id}`),
          ...writeVersions(only === undefined ? undefined : given(args.expected_version), undefined),
        });
      }
      access.ensureCurrent();
      return jsonResult({ cleared: targets.map((cell) => cell.id) });
    },
  });

  const runCode = defineChildTool({
    name: 'run_code',
    shows: 'cells',
    session: 'runtime',
    task: { support: 'optional', start: (args, context, runs) => runs.code(args, context) },
    description: `Run code in the active notebook's kernel without adding a cell (a scratch run: it sees and changes the kernel's variables, but the notebook, the kernel's history and execution count stay as they are). Returns its outputs, which are stored nowhere. Waits at most timeout_secs (default ${defaultScratchTimeoutSecs}); then it keeps running and interrupt_kernel stops it.`,
    inputSchema: z.object({
      code: z.string().describe('The code to run.'),
      images: imagesParameter,
      timeout_secs: toolParameters.optionalPositiveNumber(
        `Seconds to wait for it (default ${defaultScratchTimeoutSecs}).`,
      ),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args, context) => {
      const access = await accessWhenReady(deps, 'runtime', context);
      const { handle } = access;
      if (!handle.runScratch) {
        throw new ToolError(
          `Notebook ${handle.notebookId} cannot run scratch code (its backend does not offer it); add a cell with create_cell(and_run=true) instead.`,
        );
      }
      const timeoutSecs = given(args.timeout_secs) ?? defaultScratchTimeoutSecs;
      const run = await handle.runScratch(args.code, { timeoutMs: Math.round(timeoutSecs * 1000) });
      const python = isPythonKernel(handle.kernelName);
      const lostStateAfter = (notice: string) =>
        lostStateJson(deps.kernelHistory.ran(handle.notebookId, undefined, notice, python));
      access.ensureCurrent();
      const shaper = new ResultShaper({ images: given(args.images), resultBudgetBytes: deps.resultBudgetBytes });
      return shaper.result({
        notebook_id: handle.notebookId,
        status: run.status === 'timeout' ? 'running' : run.status,
        // A scratch run's outputs are kept nowhere: what was cut cannot be paged.
        outputs: shaper.shapeOutputs(
          run.outputs,
          () => 'nothing (scratch outputs are not kept: print less, or run it in a cell)',
        ),
        ...(run.kernelNotice === undefined
          ? {}
          : { kernel_notice: run.kernelNotice, ...lostStateAfter(run.kernelNotice) }),
        ...(run.status === 'timeout'
          ? {
              hint: `Still running after ${timeoutSecs} s; its outputs are not kept. Call interrupt_kernel to stop it.`,
            }
          : {}),
      });
    },
  });

  return [replaceInCell, clearOutputs, runCode];
}

/** `find` as a global regular expression: escaped when literal; an invalid pattern is a tool error naming the problem. */
function compilePattern(find: string, regex: boolean): RegExp {
  if (!regex) return new RegExp(find.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g');
  try {
    return new RegExp(find, 'g');
  } catch (error) {
    throw new ToolError(`Invalid regular expression ${JSON.stringify(find)}: ${(error as Error).message}`);
  }
}

/**
 * `source` with the matches of `pattern` replaced, the first `limit` of them (all when
 * `undefined`), and how many were. `expand`: `replacement` is a template (`$&`, `$1`…`$99`,
 * `$<name>`, `$$`) as in `String.prototype.replace`; otherwise it is inserted literally.
 */
export function replaceMatches(
  source: string,
  pattern: RegExp,
  replacement: string,
  limit: number | undefined,
  expand: boolean,
): { readonly source: string; readonly replacements: number } {
  let replacements = 0;
  const replaced = source.replace(pattern, (...match: unknown[]) => {
    const whole = match[0] as string;
    if (limit !== undefined && replacements >= limit) return whole;
    replacements += 1;
    if (!expand) return replacement;
    const last = match[match.length - 1];
    const named = typeof last === 'object' && last !== null ? (last as Record<string, string | undefined>) : undefined;
    const groups = match.slice(1, named ? -3 : -2) as (string | undefined)[];
    return expandTemplate(replacement, whole, groups, named);
  });
  return { source: replaced, replacements };
}

/** One match's replacement from a `String.prototype.replace` template. */
function expandTemplate(
  template: string,
  whole: string,
  groups: readonly (string | undefined)[],
  named: Readonly<Record<string, string | undefined>> | undefined,
): string {
  return template.replace(/\$(\$|&|<([^>]*)>|(\d{1,2}))/g, (token, kind: string, name?: string, digits?: string) => {
    if (kind === '$') return '$';
    if (kind === '&') return whole;
    if (name !== undefined) return named ? (named[name] ?? '') : token;
    const index = Number(digits);
    if (index >= 1 && index <= groups.length) return groups[index - 1] ?? '';
    // `$12` with one group: `$1` then `2`, as String.replace reads it.
    const first = Number(digits?.[0]);
    if (digits && digits.length === 2 && first >= 1 && first <= groups.length)
      return (groups[first - 1] ?? '') + digits[1];
    return token;
  });
}

/** `clear_outputs` of every cell (no `cell_id`) asks the person first when it clears two cells or more. */
async function clearAllQuestion(args: unknown, handle: NotebookHandle): Promise<ConfirmationQuestion | undefined> {
  const cellId = (args as { cell_id?: unknown } | undefined)?.cell_id;
  if (cellId !== undefined && cellId !== null) return undefined;
  const cells = await handle.listCells().catch(() => []);
  const cleared = cells.filter((cell) => cell.cellType === 'code' && cell.outputs.length > 0).length;
  if (cleared < 2) return undefined;
  return {
    title: 'Clear all outputs',
    message: `The agent wants to clear the outputs of ${cleared} cells of notebook ${handle.notebookId}. Clear them?`,
    unasked:
      'not asked: the outputs were cleared without the person confirming, since this client cannot ask (no elicitation capability)',
  };
}
