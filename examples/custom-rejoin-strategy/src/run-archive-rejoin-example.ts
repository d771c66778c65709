import {
  ContributionProvider,
  DaemonPort,
  type NotebookTarget,
  type RejoinOutcome,
  RejoinStrategy,
  SourceFileProbe,
} from '@nteract-mcp/core';
import { createTestContainer, FakeDaemonPort, FakeSourceFileProbe } from '@nteract-mcp/core/testing';
import { createLocalDaemonPlugin } from '@nteract-mcp/plugin-local-daemon';
import { createArchiveRejoinPlugin } from './create-archive-rejoin-plugin.js';

export interface ExampleReport {
  readonly strategies: readonly string[];
  readonly archived: RejoinOutcome['kind'];
  readonly openedPath: string | undefined;
  readonly vanished: RejoinOutcome['kind'];
}

/**
 * Composes the local-daemon plugin with the third-party plugin (the whole composition is the
 * `plugins` list), with a fake daemon and file system in place of the real ones, and tries two
 * rejoins: one notebook that moved to the archive, one that is gone for good.
 */
export async function runArchiveRejoinExample(): Promise<ExampleReport> {
  const daemon = new FakeDaemonPort();
  const files = new FakeSourceFileProbe(['/archive/report.ipynb']);
  const container = createTestContainer({
    plugins: [createLocalDaemonPlugin(), createArchiveRejoinPlugin({ archiveDir: '/archive' })],
  })
    .override(DaemonPort, daemon)
    .override(SourceFileProbe, files)
    .build();

  const strategies = container
    .get(ContributionProvider, { name: RejoinStrategy })
    .getContributions() as readonly RejoinStrategy[];
  const attempt = (target: NotebookTarget): Promise<RejoinOutcome> => {
    const strategy = strategies.find((candidate) => candidate.supports(target));
    if (!strategy) throw new Error(`no strategy supports ${target.kind}`);
    return strategy.rejoin(target, {
      peerLabel: 'example',
      signal: new AbortController().signal,
      expectedIncarnation: daemon.incarnation,
    });
  };

  const archived = await attempt({ kind: 'local-path', path: '/work/report.ipynb', existed: false });
  const vanished = await attempt({ kind: 'local-path', path: '/work/draft.ipynb', existed: false });
  return {
    strategies: strategies.map((strategy) => strategy.id),
    archived: archived.kind,
    openedPath: archived.kind === 'connected' ? archived.handle.notebookPath : undefined,
    vanished: vanished.kind,
  };
}
