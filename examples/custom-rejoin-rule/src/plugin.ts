import { CoreError, type McpPlugin } from '@nteract-mcp/core';
import { createArchiveRejoinPlugin } from './create-archive-rejoin-plugin.js';

/**
 * The plugin module the distribution's child loads (`runt-mcp --plugin <this file>` or
 * `NTERACT_MCP_PLUGINS`): the archive plugin, configured from the child's environment.
 * `ACME_ARCHIVE_DIR` is the archive; `ACME_ARCHIVE_WORK_DIR` where working copies are opened.
 */
export function createPlugin(context: { readonly env: Readonly<Record<string, string | undefined>> }): McpPlugin {
  const archiveDir = context.env.ACME_ARCHIVE_DIR?.trim();
  const workDir = context.env.ACME_ARCHIVE_WORK_DIR?.trim();
  if (!archiveDir || !workDir) {
    throw new CoreError('invalidContribution', 'the archive plugin needs ACME_ARCHIVE_DIR and ACME_ARCHIVE_WORK_DIR');
  }
  return createArchiveRejoinPlugin({ archiveDir, workDir });
}
