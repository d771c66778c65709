const secretKeyPattern = /token|secret|password|passwd|authorization|cookie|credential/i;

/** A copy of `fields` safe to print: values under secret-looking keys become `[redacted]`. */
export function redactLogFields(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return redactValue(fields, 0) as Record<string, unknown>;
}

function redactValue(value: unknown, depth: number): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = secretKeyPattern.test(key) ? '[redacted]' : redactValue(item, depth + 1);
  }
  return out;
}
