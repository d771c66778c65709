import { defineToken } from '@nteract-mcp/core';

/** Where moved notebooks end up. */
export interface ArchiveOptions {
  readonly archiveDir: string;
}

export const ArchiveOptions = defineToken<ArchiveOptions>('example-archive-rejoin', 'ArchiveOptions');
