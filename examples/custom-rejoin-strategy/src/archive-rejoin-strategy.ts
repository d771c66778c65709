import { basename, join } from 'node:path';
import {
  CoreError,
  DaemonPort,
  type NotebookTarget,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
  SourceFileProbe,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { ArchiveOptions } from './archive-options.js';

/**
 * A third party's idea of rejoin: when a saved notebook's file has gone, look for it in an archive
 * directory (where a cleanup job moves old notebooks) before giving up. It only connects and
 * returns an outcome; core decides whether to publish the session.
 */
@injectable()
export class ArchiveRejoinStrategy implements RejoinStrategy {
  public readonly id = 'acme.archive-rejoin';
  public readonly specificationVersion = 'v1';

  public constructor(
    @inject(DaemonPort) private readonly daemon: DaemonPort,
    @inject(SourceFileProbe) private readonly files: SourceFileProbe,
    @inject(ArchiveOptions) private readonly options: ArchiveOptions,
  ) {}

  public supports(target: NotebookTarget): boolean {
    return target.kind === 'local-path';
  }

  public async rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome> {
    if (target.kind !== 'local-path') return { kind: 'evicted', reason: `${this.id} only handles local paths` };
    let source = await this.files.probe(target.path);
    if (source.kind === 'missing')
      source = await this.files.probe(join(this.options.archiveDir, basename(target.path)));
    if (source.kind === 'missing') return { kind: 'evicted', reason: `${target.path} is gone and not in the archive` };
    if (source.kind === 'unknown') return { kind: 'retry-later', reason: source.reason };
    try {
      const handle = await this.daemon.openNotebook(source.canonicalPath, { peerLabel: context.peerLabel });
      await handle.waitUntilReady(context.signal);
      return { kind: 'connected', handle };
    } catch (error) {
      if (CoreError.is(error, 'daemonUnavailable')) return { kind: 'retry-later', reason: error.message };
      throw error;
    }
  }
}
