import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  type BackendConnectContext,
  CoreError,
  type NotebookBackend,
  type NotebookHandle,
  type NotebookTarget,
  NotebookTargetResolver,
  type TargetSessionView,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { ArchiveOptions } from './archive-options.js';
import { type ArchiveTarget, archiveKind, archiveScheme, isArchiveTarget } from './archive-target.js';

const namePattern = /^[A-Za-z0-9][A-Za-z0-9_. -]*\.ipynb$/;

/**
 * The whole `acme.archive` target kind: `archive:<name>.ipynb` targets (the `url` argument of
 * `connect_notebook`). Connecting checks the notebook out: the archived file is copied to a working
 * copy (unless one exists already, which holds the agent's edits) and the working copy is opened as
 * a local notebook file, through the backend of the `local-path` kind (whichever plugin contributes
 * it: the local daemon's in the distribution).
 *
 * It is also how the kind comes back after a loss (a child restart, a daemon restart): core
 * rejoins by calling {@link ArchiveNotebookBackend.reopen}, which opens the working copy only;
 * restoring the archived file would silently drop the edits, so a lost working copy is a
 * definitive `notebookUnavailable` (the session is dropped and the agent told), and anything else
 * (the daemon not up yet) is tried again.
 */
@injectable()
export class ArchiveNotebookBackend implements NotebookBackend {
  public readonly id = 'acme.archive';
  public readonly specificationVersion = 'v1';
  public readonly kind = archiveKind;
  public readonly argument = 'url';

  public constructor(
    @inject(NotebookTargetResolver) private readonly backends: NotebookTargetResolver,
    @inject(ArchiveOptions) private readonly options: ArchiveOptions,
  ) {}

  public recognizes(raw: string): boolean {
    return raw.trim().toLowerCase().startsWith(archiveScheme);
  }

  public parse(raw: string): ArchiveTarget {
    const text = raw.trim();
    const name = text.toLowerCase().startsWith(archiveScheme) ? text.slice(archiveScheme.length) : '';
    if (!namePattern.test(name)) {
      throw new CoreError(
        'invalidTarget',
        `'${text}' does not name an archived notebook: write archive:<file>.ipynb, e.g. archive:report.ipynb.`,
      );
    }
    return { kind: archiveKind, name };
  }

  public describe(target: NotebookTarget): string {
    return `${archiveScheme}${(target as ArchiveTarget).name}`;
  }

  /** The session is this archived notebook when it was checked out by it, or its handle has the working copy open. */
  public isSessionFor(session: TargetSessionView, target: NotebookTarget): boolean {
    const { name } = target as ArchiveTarget;
    return (
      (isArchiveTarget(session.target) && session.target.name === name) ||
      session.notebookPath === this.workingCopy(name)
    );
  }

  public async connect(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    const { name } = target as ArchiveTarget;
    const working = this.workingCopy(name);
    if (!existsSync(working)) {
      const archived = join(this.options.archiveDir, name);
      if (!existsSync(archived)) {
        throw new CoreError(
          'notebookUnavailable',
          `${archiveScheme}${name} is not in the archive ${this.options.archiveDir}`,
        );
      }
      copyFileSync(archived, working);
    }
    const file = this.backends.resolveAs('local-path', working, { cwd: this.options.workDir });
    return this.backends.backendFor(file).connect(file, context);
  }

  public async reopen(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    const { name } = target as ArchiveTarget;
    const working = this.workingCopy(name);
    if (!existsSync(working)) {
      throw new CoreError(
        'notebookUnavailable',
        `The working copy ${working} of ${archiveScheme}${name} is gone; connect again to check it out afresh`,
      );
    }
    return this.backends.reopen(this.backends.resolveAs('local-path', working, { cwd: this.options.workDir }), context);
  }

  /** Where the working copy of `name` lives. */
  public workingCopy(name: string): string {
    return join(this.options.workDir, name);
  }
}
