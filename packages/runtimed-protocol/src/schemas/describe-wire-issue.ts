import type * as z from 'zod';

/*
 * Sentences for schema failures, naming the field: `Missing required string field 'cell_id'`,
 * `Field 'index' must be a number, got "3"`. Used as the per-parse error map, so a schema's own
 * message (set with `error:` on the schema) still wins.
 */

const nouns: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** A wire path as text: `cells[3].id`; empty for the message itself. */
export function formatWirePath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}

/** A value for an error message: a short quoted string, else its JSON type. Never throws. */
export function describeWireValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

function listValues(values: readonly unknown[]): string {
  const quoted = values.map((value) => (typeof value === 'string' ? `'${value}'` : String(value)));
  return quoted.length <= 1 ? (quoted[0] ?? 'nothing') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

function expectedOf(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === 'invalid_type') return nouns[issue.expected] ?? issue.expected;
  if (issue.code === 'invalid_value') return listValues(issue.values);
  return undefined;
}

/** The sentence for one schema issue (with its full path), in the daemon's `bad_request` style. */
export function describeWireIssue(issue: z.core.$ZodRawIssue): string {
  const field = formatWirePath(issue.path ?? []);
  const subject = field === '' ? 'The message' : `Field '${field}'`;
  const got = `, got ${describeWireValue(issue.input)}`;
  const missing = issue.input === undefined && field !== '';
  switch (issue.code) {
    case 'invalid_type':
      if (missing) return `Missing required ${issue.expected === 'int' ? 'integer' : issue.expected} field '${field}'`;
      return `${subject} must be ${nouns[issue.expected] ?? issue.expected}${got}`;
    case 'invalid_value':
      if (missing) return `Missing required field '${field}' (${listValues(issue.values)})`;
      return `${subject} must be ${listValues(issue.values)}${got}`;
    case 'invalid_union': {
      if (issue.discriminator !== undefined) {
        const value = (issue.input as Record<string, unknown> | undefined)?.[issue.discriminator];
        if (value === undefined) return `Missing required field '${field}'`;
        return `${subject} has an unknown value ${describeWireValue(value)}`;
      }
      if (missing) return `Missing required field '${field}'`;
      const firsts = issue.errors.map((branch) => branch[0]);
      if (firsts.every((first) => first !== undefined && first.path.length === 0)) {
        const alternatives = firsts.map((first) => expectedOf(first as z.core.$ZodRawIssue) ?? 'something else');
        return `${subject} must be ${[...new Set(alternatives)].join(' or ')}${got}`;
      }
      const first = firsts.find((candidate) => candidate !== undefined);
      return `${subject} matches none of its accepted forms${first ? ` (${first.message})` : ''}`;
    }
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return `${subject} must be a non-empty string`;
      if (issue.origin === 'string') return `${subject} must be at least ${issue.minimum} characters long`;
      if (issue.origin === 'array') return `${subject} must have at least ${issue.minimum} items`;
      return `${subject} must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${issue.minimum}${got}`;
    case 'too_big':
      if (issue.origin === 'string') return `${subject} must be at most ${issue.maximum} characters long`;
      if (issue.origin === 'array') return `${subject} must have at most ${issue.maximum} items`;
      return `${subject} must be ${issue.inclusive === false ? 'less than' : 'at most'} ${issue.maximum}${got}`;
    default:
      return `${subject} is invalid${got}`;
  }
}
