/**
 * The commands the top-level README tells a user to type, read from its text so that the tests
 * that run them (pack-and-install, client-configs) run what the README says and cannot drift:
 *
 * - `install`: the lines of the first `sh` block of its `## Install` section, in order;
 * - `claudeMcpAdd`: every inline `claude mcp add …` command (a line with `…` is a pattern, not a
 *   command, and is left out), parsed as Claude Code parses it;
 * - `conformance`: the `sh` block of its `### MCP conformance` section (how to start what the suite
 *   tests), and every `` `conformance server …` prints `Passed: …` `` statement there (conformance.test).
 */
export interface ReadmeCommands {
  readonly install: readonly string[];
  readonly claudeMcpAdd: readonly ClaudeMcpAdd[];
  readonly conformance: ReadmeConformance;
}

export interface ReadmeConformance {
  /** The lines of the section's `sh` block. */
  readonly setup: readonly string[];
  readonly runs: readonly ConformanceRunStatement[];
}

/** `` `conformance server --url <url> --scenario ping` prints `Passed: 2/2, 0 failed, 0 warnings` ``. */
export interface ConformanceRunStatement {
  /** The command as written, `conformance server --url <url> …`. */
  readonly line: string;
  /** Its words after `conformance`; `<url>` stands for the bridge's URL. */
  readonly args: readonly string[];
  /** The suite's `Passed:` line the README says it prints. */
  readonly prints: string;
}

/** A `claude mcp add <name> [-e KEY=value]… [-s scope] -- <command> [args]…` line. */
export interface ClaudeMcpAdd {
  readonly line: string;
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
  readonly command: string;
  readonly args: readonly string[];
}

export function readmeCommands(readme: string): ReadmeCommands {
  return { install: installLines(readme), claudeMcpAdd: claudeMcpAddLines(readme), conformance: conformance(readme) };
}

function conformance(readme: string): ReadmeConformance {
  const section = sectionOf(readme, '### MCP conformance');
  const runs: ConformanceRunStatement[] = [];
  for (const match of section.matchAll(/`(conformance server [^`]*)` prints `(Passed: [^`]*)`/g)) {
    const line = (match[1] ?? '').replace(/\s+/g, ' ').trim();
    runs.push({ line, args: line.split(' ').slice(1), prints: match[2] ?? '' });
  }
  if (runs.length === 0)
    throw new Error('the MCP conformance section of README.md states no `conformance server …` prints `Passed: …`');
  return { setup: shLines(section, 'MCP conformance'), runs };
}

function installLines(readme: string): string[] {
  return shLines(sectionOf(readme, '## Install'), 'Install');
}

/** From the `heading` line to the next heading of the same or a higher level (outside code blocks). */
function sectionOf(readme: string, heading: string): string {
  const lines = readme.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`README.md has no "${heading}" section`);
  const level = heading.indexOf(' ');
  let fenced = false;
  let end = lines.length;
  for (let index = start + 1; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line.startsWith('```')) fenced = !fenced;
    const hashes = /^(#+) /.exec(line)?.[1]?.length;
    if (!fenced && hashes !== undefined && hashes <= level) {
      end = index;
      break;
    }
  }
  return `\n${lines.slice(start, end).join('\n')}\n`;
}

/** The non-comment lines of the first ```sh block of `section`. */
function shLines(section: string, name: string): string[] {
  const block = /\n```sh\n([\s\S]*?)\n```/.exec(section);
  if (!block?.[1]) throw new Error(`the ${name} section of README.md has no \`\`\`sh block`);
  return block[1]
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function claudeMcpAddLines(readme: string): ClaudeMcpAdd[] {
  const found: ClaudeMcpAdd[] = [];
  for (const match of readme.matchAll(/`(claude mcp add\b[^`]*)`/g)) {
    const line = (match[1] ?? '').replace(/\s+/g, ' ').trim();
    if (line.includes('…')) continue;
    found.push(parseClaudeMcpAdd(line));
  }
  return found;
}

/**
 * Claude Code's `-e` is variadic: it takes every word up to `--`, so a server name after it is read
 * as one more variable and refused ("Invalid environment variable format"). The name must come first.
 */
function parseClaudeMcpAdd(line: string): ClaudeMcpAdd {
  const words = line.split(' ');
  const name = words[3] ?? '';
  if (name === '' || name.startsWith('-'))
    throw new Error(
      `${line}: the server name must come right after "claude mcp add" (before -e, which takes every word up to --)`,
    );
  const env: Record<string, string> = {};
  let index = 4;
  for (; index < words.length && words[index] !== '--'; index++) {
    const word = words[index];
    const value = words[index + 1] ?? '';
    if (word === '-e' || word === '--env') {
      const equals = value.indexOf('=');
      if (equals <= 0) throw new Error(`${line}: -e wants NAME=value, got ${value}`);
      env[value.slice(0, equals)] = value.slice(equals + 1);
      index++;
    } else if (word === '-s' || word === '--scope') {
      index++;
    } else {
      throw new Error(`${line}: the test does not know the option ${word}`);
    }
  }
  const [command, ...args] = words.slice(index + 1);
  if (words[index] !== '--' || !command) throw new Error(`${line}: no command after --`);
  return { line, name, env, command, args };
}
