import type {
  BackendConnectContext,
  CreatedNotebook,
  CreateNotebookRequest,
  NotebookBackend,
  TargetParseContext,
} from '../contributions/notebook-backend.js';
import { CoreError } from '../errors/core-error.js';
import {
  firstPartyIdentities,
  type NotebookTarget,
  type NotebookTargetIdentity,
  type TargetArgument,
} from '../notebook-target/notebook-target.js';
import type { KernelInfo } from '../ports/kernel-info.js';
import type { ListedNotebook } from '../ports/listed-notebook.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';

/** What a {@link FakeNotebookBackend} does; omitted optional operations are absent from the backend. */
export interface FakeNotebookBackendOptions {
  readonly id: string;
  readonly kind: NotebookTarget['kind'];
  readonly argument: TargetArgument;
  /** Identity rules (`describe` and the optional ones), e.g. one of core's `firstPartyIdentities`. */
  readonly identity: Omit<NotebookTargetIdentity, 'kind' | 'argument'>;
  readonly recognizes: (raw: string) => boolean;
  readonly parse: (raw: string, context: TargetParseContext) => NotebookTarget;
  readonly connect: (target: NotebookTarget, context: BackendConnectContext) => Promise<NotebookHandle>;
  readonly reopen?: (target: NotebookTarget, context: BackendConnectContext) => Promise<NotebookHandle>;
  readonly create?: (request: CreateNotebookRequest, context: BackendConnectContext) => Promise<CreatedNotebook>;
  readonly list?: () => Promise<readonly ListedNotebook[]>;
  readonly listKernels?: () => Promise<readonly KernelInfo[]>;
  /** The `session_status` section it answers in, and how it reads the service behind it. */
  readonly status?: { readonly section: string; readonly read: () => Promise<Readonly<Record<string, unknown>>> };
}

/**
 * A notebook backend made of functions, for tests of the contribution point and of the tools that
 * go through it. Every call is recorded in `calls` (`connect:<kind>`, `reopen:<kind>`, `create`, `list`, `listKernels`).
 */
export class FakeNotebookBackend implements NotebookBackend {
  public readonly specificationVersion = 'v1';
  public readonly id: string;
  public readonly kind: NotebookTarget['kind'];
  public readonly argument: TargetArgument;
  public readonly calls: string[] = [];
  public readonly reopen?: NotebookBackend['reopen'];
  public readonly create?: NotebookBackend['create'];
  public readonly list?: NotebookBackend['list'];
  public readonly listKernels?: NotebookBackend['listKernels'];
  public readonly statusSection?: string;
  public readonly serviceStatus?: NotebookBackend['serviceStatus'];
  public readonly recoveryTarget?: NotebookBackend['recoveryTarget'];
  public readonly isSessionFor?: NotebookBackend['isSessionFor'];
  public readonly isSame?: NotebookBackend['isSame'];
  readonly #options: FakeNotebookBackendOptions;

  public constructor(options: FakeNotebookBackendOptions) {
    this.#options = options;
    this.id = options.id;
    this.kind = options.kind;
    this.argument = options.argument;
    const { isSame, recoveryTarget, isSessionFor } = options.identity;
    if (isSame) this.isSame = isSame;
    if (recoveryTarget) this.recoveryTarget = recoveryTarget;
    if (isSessionFor) this.isSessionFor = isSessionFor;
    const { reopen, create, list, listKernels, status } = options;
    if (status) {
      this.statusSection = status.section;
      this.serviceStatus = status.read;
    }
    if (reopen) {
      this.reopen = (target, context) => {
        this.calls.push(`reopen:${target.kind}`);
        return reopen(target, context);
      };
    }
    if (create) {
      this.create = (request, context) => {
        this.calls.push('create');
        return create(request, context);
      };
    }
    if (list) {
      this.list = () => {
        this.calls.push('list');
        return list();
      };
    }
    if (listKernels) {
      this.listKernels = () => {
        this.calls.push('listKernels');
        return listKernels();
      };
    }
  }

  public recognizes(raw: string): boolean {
    return this.#options.recognizes(raw);
  }

  public parse(raw: string, context: TargetParseContext): NotebookTarget {
    return this.#options.parse(raw, context);
  }

  public describe(target: NotebookTarget): string {
    return this.#options.identity.describe(target);
  }

  public connect(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    this.calls.push(`connect:${target.kind}`);
    return this.#options.connect(target, context);
  }
}

/**
 * A backend of a first-party kind for tests of the way back: it parses nothing, and connecting
 * and reopening both go to `reopen` (what a test scripts: a handle, or a `CoreError`).
 */
export function fakeReopeningBackend(
  kind: 'local-path' | 'notebook-id' | 'hosted-url',
  reopen: (target: NotebookTarget) => Promise<NotebookHandle>,
): FakeNotebookBackend {
  const argument = ({ 'local-path': 'path', 'notebook-id': 'notebook_id', 'hosted-url': 'url' } as const)[kind];
  return new FakeNotebookBackend({
    id: `test.${kind}`,
    kind,
    argument,
    identity: firstPartyIdentities[kind],
    recognizes: () => false,
    parse: () => {
      throw new CoreError('invalidTarget', 'not parsed in this test');
    },
    connect: (target) => reopen(target),
    reopen: (target) => reopen(target),
  });
}
