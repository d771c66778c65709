import type { Tool } from '@modelcontextprotocol/sdk/types.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOptional(value: unknown, check: (present: unknown) => boolean): boolean {
  return value === undefined || check(value);
}

const isString = (value: unknown): boolean => typeof value === 'string';

/** A JSON Schema object whose root `type` is `"object"`, as MCP requires for tool schemas. */
function isObjectSchema(value: unknown): boolean {
  return (
    isRecord(value) &&
    value.type === 'object' &&
    isOptional(value.properties, isRecord) &&
    isOptional(value.required, (required) => Array.isArray(required) && required.every(isString))
  );
}

function isIcon(value: unknown): boolean {
  return (
    isRecord(value) &&
    isString(value.src) &&
    isOptional(value.mimeType, isString) &&
    isOptional(value.sizes, (sizes) => Array.isArray(sizes) && sizes.every(isString))
  );
}

/**
 * Whether `value` is an MCP tool definition as the specification describes it: a non-empty
 * `name`; optional `title` and `description` strings; an `inputSchema` (and optional
 * `outputSchema`) that is a JSON Schema object with root type `"object"`; optional `annotations`,
 * `_meta` and `execution` objects and `icons`. Other members are allowed (the specification lets
 * tools grow). The proxy checks the tool lists it keeps on disk with it, without loading a schema
 * library for that one check.
 */
export function isMcpTool(value: unknown): value is Tool {
  return (
    isRecord(value) &&
    typeof value.name === 'string' &&
    value.name.length > 0 &&
    isOptional(value.title, isString) &&
    isOptional(value.description, isString) &&
    isObjectSchema(value.inputSchema) &&
    isOptional(value.outputSchema, isObjectSchema) &&
    isOptional(value.annotations, isRecord) &&
    isOptional(value._meta, isRecord) &&
    isOptional(value.execution, isRecord) &&
    isOptional(value.icons, (icons) => Array.isArray(icons) && icons.every(isIcon))
  );
}
