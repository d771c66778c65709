import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotebookTargetResolver, RejoinCoordinator, type RejoinResult, readSessionReport } from '@nteract-mcp/core';
import { startChildServerTestHarness } from '@nteract-mcp/core/testing';
import { createArchiveRejoinPlugin } from './create-archive-rejoin-plugin.js';

export interface ExampleReport {
  readonly kinds: readonly string[];
  /** `connect_notebook(url="archive:report.ipynb")`: the path the daemon opened (the working copy's name). */
  readonly connectedFile: string | undefined;
  /** The rejoin target the child reports for that session: the archive target itself. */
  readonly reportedTarget: string | null | undefined;
  /** A cell written through a notebook tool on the checked-out notebook. */
  readonly cellCreated: boolean;
  /** After the session is lost, core's RejoinCoordinator, reopening through this plugin's backend. */
  readonly rejoined: RejoinResult['kind'];
  /** The file the rejoined session has open: the working copy again (the agent's edits kept). */
  readonly rejoinedFile: string | undefined;
  /** An archived notebook never checked out: no working copy to reopen. */
  readonly vanished: RejoinResult['kind'];
}

/**
 * Composes the third-party plugin in a real container with core's child server (in memory, a
 * fake daemon in place of `runtimed`, core's stand-ins for the local backends), connects an
 * `archive:` target through `connect_notebook`, writes a cell, loses the session as a daemon
 * restart would, and lets core's RejoinCoordinator bring it back through the plugin's backend (its `reopen`);
 * then tries one that was never checked out (evicted).
 */
export async function runArchiveRejoinExample(): Promise<ExampleReport> {
  const root = mkdtempSync(join(tmpdir(), 'archive-example-'));
  const archiveDir = join(root, 'archive');
  const workDir = join(root, 'work');
  mkdirSync(archiveDir);
  mkdirSync(workDir);
  writeFileSync(join(archiveDir, 'report.ipynb'), '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}');
  const harness = await startChildServerTestHarness({
    plugins: [createArchiveRejoinPlugin({ archiveDir, workDir })],
  });
  try {
    const { container, slot } = harness;
    const resolver = container.get(NotebookTargetResolver);

    const connected = await harness.call('connect_notebook', { url: 'archive:report.ipynb' });
    const opened = slot.active?.handle.notebookPath;
    const created = await harness.call('create_cell', { source: 'print("from the archive")' });

    const target = resolver.resolve('archive:report.ipynb', { cwd: harness.cwd });
    slot.removeWhere(() => true, 'the example drops the session, as a daemon restart would');
    const rejoined = await container.get(RejoinCoordinator).rejoin(target, { peerLabel: 'example' });
    const vanished = await container
      .get(RejoinCoordinator)
      .rejoin(resolver.resolve('archive:draft.ipynb', { cwd: harness.cwd }), { peerLabel: 'example' });
    return {
      kinds: resolver.supportedKinds(),
      connectedFile: connected.isError || !opened || !existsSync(opened) ? undefined : opened.slice(workDir.length + 1),
      reportedTarget: readSessionReport(connected)?.target,
      cellCreated: created.isError !== true,
      rejoined: rejoined.kind,
      rejoinedFile:
        rejoined.kind === 'published' ? rejoined.session.handle.notebookPath?.slice(workDir.length + 1) : undefined,
      vanished: vanished.kind,
    };
  } finally {
    await harness.close();
    rmSync(root, { recursive: true, force: true });
  }
}
