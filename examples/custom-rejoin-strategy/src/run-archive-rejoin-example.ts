import {
  ContributionProvider,
  DaemonPort,
  type NotebookTarget,
  RejoinCoordinator,
  type RejoinResult,
  RejoinStrategy,
  SessionSlot,
  SourceFileProbe,
} from '@nteract-mcp/core';
import { createTestContainer, FakeDaemonPort, FakeSourceFileProbe } from '@nteract-mcp/core/testing';
import { createLocalDaemonPlugin } from '@nteract-mcp/plugin-local-daemon';
import { createArchiveRejoinPlugin } from './create-archive-rejoin-plugin.js';

export interface ExampleReport {
  readonly strategies: readonly string[];
  readonly archived: RejoinResult['kind'];
  readonly openedPath: string | undefined;
  readonly vanished: RejoinResult['kind'];
}

/**
 * Composes the third-party plugin with the local-daemon plugin (the whole composition is the
 * `plugins` list; listed first, its strategy is asked first), with a fake daemon and file system in
 * place of the real ones, and lets core's RejoinCoordinator bring back two notebooks: one that
 * moved to the archive (published into the session slot) and one that is gone for good (evicted).
 */
export async function runArchiveRejoinExample(): Promise<ExampleReport> {
  const daemon = new FakeDaemonPort();
  const files = new FakeSourceFileProbe(['/archive/report.ipynb']);
  const container = createTestContainer({
    plugins: [createArchiveRejoinPlugin({ archiveDir: '/archive' }), createLocalDaemonPlugin()],
  })
    .override(DaemonPort, daemon)
    .override(SourceFileProbe, files)
    .build();

  const strategies = container.get(ContributionProvider, { name: RejoinStrategy }).getContributions();
  const coordinator = container.get(RejoinCoordinator);
  const slot = container.get(SessionSlot);
  const rejoin = (target: NotebookTarget): Promise<RejoinResult> =>
    coordinator.rejoin(target, { peerLabel: 'example' });

  const vanished = await rejoin({ kind: 'local-path', path: '/work/draft.ipynb', existed: false });
  const archived = await rejoin({ kind: 'local-path', path: '/work/report.ipynb', existed: false });
  return {
    strategies: strategies.map((strategy) => strategy.id),
    archived: archived.kind,
    openedPath: slot.active?.handle.notebookPath,
    vanished: vanished.kind,
  };
}
