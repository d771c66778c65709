import { defineToken } from '@nteract-mcp/core';

/** Where archived notebooks are kept, and where their working copies are opened. */
export interface ArchiveOptions {
  /** The archive: one `.ipynb` file per archived notebook, never written by this plugin. */
  readonly archiveDir: string;
  /** Where a checked-out notebook's working copy lives; the daemon opens and saves this file. */
  readonly workDir: string;
}

export const ArchiveOptions = defineToken<ArchiveOptions>('example-archive-rejoin', 'ArchiveOptions');
