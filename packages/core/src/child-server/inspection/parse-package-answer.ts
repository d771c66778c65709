import * as z from 'zod';
import type { CellOutput } from '../../ports/notebook-handle.js';
import { ToolError } from '../tools/to-tool-failure.js';

const text = z.string().max(4096);

const environmentSchema = z.object({
  interpreter: text,
  prefix: text,
  version: text.optional(),
  kind: text,
  externally_managed: z.boolean(),
  externally_managed_file: text.optional(),
  installer: text.nullable().optional(),
  uv: text.optional(),
  r_home: text.optional(),
  lib_paths: z.array(text).optional(),
  writable: z.boolean().optional(),
});

/** The kernel's environment as a package program reads it. */
export type PackageEnvironment = z.output<typeof environmentSchema>;

/** name → version; R's empty named list comes as `[]`. */
const versionsSchema = z.union([z.record(z.string(), z.string()), z.array(z.never()).transform(() => ({}))]);

const installSchema = z.object({
  ran: z.boolean(),
  why: text.optional(),
  missing: z.array(text).optional(),
  command: z.array(text).optional(),
  exit_code: z.number().int().nullable().optional(),
  before: versionsSchema.optional(),
  after: versionsSchema.optional(),
  loaded: z.array(z.object({ package: text, modules: z.array(text) })).optional(),
});

/** What an install program did (`ran: false`: it ran nothing, `why` says why). */
export type InstallReport = z.output<typeof installSchema>;

const answerSchema = z.object({
  language: z.string().optional(),
  error: text.optional(),
  environment: environmentSchema.optional(),
  total: z.number().int().nonnegative().optional(),
  packages: z
    .array(z.object({ name: text, version: text, library: text.optional() }))
    .max(1000)
    .optional(),
  install: installSchema.optional(),
});

/** A package program's answer, checked. */
export type PackageAnswer = z.output<typeof answerSchema> & { readonly environment: PackageEnvironment };

/**
 * A package program's answer from the outputs of its run: the line after `marker` on stdout,
 * parsed and checked, and what was printed before it (the installer's output). A tool error that
 * says what went wrong otherwise; `what` names the work (e.g. "Listing the kernel's packages").
 */
export function parsePackageAnswer(
  outputs: readonly CellOutput[],
  marker: string,
  what: string,
): { readonly answer: PackageAnswer; readonly printed: string } {
  const stdout = outputs
    .filter((output) => output.output_type === 'stream')
    .map((output) => joined(output.text))
    .join('');
  const at = stdout.indexOf(marker);
  if (at < 0) {
    const error = outputs.find((output) => output.output_type === 'error');
    const why = error
      ? `the kernel answered ${String(error.ename ?? 'an error')}: ${String(error.evalue ?? '').slice(0, 300)}`
      : 'the program printed no answer (was it interrupted, or is the kernel’s stdout redirected?)';
    throw new ToolError(`${what} failed: ${why}.`);
  }
  const end = stdout.indexOf('\n', at);
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout.slice(at + marker.length, end < 0 ? undefined : end));
  } catch {
    throw new ToolError(`${what} failed: the program's answer was not valid JSON.`);
  }
  const checked = answerSchema.safeParse(parsed);
  if (!checked.success) {
    throw new ToolError(
      `${what} failed: the program's answer was not as expected (${checked.error.issues[0]?.message ?? 'invalid'}).`,
    );
  }
  if (checked.data.error !== undefined) throw new ToolError(`${what} failed in the kernel: ${checked.data.error}`);
  if (checked.data.environment === undefined) throw new ToolError(`${what} failed: the program named no environment.`);
  return { answer: checked.data as PackageAnswer, printed: stdout.slice(0, at) };
}

/** What an install changed: packages added, changed (from → to) and removed, by name. Pure. */
export interface PackageChanges {
  readonly added: readonly { readonly name: string; readonly version: string }[];
  readonly changed: readonly { readonly name: string; readonly from: string; readonly to: string }[];
  readonly removed: readonly { readonly name: string; readonly version: string }[];
}

/** The difference between two package lists (name → version), each part in name order. Pure. */
export function packageChanges(
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
): PackageChanges {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const added: { name: string; version: string }[] = [];
  const changed: { name: string; from: string; to: string }[] = [];
  const removed: { name: string; version: string }[] = [];
  for (const name of names) {
    const from = before[name];
    const to = after[name];
    if (from === undefined && to !== undefined) added.push({ name, version: to });
    else if (to === undefined && from !== undefined) removed.push({ name, version: from });
    else if (from !== to) changed.push({ name, from: from as string, to: to as string });
  }
  return { added, changed, removed };
}

/** Whether nothing changed. Pure. */
export function unchanged(changes: PackageChanges): boolean {
  return changes.added.length === 0 && changes.changed.length === 0 && changes.removed.length === 0;
}

/** The last `maxLines` lines of `printed` (at most `maxChars` characters), and how many lines were left out. Pure. */
export function outputTail(
  printed: string,
  maxLines = 40,
  maxChars = 4000,
): { readonly tail: string; readonly omitted_lines: number } {
  const lines = printed.replace(/\r\n?/g, '\n').replace(/\n+$/, '').split('\n');
  if (lines.length === 1 && lines[0] === '') return { tail: '', omitted_lines: 0 };
  const kept = lines.slice(-maxLines);
  let tail = kept.join('\n');
  if (tail.length > maxChars) tail = `…${tail.slice(tail.length - maxChars + 1)}`;
  return { tail, omitted_lines: lines.length - kept.length };
}

function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(String).join('');
  return '';
}
