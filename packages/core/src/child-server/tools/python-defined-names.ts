/** What the top level of some Python code defines, by kind, each name once, in the order first defined. */
export interface PythonDefinedNames {
  /** Names bound by assignment (`x = …`, `a, b = …`, `x: int = …`, `x += …`, `for i in …`, `with … as f`). */
  readonly variables: readonly string[];
  readonly functions: readonly string[];
  readonly classes: readonly string[];
  /** As written: `numpy as np`, `os`, `path from os`, `* from math`. */
  readonly imports: readonly string[];
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
const keywords = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

/**
 * The names the top level of Python `sources` defines (a cell's source each, in the order they
 * ran): assignments, `def`, `class`, `import x [as y]`, `from x import y [as z]`, `for` targets and
 * `with … as` names. A line-level reading, not a parser: statements inside brackets, strings and
 * indented blocks are skipped (so a name assigned only inside `if:` is not listed), IPython magics
 * (`%`, `!`) too. It never throws on code it does not understand; it just lists less.
 */
export function pythonDefinedNames(sources: readonly string[]): PythonDefinedNames {
  const found = { variables: new Set<string>(), functions: new Set<string>(), classes: new Set<string>() };
  const imports = new Set<string>();
  for (const source of sources) {
    for (const statement of topLevelStatements(source)) {
      readStatement(statement, found, imports);
    }
  }
  return {
    variables: [...found.variables],
    functions: [...found.functions],
    classes: [...found.classes],
    imports: [...imports],
  };
}

function readStatement(
  statement: string,
  found: { variables: Set<string>; functions: Set<string>; classes: Set<string> },
  imports: Set<string>,
): void {
  const text = statement.trim();
  let match = /^(?:async\s+)?def\s+([A-Za-z_]\w*)/.exec(text);
  if (match) {
    found.functions.add(match[1] as string);
    return;
  }
  match = /^class\s+([A-Za-z_]\w*)/.exec(text);
  if (match) {
    found.classes.add(match[1] as string);
    return;
  }
  match = /^import\s+(.+)$/.exec(text);
  if (match) {
    for (const part of splitTop(match[1] as string, ',')) {
      const item = /^([\w.]+)(?:\s+as\s+(\w+))?$/.exec(part.trim());
      if (item) imports.add(item[2] ? `${item[1]} as ${item[2]}` : (item[1] as string));
    }
    return;
  }
  match = /^from\s+([\w.]+)\s+import\s+(.+)$/.exec(text);
  if (match) {
    const from = match[1] as string;
    for (const part of splitTop((match[2] as string).replace(/[()]/g, ''), ',')) {
      const item = /^(\w+|\*)(?:\s+as\s+(\w+))?$/.exec(part.trim());
      if (item) imports.add(`${item[2] ? `${item[1]} as ${item[2]}` : item[1]} from ${from}`);
    }
    return;
  }
  match = /^(?:async\s+)?for\s+(.+?)\s+in\s/.exec(text);
  if (match) {
    addTargets(match[1] as string, found.variables);
    return;
  }
  if (/^(?:async\s+)?with\s/.test(text)) {
    for (const as of text.matchAll(/\bas\s+([A-Za-z_]\w*)/g)) found.variables.add(as[1] as string);
    return;
  }
  // Assignments: `a = b = …`, `a, b = …`, `a: T = …`, `a += …` (the targets before the last `=`).
  const parts = splitAssignments(text);
  if (parts.length < 2) {
    const annotated = /^([A-Za-z_]\w*)\s*:\s*[^=]+$/.exec(text);
    if (annotated && !keywords.has(annotated[1] as string)) found.variables.add(annotated[1] as string);
    return;
  }
  for (const target of parts.slice(0, -1)) {
    addTargets(target.replace(/\s*(?:[-+*/%&|^@]|\/\/|\*\*|<<|>>)$/, '').replace(/:[^,]*$/, ''), found.variables);
  }
}

/** Adds the plain names of an assignment target (`a`, `a, b`, `(a, [b, *c])`); attribute and subscript targets bind none. */
function addTargets(target: string, into: Set<string>): void {
  for (const raw of target.replace(/[()[\]]/g, ' ').split(',')) {
    const name = raw.trim().replace(/^\*/, '');
    if (identifier.test(name) && !keywords.has(name)) into.add(name);
  }
}

/** `text` cut at each assignment `=` outside brackets and strings (not `==`, `<=`, `>=`, `!=`, or `=` in a call's keyword). */
function splitAssignments(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i] as string;
    if (quote) {
      if (ch === '\\') i += 1;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#') break;
    else if ('([{'.includes(ch)) depth += 1;
    else if (')]}'.includes(ch)) depth -= 1;
    else if (ch === '=' && depth === 0) {
      const before = text[i - 1] ?? '';
      const after = text[i + 1] ?? '';
      if (after === '=' || '=<>!'.includes(before)) {
        if (after === '=') i += 1;
        continue;
      }
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function splitTop(text: string, separator: string): string[] {
  return text.split(separator).filter((part) => part.trim() !== '');
}

/**
 * The statements of `source` that start at column 0, each joined across the lines it spans
 * (open brackets, triple-quoted strings, backslash continuations); indented lines, comments and
 * IPython magics are left out.
 */
function topLevelStatements(source: string): string[] {
  const statements: string[] = [];
  let current: string[] | undefined;
  let depth = 0;
  let triple: string | undefined;
  let continued = false;
  for (const line of source.split(/\r?\n/)) {
    const startsStatement = depth === 0 && triple === undefined && !continued;
    if (startsStatement) {
      if (current) statements.push(current.join(' '));
      current = undefined;
      if (/^[A-Za-z_([]/.test(line)) current = [line];
    } else if (current) current.push(line);
    ({ depth, triple } = scan(line, depth, triple));
    continued = triple === undefined && /\\\s*$/.test(line);
  }
  if (current) statements.push(current.join(' '));
  return statements.map((statement) => statement.replace(/("""|''')[\s\S]*?(\1|$)/g, '""'));
}

/** Bracket depth and open triple quote after `line`. */
function scan(
  line: string,
  depthBefore: number,
  tripleBefore: string | undefined,
): { depth: number; triple: string | undefined } {
  let depth = depthBefore;
  let triple = tripleBefore;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const three = line.slice(i, i + 3);
    if (triple) {
      if (three === triple) {
        triple = undefined;
        i += 2;
      }
      continue;
    }
    const ch = line[i] as string;
    if (quote) {
      if (ch === '\\') i += 1;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (three === '"""' || three === "'''") {
      triple = three;
      i += 2;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#') break;
    else if ('([{'.includes(ch)) depth += 1;
    else if (')]}'.includes(ch)) depth = Math.max(0, depth - 1);
  }
  return { depth, triple };
}
