/**
 * A JSON-RPC request id as a map or set key, told apart by type: `7` and `"7"` are different
 * requests (`number:7`, `string:7`). Pure.
 */
export function requestIdKey(id: string | number): string {
  return `${typeof id}:${id}`;
}
