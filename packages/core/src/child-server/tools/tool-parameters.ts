import * as z from 'zod';

/** A cell's type, as `create_cell` and `set_cell` take it. */
export const cellTypeParameter = z
  .enum(['code', 'markdown', 'raw'])
  .nullish()
  .describe("Cell type: 'code' (default), 'markdown' or 'raw'.");

/**
 * Parameter schemas shared by the child's tools. Every optional parameter also accepts `null`
 * (agents send it for "not given"). Booleans also accept the strings `"true"`/`"false"` (any case) and
 * numbers numeric strings, which some clients send; any other value is refused with the argument's
 * name (`and_run: "yes"` must not quietly mean "no").
 */
export const toolParameters = {
  /** A required string. */
  requiredString(description: string) {
    return z.string().describe(description);
  },
  /** An optional string (`null` = absent). */
  optionalString(description: string) {
    return z.string().nullish().describe(description);
  },
  /** An optional boolean (`null` = absent). */
  optionalBoolean(description: string) {
    return z.preprocess(booleanString, z.boolean().nullish()).describe(description);
  },
  /** An optional positive number (`null` = absent). */
  optionalPositiveNumber(description: string) {
    return z.preprocess(numericString, z.number().positive().nullish()).describe(description);
  },
  /** An optional integer ≥ 0 (`null` = absent). */
  optionalIndex(description: string) {
    return z.preprocess(numericString, z.number().int().min(0).nullish()).describe(description);
  },
} as const;

/** `"true"` / `"false"` (any case) become booleans; every other value is left for the schema to judge. */
function booleanString(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const word = value.trim().toLowerCase();
  if (word === 'true') return true;
  if (word === 'false') return false;
  return value;
}

/** A value that is a decimal number written as a string becomes that number. */
function numericString(value: unknown): unknown {
  if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  return value;
}

/** `undefined` for `null` (the tools treat both as "not given"). */
export function given<T>(value: T | null | undefined): T | undefined {
  return value ?? undefined;
}
