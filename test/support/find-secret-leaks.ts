import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolOutcome, UserSession } from './start-user-session.js';

/**
 * Where any of `secrets` shows up in a session: the results of `outcomes`, the proxy's and the
 * child's stderr, any file of the session (HOME, caches, logs, project), the handoff variables of
 * the running child, and, with `childEnvironment`, anywhere in the child's environment. Empty: no
 * leak.
 */
export function findSecretLeaks(
  session: UserSession,
  outcomes: readonly ToolOutcome[],
  secrets: readonly string[],
  options: { readonly childEnvironment?: boolean } = {},
): string[] {
  const has = (text: string) => secrets.some((secret) => text.includes(secret));
  const leaks: string[] = [];
  for (const [i, outcome] of outcomes.entries()) if (has(JSON.stringify(outcome.raw))) leaks.push(`result ${i}`);
  if (has(session.stderr())) leaks.push('stderr of the proxy and the child');
  for (const file of filesUnder(session.dirs.root)) if (has(readIfThere(file))) leaks.push(file);
  const child = session.pids.child();
  if (child !== undefined) {
    const environment = readFileSync(`/proc/${child}/environ`, 'utf8');
    const handoff = environment.split('\0').filter((entry) => entry.startsWith('NTERACT_MCP_'));
    if (handoff.some(has)) leaks.push('the handoff environment of the child');
    if (options.childEnvironment && has(environment)) leaks.push('the environment of the child');
  }
  return leaks;
}

/** Every file under `dir` (those of 50 MB or more left out). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile() && statSync(path).size < 50_000_000) out.push(path);
  }
  return out;
}

/** A file's text, or '' when it went between the listing and the read (a temp file renamed into place). */
function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'latin1');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}
