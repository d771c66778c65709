import { CoreError, type NotebookIdTarget } from '@nteract-mcp/core';

/** A notebook UUID (any case). */
export const notebookUuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A notebook id must be a UUID. The error text is the one agents know from the original server.
 * The result is trimmed and lowercased.
 */
export function parseNotebookIdTarget(raw: string): NotebookIdTarget {
  const text = raw.trim();
  if (!notebookUuidPattern.test(text)) {
    throw new CoreError(
      'invalidTarget',
      `Invalid notebook_id '${raw}': must be a UUID (e.g. from list_active_notebooks). To open a file, use the 'path' parameter instead.`,
    );
  }
  return Object.freeze({ kind: 'notebook-id', notebookId: text.toLowerCase() });
}
