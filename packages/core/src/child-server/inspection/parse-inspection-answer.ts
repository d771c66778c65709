import * as z from 'zod';
import type { CellOutput, ScratchRun } from '../../ports/notebook-handle.js';
import { ToolError } from '../tools/to-tool-failure.js';
import { escapedBytes } from '../tools/tool-result-budget.js';

/** Strings of an entry are held to this many characters, whatever the kernel sent (the program cuts them first). */
const maxEntryTextChars = 4000;

const text = z.string().transform((value) => boundText(value, maxEntryTextChars));

const variableEntrySchema = z.object({
  name: z.string(),
  type: text,
  repr: text,
  length: z.number().int().nonnegative().optional(),
  shape: z.array(z.number().int().nonnegative()).max(32).optional(),
  dtype: text.optional(),
  columns: z
    .array(z.object({ name: text, dtype: text }))
    .max(200)
    .optional(),
  columns_total: z.number().int().nonnegative().optional(),
  index: z.array(text).max(200).optional(),
  rows: z.array(z.array(text).max(200)).max(200).optional(),
  items: z
    .array(z.union([text, z.object({ key: text, value: text })]))
    .max(200)
    .optional(),
  size_bytes: z.number().nonnegative().optional(),
  size_note: text.optional(),
  error: text.optional(),
});

/** One variable of the kernel's namespace as the inspection program describes it. */
export type VariableEntry = z.output<typeof variableEntrySchema>;

const memorySchema = z.object({
  rss_bytes: z.number().nonnegative().optional(),
  used_bytes: z.number().nonnegative().optional(),
  peak_rss_bytes: z.number().nonnegative().optional(),
  source: text,
});

const answerSchema = z.object({
  language: z.string().optional(),
  error: text.optional(),
  memory: memorySchema.nullish(),
  execution_count: z.number().int().nullish(),
  total: z.number().int().nonnegative().optional(),
  entries: z.array(variableEntrySchema).optional(),
  entry: variableEntrySchema.optional(),
  missing: z.boolean().optional(),
  names: z.array(z.string()).optional(),
  names_total: z.number().int().nonnegative().optional(),
});

/** The inspection program's answer, checked. */
export type InspectionAnswer = z.output<typeof answerSchema>;

/**
 * The answer line a scratch run of an inspection program printed after `marker`, parsed and
 * checked; a tool error that says what went wrong otherwise (the run failed, was interrupted,
 * printed nothing the program would, or the program caught an error of its own).
 */
export function parseInspectionAnswer(run: ScratchRun, marker: string): InspectionAnswer {
  if (run.status === 'error' || run.status === 'aborted') {
    throw new ToolError(
      `Listing the kernel's variables failed: the inspection run ended ${run.status === 'error' ? `with ${errorText(run.outputs)}` : 'aborted (the kernel was interrupted, restarted, or stopped)'}. Nothing was changed; call it again.`,
    );
  }
  const stdout = run.outputs
    .filter((output) => output.output_type === 'stream' && output.name === 'stdout')
    .map((output) => joined(output.text))
    .join('');
  const at = stdout.indexOf(marker);
  if (at < 0) {
    throw new ToolError(
      "Listing the kernel's variables failed: the inspection program printed no answer (is the kernel's stdout redirected?). Use run_code to look at them instead.",
    );
  }
  const end = stdout.indexOf('\n', at);
  const line = stdout.slice(at + marker.length, end < 0 ? undefined : end);
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new ToolError("Listing the kernel's variables failed: the inspection program's answer was not valid JSON.");
  }
  const checked = answerSchema.safeParse(parsed);
  if (!checked.success) {
    throw new ToolError(
      `Listing the kernel's variables failed: the inspection program's answer was not as expected (${checked.error.issues[0]?.message ?? 'invalid'}).`,
    );
  }
  if (checked.data.error !== undefined) {
    throw new ToolError(`Listing the kernel's variables failed in the kernel: ${checked.data.error}`);
  }
  return checked.data;
}

/** The first entries of `entries` whose JSON fits in `budgetBytes` (at least one). Pure. */
export function fitEntries(entries: readonly VariableEntry[], budgetBytes: number): readonly VariableEntry[] {
  let used = 0;
  let shown = 0;
  for (const entry of entries) {
    const text = JSON.stringify(entry, null, 2);
    used += escapedBytes(text) + 8 * text.split('\n').length;
    if (shown > 0 && used > budgetBytes) break;
    shown += 1;
  }
  return entries.slice(0, shown);
}

/**
 * The names among `names` closest to `name`: the same but for case, containing it or contained
 * in it, or a few edits away (at most a third of its length); nearest first, at most `limit`. Pure.
 */
export function similarNames(name: string, names: readonly string[], limit = 5): readonly string[] {
  const wanted = name.toLowerCase();
  const allowed = Math.max(1, Math.floor(wanted.length / 3));
  const scored: { readonly name: string; readonly score: number }[] = [];
  for (const candidate of names) {
    const lower = candidate.toLowerCase();
    if (candidate === name) continue;
    let score: number;
    if (lower === wanted) score = 0;
    else if (wanted.length >= 2 && (lower.includes(wanted) || (lower.length >= 2 && wanted.includes(lower)))) score = 1;
    else {
      const distance = editDistance(wanted, lower, allowed);
      if (distance > allowed) continue;
      score = 1 + distance;
    }
    scored.push({ name: candidate, score });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((entry) => entry.name);
}

/** The kernel's memory use as an answer says it: the figure and where it comes from, or `unknown`. */
export function memoryJson(memory: InspectionAnswer['memory']): Record<string, unknown> | 'unknown' {
  if (!memory) return 'unknown';
  const figure =
    memory.rss_bytes !== undefined
      ? { rss_bytes: memory.rss_bytes }
      : memory.used_bytes !== undefined
        ? { used_bytes: memory.used_bytes }
        : memory.peak_rss_bytes !== undefined
          ? { peak_rss_bytes: memory.peak_rss_bytes }
          : undefined;
  if (figure === undefined) return 'unknown';
  const bytes = Object.values(figure)[0] as number;
  return { ...figure, mib: Math.round((bytes / 1024 / 1024) * 10) / 10, source: memory.source };
}

/** Edit distance with adjacent swaps counting one (optimal string alignment), given up (`limit + 1`) past `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] as number) + 1);
      }
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] as number;
}

function errorText(outputs: readonly CellOutput[]): string {
  const error = outputs.find((output) => output.output_type === 'error');
  if (!error) return 'an error';
  return boundText(`${String(error.ename ?? 'Error')}: ${String(error.evalue ?? '')}`, 300);
}

function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(String).join('');
  return '';
}

function boundText(value: string, limit: number): string {
  return value.length <= limit ? value : `${value.slice(0, limit - 1)}…`;
}
