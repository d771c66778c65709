import { basename, join } from 'node:path';
import {
  DaemonPort,
  type NotebookTarget,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
  SourceFileProbe,
} from '@nteract-mcp/core';
import { SavedPathRejoinStrategy } from '@nteract-mcp/plugin-local-daemon';
import { inject, injectable } from 'inversify';
import { ArchiveOptions } from './archive-options.js';

/**
 * A third party's idea of rejoin: when a saved notebook's file has gone, look for it in an archive
 * directory (where a cleanup job moves old notebooks) before giving up. It reuses the local-daemon
 * plugin's saved-path strategy for the actual reconnect, and only returns an outcome; core decides
 * whether to publish the session.
 */
@injectable()
export class ArchiveRejoinStrategy implements RejoinStrategy {
  public readonly id = 'acme.archive-rejoin';
  public readonly specificationVersion = 'v1';
  readonly #savedPath: SavedPathRejoinStrategy;

  public constructor(
    @inject(DaemonPort) daemon: DaemonPort,
    @inject(SourceFileProbe) private readonly files: SourceFileProbe,
    @inject(ArchiveOptions) private readonly options: ArchiveOptions,
  ) {
    this.#savedPath = new SavedPathRejoinStrategy(daemon, files);
  }

  public supports(target: NotebookTarget): boolean {
    return target.kind === 'local-path';
  }

  public async rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome> {
    if (target.kind !== 'local-path') return { kind: 'evicted', reason: `${this.id} only handles local paths` };
    const inPlace = await this.files.probe(target.path);
    const path = inPlace.kind === 'missing' ? join(this.options.archiveDir, basename(target.path)) : target.path;
    return this.#savedPath.rejoin({ kind: 'local-path', path, existed: true }, context);
  }
}
