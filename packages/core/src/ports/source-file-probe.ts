import { defineToken } from '../di/define-token.js';

/** Whether a saved notebook's file is there: present (with its canonical path), missing, or unknown. */
export type SourceFileState =
  | { readonly kind: 'present'; readonly canonicalPath: string }
  | { readonly kind: 'missing' }
  | { readonly kind: 'unknown'; readonly reason: string };

/**
 * Asks whether a notebook's source file exists, before a saved-path rejoin.
 * Guarantees: `missing` only when the path definitively does not exist (ENOENT/ENOTDIR);
 * other failures (permissions, I/O) are `unknown`, which callers treat as transient.
 * Does not guarantee: that the file still exists by the time it is opened.
 */
export interface SourceFileProbe {
  probe(path: string): Promise<SourceFileState>;
}

export const SourceFileProbe = defineToken<SourceFileProbe>('core', 'SourceFileProbe');
