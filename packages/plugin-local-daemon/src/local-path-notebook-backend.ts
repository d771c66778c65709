import {
  type BackendConnectContext,
  CoreError,
  DaemonPort,
  firstPartyIdentities,
  type LocalPathTarget,
  type NotebookBackend,
  type NotebookHandle,
  type NotebookTarget,
  readDaemonStatus,
  SourceFileProbe,
  type TargetSessionView,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { daemonStatusSection } from './daemon-status-section.js';
import { describeLivePage } from './describe-live-page.js';
import { type LocalPathParseContext, parseLocalPathTarget } from './parse-local-path-target.js';
import { notebookUuidPattern } from './parse-notebook-id-target.js';

const schemePattern = /^([a-z][a-z0-9+.-]+):/i;
const identity = firstPartyIdentities['local-path'];

/**
 * Notebook files on this machine (`path`), opened in the local daemon: `~` expanded, resolved
 * against the cwd, canonical when present, and a `.ipynb` file. In a single string (the handoff)
 * it is anything that is neither a UUID nor carries a URI scheme other than `file:`.
 *
 * The way back after a loss ({@link LocalPathNotebookBackend.reopen}), the preferred one after a
 * daemon restart: the saved file must still exist (missing ⇒ `notebookUnavailable`, the session
 * is dropped; a file that cannot be inspected ⇒ tried again later), unless the target was made for
 * a file that did not exist yet (`existed: false`, e.g. `--notebook new.ipynb`), which is opened
 * as connect_notebook opens it, a new empty notebook there. The session is back once the room is
 * open (its document is whole in the daemon's greeting): its kernel, which a fresh daemon starts
 * only now, comes up in the background, and the tools that need it wait for it.
 */
@injectable()
export class LocalPathNotebookBackend implements NotebookBackend {
  public readonly id = 'local-daemon.path';
  public readonly specificationVersion = 'v1';
  public readonly kind = 'local-path';
  public readonly argument = 'path';
  public readonly rejoinWhen = 'document';
  public readonly statusSection = daemonStatusSection;

  public constructor(
    @inject(DaemonPort) private readonly daemon: DaemonPort,
    @inject(SourceFileProbe) private readonly files: SourceFileProbe,
  ) {}

  public recognizes(raw: string): boolean {
    if (notebookUuidPattern.test(raw.trim())) return false;
    const scheme = schemePattern.exec(raw.trim())?.[1]?.toLowerCase();
    return scheme === undefined || scheme === 'file';
  }

  public parse(raw: string, context: LocalPathParseContext): LocalPathTarget {
    const target = parseLocalPathTarget(raw, context);
    if (!target.path.toLowerCase().endsWith('.ipynb')) {
      throw new CoreError('invalidTarget', `'${target.path}' is not a notebook file: give the path of a .ipynb file.`);
    }
    return target;
  }

  public describe(target: NotebookTarget): string {
    return identity.describe(target);
  }

  public recoveryTarget(session: TargetSessionView): NotebookTarget {
    return identity.recoveryTarget?.(session) ?? session.target;
  }

  public isSessionFor(session: TargetSessionView, target: NotebookTarget): boolean {
    return identity.isSessionFor?.(session, target) ?? false;
  }

  public connect(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    return this.daemon.openNotebook((target as LocalPathTarget).path, { peerLabel: context.peerLabel });
  }

  public async reopen(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    const { path, existed } = target as LocalPathTarget;
    const source = await this.files.probe(path);
    // A path given before its file existed: opened as connect_notebook opens it.
    if (source.kind === 'missing' && !existed) return this.connect(target, context);
    if (source.kind === 'missing')
      throw new CoreError('notebookUnavailable', `The saved notebook ${path} no longer exists`);
    if (source.kind === 'unknown') throw new CoreError('sourceDegraded', `Cannot inspect ${path}: ${source.reason}`);
    return this.daemon.openNotebook(source.canonicalPath, { peerLabel: context.peerLabel });
  }

  public serviceStatus(): Promise<Record<string, unknown>> {
    return readDaemonStatus(this.daemon);
  }

  public liveView(): Promise<string | undefined> {
    return describeLivePage(this.daemon);
  }
}
