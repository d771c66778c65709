import * as z from 'zod';

/**
 * Parameter schemas shared by the child's tools. Every optional parameter also accepts `null`
 * (agents send it for "not given"). Booleans accept `"true"`/`"false"`, and any other string
 * counts as absent, as in the original server; numbers accept numeric strings.
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
  /** An optional boolean (`null` and unknown strings = absent). */
  optionalBoolean(description: string) {
    return z
      .preprocess((value) => {
        if (value === 'true') return true;
        if (value === 'false') return false;
        return typeof value === 'string' ? undefined : value;
      }, z.boolean().nullish())
      .describe(description);
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

/** A value that is a decimal number written as a string becomes that number. */
function numericString(value: unknown): unknown {
  if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  return value;
}

/** `undefined` for `null` (the tools treat both as "not given"). */
export function given<T>(value: T | null | undefined): T | undefined {
  return value ?? undefined;
}
