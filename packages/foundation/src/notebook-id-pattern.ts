/**
 * A notebook id as written: the UUID (8-4-4-4-12 hex digits, either case) the daemon names every
 * room, registry binding and persisted untitled notebook by. The wire contract refuses anything
 * else (`runtimed-protocol`'s `wireNotebookIdPattern` is this pattern); the proxy and the test
 * stand-ins tell an id from a path or URL by it.
 */
export const notebookIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
