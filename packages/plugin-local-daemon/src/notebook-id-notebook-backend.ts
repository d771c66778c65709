import {
  type BackendConnectContext,
  type CreatedNotebook,
  type CreateNotebookRequest,
  DaemonPort,
  firstPartyIdentities,
  type KernelInfo,
  type ListedNotebook,
  type NotebookBackend,
  type NotebookHandle,
  type NotebookIdTarget,
  type NotebookTarget,
  readDaemonStatus,
  type TargetSessionView,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { daemonStatusSection } from './daemon-status-section.js';
import { describeLivePage } from './describe-live-page.js';
import { notebookUuidPattern, parseNotebookIdTarget } from './parse-notebook-id-target.js';

const identity = firstPartyIdentities['notebook-id'];

/**
 * Notebook rooms of the local daemon by UUID (`notebook_id`): attach to an open one, create an
 * untitled one (its target is its id), and list the rooms.
 */
@injectable()
export class NotebookIdNotebookBackend implements NotebookBackend {
  public readonly id = 'local-daemon.notebook-id';
  public readonly specificationVersion = 'v1';
  public readonly kind = 'notebook-id';
  public readonly argument = 'notebook_id';
  /** Back once the room is open; its kernel (which a fresh daemon starts only now) comes up in the background. */
  public readonly rejoinWhen = 'document';
  public readonly statusSection = daemonStatusSection;

  public constructor(@inject(DaemonPort) private readonly daemon: DaemonPort) {}

  public recognizes(raw: string): boolean {
    return notebookUuidPattern.test(raw.trim());
  }

  public parse(raw: string): NotebookIdTarget {
    return parseNotebookIdTarget(raw);
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
    return this.daemon.attachNotebook((target as NotebookIdTarget).notebookId, { peerLabel: context.peerLabel });
  }

  public async create(request: CreateNotebookRequest, context: BackendConnectContext): Promise<CreatedNotebook> {
    const handle = await this.daemon.createNotebook({ ...request, peerLabel: context.peerLabel });
    return { handle, target: { kind: 'notebook-id', notebookId: handle.notebookId } };
  }

  public list(): Promise<readonly ListedNotebook[]> {
    return this.daemon.listRooms();
  }

  public listKernels(): Promise<readonly KernelInfo[]> {
    return this.daemon.listKernels();
  }

  public serviceStatus(): Promise<Record<string, unknown>> {
    return readDaemonStatus(this.daemon);
  }

  public liveView(): Promise<string | undefined> {
    return describeLivePage(this.daemon);
  }
}
