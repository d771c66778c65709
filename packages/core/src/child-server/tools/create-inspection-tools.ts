import * as z from 'zod';
import type { NotebookHandle, ScratchRun } from '../../ports/notebook-handle.js';
import { accessWhenReady } from '../access-when-ready.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { lostStateJson } from '../executions/kernel-history.js';
import {
  detailLimits,
  type InspectionLanguage,
  inspectionLanguageOf,
  inspectionLanguageOfSpec,
  inspectionProgram,
  listingLimits,
} from '../inspection/kernel-inspection-program.js';
import { type InspectionOutcome, type KeptListing, KernelInspector } from '../inspection/kernel-inspector.js';
import {
  fitEntries,
  type InspectionAnswer,
  memoryJson,
  parseInspectionAnswer,
  similarNames,
} from '../inspection/parse-inspection-answer.js';
import { defineChildTool, jsonResult, type RegisteredChildTool } from './child-tool-registry.js';
import { ToolError } from './to-tool-failure.js';
import { given, toolParameters } from './tool-parameters.js';

/** Seconds an inspection waits for a kernel busy with other code, unless `wait_secs` says otherwise. */
export const defaultInspectionWaitSecs = 3;

/** The longest `wait_secs` accepted. */
const maxInspectionWaitSecs = 60;

/** Variables one `list_variables` answer lists unless `count` says otherwise, and the most it may ask. */
export const defaultVariablesCount = 50;
const maxVariablesCount = 200;

/** The bytes the variables of one answer take at most (the rest is paged with `start`). */
export const variablesAnswerBytes = 48 * 1024;

/** Rows of a data frame `inspect_variable` shows unless `rows` says otherwise, and the most. */
const defaultDetailRows = 10;
const maxDetailRows = 50;

const waitParameter = toolParameters.optionalPositiveNumber(
  `Seconds to wait for a kernel busy with other code before answering busy (default ${defaultInspectionWaitSecs}, at most ${maxInspectionWaitSecs}).`,
);

/**
 * `list_variables` and `inspect_variable`: the kernel's user namespace, read by a small
 * inspection program run as a scratch run (no cell, no history, no execution count; the program
 * leaves no name behind), for Python (ipykernel) and R (IRkernel) kernels, local or hosted.
 * A kernel busy with other code is never waited on for long: the answer says `busy` with the last
 * listing of this session, labelled with when it was taken.
 */
export function createInspectionTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  const inspector = new KernelInspector(deps.clock);
  /** Kernel notices a late inspection run carried, told with the next answer about that notebook. */
  const untold = new Map<string, string>();

  /** The run's kernel notice (or one a late run carried) as the answer tells it, recorded as run_code's is. */
  const noticeJson = (
    handle: NotebookHandle,
    language: InspectionLanguage,
    notice: string | undefined,
  ): { kernel_notice?: string } & Record<string, unknown> => {
    const said = notice ?? untold.get(handle.notebookId);
    untold.delete(handle.notebookId);
    if (said === undefined) return {};
    const lost =
      notice === undefined
        ? deps.kernelHistory.lost(handle.notebookId)
        : deps.kernelHistory.ran(handle.notebookId, undefined, notice, language === 'python');
    return { kernel_notice: said, ...lostStateJson(lost) };
  };

  /** When and at which execution count the kernel answered (the count from the notebook when the kernel does not say). */
  const takenAt = async (handle: NotebookHandle, answer: InspectionAnswer) => {
    let executionCount = answer.execution_count ?? null;
    if (executionCount === null) {
      const cells = await handle.listCells().catch(() => []);
      const counts = cells.map((cell) => cell.executionCount ?? 0);
      executionCount = counts.length > 0 && Math.max(...counts) > 0 ? Math.max(...counts) : null;
    }
    return { takenAt: deps.clock.now(), executionCount };
  };

  const listVariables = defineChildTool({
    name: 'list_variables',
    session: 'runtime',
    description: `List the variables of the active notebook's kernel (Python or R) without changing anything the person sees: no cell, no output, no execution count, no history. Each: name, type, a short repr, length or shape, and for a data frame its columns with dtypes and first rows; hidden names (leading _ in Python, . in R), IPython's own (In, Out, get_ipython, exit, quit…) and modules are left out. filter keeps names containing it (case-insensitive), or matching it as a glob when it has * ? or [. ${defaultVariablesCount} per answer by default (count, at most ${maxVariablesCount}; about ${variablesAnswerBytes / 1024} KiB at most), paged with start; 'truncated' names the next start. Says the kernel's memory use where the kernel can tell. While the kernel runs other code longer than wait_secs (default ${defaultInspectionWaitSecs}), answers at once with busy: true and the last listing of this session, saying when it was taken.`,
    inputSchema: z.object({
      filter: toolParameters.optionalString('Only names containing this (case-insensitive), or matching this glob.'),
      start: toolParameters.optionalIndex('Index of the first variable, in name order (default 0).'),
      count: toolParameters.optionalIndex(
        `How many variables (default ${defaultVariablesCount}, at most ${maxVariablesCount}).`,
      ),
      wait_secs: waitParameter,
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, context) => {
      const filter = checkedText(given(args.filter)?.trim() ?? '', 'filter', true);
      const start = given(args.start) ?? 0;
      const count = given(args.count) ?? defaultVariablesCount;
      if (count < 1 || count > maxVariablesCount) {
        throw new ToolError(`count must be between 1 and ${maxVariablesCount} (give start to read on).`);
      }
      const waitMs = waitMsOf(given(args.wait_secs));
      const access = await accessWhenReady(deps, 'runtime', context);
      const { handle } = access;
      const language = await inspectionLanguage(deps, handle);
      const filterMode = /[*?[]/.test(filter) ? 'glob' : 'substring';
      const program = inspectionProgram(language, { kind: 'list', filterMode, filter, start, count }, listingLimits);
      const listing = async (run: ScratchRun): Promise<KeptListing> => {
        const answer = parseInspectionAnswer(run, program.marker);
        const entries = answer.entries ?? [];
        const shown = fitEntries(entries, variablesAnswerBytes);
        const total = answer.total ?? entries.length;
        const next = start + shown.length;
        const taken = await takenAt(handle, answer);
        return {
          ...taken,
          answer: {
            ...(filter === '' ? {} : { filter }),
            total,
            start,
            variables: shown,
            ...(next < total
              ? {
                  truncated: {
                    next_start: next,
                    note: `${total - next} more variable(s): list_variables(start=${next}${filter === '' ? '' : `, filter=${JSON.stringify(filter)}`}).`,
                  },
                }
              : {}),
            ...(start > 0 && start >= total
              ? { note: `start ${start} is past the last variable (${total} in all).` }
              : {}),
            kernel_memory: memoryJson(answer.memory),
          },
        };
      };
      const outcome = await inspector.run(handle, program.source, waitMs, (run) => {
        if (run.kernelNotice !== undefined) {
          deps.kernelHistory.ran(handle.notebookId, undefined, run.kernelNotice, language === 'python');
          untold.set(handle.notebookId, run.kernelNotice);
        }
        listing(run).then(
          (kept) => inspector.keep(handle.notebookId, kept),
          (error: unknown) => deps.logger.debug('a late variable listing could not be read', { error }),
        );
      });
      access.ensureCurrent();
      if (outcome.kind === 'busy') {
        const kept = inspector.last(handle.notebookId);
        return jsonResult({
          notebook_id: handle.notebookId,
          busy: true,
          note: busyNote(outcome, waitMs, deps.clock.now()),
          last_listing: kept ? { ...labelOf(kept), ...kept.answer } : null,
          hint: busyHint,
          ...noticeJson(handle, language, undefined),
        });
      }
      const notice = noticeJson(handle, language, outcome.run.kernelNotice);
      const kept = await listing(outcome.run).catch((error: unknown) => {
        throw withNotice(error, notice.kernel_notice);
      });
      inspector.keep(handle.notebookId, kept);
      return jsonResult({ notebook_id: handle.notebookId, language, ...labelOf(kept), ...kept.answer, ...notice });
    },
  });

  const inspectVariable = defineChildTool({
    name: 'inspect_variable',
    session: 'runtime',
    description: `One variable of the active notebook's kernel (Python or R) in more detail, changing nothing the person sees (as list_variables): type, a longer repr (up to ${detailLimits.reprChars} characters), length or shape, its size where the language tells it; for a data frame up to ${detailLimits.columns} columns with dtypes and the first rows (rows, default ${defaultDetailRows}); for a list, dict, set or vector its first ${detailLimits.items} items. A name the kernel does not have is an error naming similar ones. Busy as list_variables.`,
    inputSchema: z.object({
      name: toolParameters.requiredString('The variable name.'),
      rows: toolParameters.optionalIndex(
        `Rows of a data frame to show (default ${defaultDetailRows}, at most ${maxDetailRows}).`,
      ),
      wait_secs: waitParameter,
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, context) => {
      const name = checkedText(args.name.trim(), 'name', false);
      const rows = given(args.rows) ?? defaultDetailRows;
      if (rows > maxDetailRows) throw new ToolError(`rows must be at most ${maxDetailRows}.`);
      const waitMs = waitMsOf(given(args.wait_secs));
      const access = await accessWhenReady(deps, 'runtime', context);
      const { handle } = access;
      const language = await inspectionLanguage(deps, handle);
      const program = inspectionProgram(language, { kind: 'inspect', name, rows }, { ...detailLimits, rows });
      const outcome: InspectionOutcome = await inspector.run(handle, program.source, waitMs);
      access.ensureCurrent();
      if (outcome.kind === 'busy') {
        const kept = inspector.last(handle.notebookId);
        const seen = (kept?.answer.variables as readonly { name?: unknown }[] | undefined)?.find(
          (entry) => entry.name === name,
        );
        return jsonResult({
          notebook_id: handle.notebookId,
          busy: true,
          note: busyNote(outcome, waitMs, deps.clock.now()),
          last_seen: kept && seen ? { ...labelOf(kept), variable: seen } : null,
          hint: busyHint,
          ...noticeJson(handle, language, undefined),
        });
      }
      const notice = noticeJson(handle, language, outcome.run.kernelNotice);
      let answer: InspectionAnswer;
      try {
        answer = parseInspectionAnswer(outcome.run, program.marker);
      } catch (error) {
        throw withNotice(error, notice.kernel_notice);
      }
      if (answer.missing === true || answer.entry === undefined) {
        const names = answer.names ?? [];
        const near = similarNames(name, names);
        const seeAll = `list_variables shows the ${answer.names_total ?? names.length} it has`;
        throw withNotice(
          new ToolError(
            `No variable named ${JSON.stringify(name)} in the kernel of notebook ${handle.notebookId}. ${near.length > 0 ? `Similar names: ${near.join(', ')}; ${seeAll}.` : `${seeAll}.`}`,
          ),
          notice.kernel_notice,
        );
      }
      const taken = await takenAt(handle, answer);
      return jsonResult({
        notebook_id: handle.notebookId,
        language,
        ...labelOf(taken),
        variable: answer.entry,
        kernel_memory: memoryJson(answer.memory),
        ...notice,
      });
    },
  });

  return [listVariables, inspectVariable];
}

const busyHint =
  'get_results(execution_id=…) shows a running cell and interrupt_kernel stops it; call again once it ends, or with a longer wait_secs.';

/** Why a busy answer is busy, in words. */
function busyNote(outcome: Extract<InspectionOutcome, { kind: 'busy' }>, waitMs: number, now: number): string {
  if (outcome.queued) {
    const since = Math.round((now - (outcome.queuedSince ?? now)) / 1000);
    return `The kernel is busy: a listing sent ${since} s ago still waits behind the code it runs (a cell, yours or another peer's). No other was sent; that one is kept as the last listing once it ran.`;
  }
  return `The kernel did not take the listing within ${waitMs / 1000} s: it is running other code (a cell, yours or another peer's), or the listing is slow. Nothing waits for it: the listing stays queued and is kept as the last listing once it ran.`;
}

/** `error`, its message followed by the kernel notice when there is one (the agent must hear of a lost kernel). */
function withNotice(error: unknown, notice: string | undefined): unknown {
  if (notice === undefined || !(error instanceof ToolError)) return error;
  return new ToolError(`${error.message} Note: ${notice}`);
}

/** When a kept listing was taken, as answers label it. */
function labelOf(kept: Pick<KeptListing, 'takenAt' | 'executionCount'>): Record<string, unknown> {
  return { taken_at: new Date(kept.takenAt).toISOString(), execution_count: kept.executionCount };
}

function waitMsOf(waitSecs: number | undefined): number {
  const secs = waitSecs ?? defaultInspectionWaitSecs;
  if (secs > maxInspectionWaitSecs) throw new ToolError(`wait_secs must be at most ${maxInspectionWaitSecs}.`);
  return Math.round(secs * 1000);
}

/** `value` when it is a usable name or filter: at most 200 characters, no control characters. */
function checkedText(value: string, what: string, emptyAllowed: boolean): string {
  if (!emptyAllowed && value === '') throw new ToolError(`${what} must not be empty.`);
  if (value.length > 200) throw new ToolError(`${what} is ${value.length} characters long; at most 200.`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new ToolError(`${what} must not contain control characters.`);
  return value;
}

/**
 * The language the notebook's kernel runs, if core can inspect it (its variables, its packages): by its kernelspec name, else
 * by the language the installed kernels list gives it; a tool error naming both otherwise.
 */
export async function inspectionLanguage(
  deps: ChildServerDependencies,
  handle: NotebookHandle,
): Promise<InspectionLanguage> {
  const byName = inspectionLanguageOf(handle.kernelName);
  if (byName !== undefined) return byName;
  let language: string | undefined;
  try {
    const kernels = (await deps.resolver.kernelLister()?.listKernels?.()) ?? [];
    language = kernels.find((kernel) => kernel.name === handle.kernelName)?.language;
  } catch (error) {
    deps.logger.debug('listing kernels to learn a kernel language failed', { error });
  }
  const bySpec = language === undefined ? undefined : inspectionLanguageOfSpec(language);
  if (bySpec !== undefined) return bySpec;
  throw new ToolError(
    `Notebook ${handle.notebookId} runs the kernel '${handle.kernelName}' (${language === undefined ? 'its language is not known here' : `language ${language}`}); core's kernel tools (variables, packages) support Python (ipykernel) and R (IRkernel) kernels. Use run_code instead.`,
  );
}
