import { CoreError, type NotebookIdTarget } from '@nteract-mcp/core';
import { wireNotebookIdPattern } from '@nteract-mcp/runtimed-protocol';

/** A notebook UUID (any case): the daemon's notebook id, as its wire contract defines it. */
export const notebookUuidPattern = wireNotebookIdPattern;

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
