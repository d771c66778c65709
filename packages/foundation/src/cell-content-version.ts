import { createHash } from 'node:crypto';

/**
 * The version of a notebook cell's content: a short hash of its type and source (outputs do not
 * count). Equal content gives an equal version in every process and daemon life; any edit of type
 * or source gives another. A change written against a version is refused when the cell's version
 * is no longer that one.
 */
export function cellContentVersion(cellType: string, source: string): string {
  return createHash('sha256').update(cellType).update('\0').update(source).digest('base64url').slice(0, 12);
}
