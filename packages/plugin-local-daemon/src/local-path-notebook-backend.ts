import {
  type BackendConnectContext,
  CoreError,
  DaemonPort,
  firstPartyIdentities,
  type LocalPathTarget,
  type NotebookBackend,
  type NotebookHandle,
  type NotebookTarget,
  type TargetSessionView,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { type LocalPathParseContext, parseLocalPathTarget } from './parse-local-path-target.js';
import { notebookUuidPattern } from './parse-notebook-id-target.js';

const schemePattern = /^([a-z][a-z0-9+.-]+):/i;
const identity = firstPartyIdentities['local-path'];

/**
 * Notebook files on this machine (`path`), opened in the local daemon: `~` expanded, resolved
 * against the cwd, canonical when present, and a `.ipynb` file. In a single string (the handoff)
 * it is anything that is neither a UUID nor carries a URI scheme other than `file:`.
 */
@injectable()
export class LocalPathNotebookBackend implements NotebookBackend {
  public readonly id = 'local-daemon.path';
  public readonly specificationVersion = 'v1';
  public readonly kind = 'local-path';
  public readonly argument = 'path';

  public constructor(@inject(DaemonPort) private readonly daemon: DaemonPort) {}

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
}
