import { createHash } from 'node:crypto';

/** The notebook id of a hosted notebook: a UUID derived from its URL identity, so a rejoin keeps it. */
export function hostedNotebookId(url: string): string {
  const hex = createHash('sha256').update(`hosted-url:${url}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
