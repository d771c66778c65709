import {
  CoreError,
  createChildMcpServer,
  createMcpContainer,
  GuardedStdioTransport,
  handoffFromEnvironment,
  Logger,
  type McpPlugin,
  NotebookTargetResolver,
  RejoinCoordinator,
  SessionRecoveryState,
  SessionSlot,
} from '@nteract-mcp/core';
import type { ArchiveOptions } from './archive-options.js';
import { createArchiveRejoinPlugin } from './create-archive-rejoin-plugin.js';

export interface ArchiveChildOptions {
  /** The distribution's child plugins (transports, local daemon, hosted); this plugin is added after them. */
  readonly basePlugins: readonly McpPlugin[];
  readonly archive: ArchiveOptions;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly version: string;
}

/**
 * A child MCP server on stdio, composed like `runt-mcp` plus this plugin: core's child server and
 * guarded stdio transport over the given plugins. A notebook handed by the proxy
 * (`handoffEnvironment.rejoinNotebook`) is rejoined through core's RejoinCoordinator before the
 * transport opens, and the outcome is reported in the session report. Resolves with the exit code
 * once stdin or the transport closes.
 */
export async function runArchiveChild(options: ArchiveChildOptions): Promise<number> {
  const container = createMcpContainer({
    plugins: [...options.basePlugins, createArchiveRejoinPlugin(options.archive)],
  });
  const logger = container.get(Logger).child('archive-child');
  const handoff = handoffFromEnvironment(options.env);
  const child = createChildMcpServer(container, {
    version: options.version,
    cwd: options.cwd,
    agentSession: handoff.agentSession,
  });
  if (handoff.rejoinNotebook) {
    const recovery = container.get(SessionRecoveryState);
    recovery.requestRejoin(handoff.rejoinNotebook);
    try {
      const target = container.get(NotebookTargetResolver).resolve(handoff.rejoinNotebook, { cwd: options.cwd });
      const result = await container
        .get(RejoinCoordinator)
        .rejoin(target, { peerLabel: handoff.peerLabel ?? child.peerLabel() });
      if (result.kind === 'published') recovery.settleRejoin('rejoined');
      else recovery.settleRejoin('failed', result.reason);
      logger.info('rejoin at start', { target: handoff.rejoinNotebook, result: result.kind });
    } catch (error) {
      recovery.settleRejoin('failed', CoreError.is(error) ? error.message : String(error));
    }
  }
  const transport = new GuardedStdioTransport({ logger: logger.child('transport') });
  return new Promise<number>((resolve) => {
    let finished = false;
    const finish = async (): Promise<void> => {
      if (finished) return;
      finished = true;
      await child.close().catch(() => undefined);
      const slot = container.get(SessionSlot);
      await Promise.all([slot.active, ...slot.parked].map((session) => session?.handle.close().catch(() => undefined)));
      resolve(0);
    };
    child.server.onclose = () => void finish();
    process.stdin.once('end', () => void finish());
    child.server.connect(transport).catch((error: unknown) => {
      logger.error('could not start the MCP transport', { error });
      void finish().then(() => resolve(1));
    });
  });
}
