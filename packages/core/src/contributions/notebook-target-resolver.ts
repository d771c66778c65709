import { inject, injectable, named } from 'inversify';
import { ContributionProvider } from '../di/contribution-provider.js';
import { CoreError } from '../errors/core-error.js';
import { bindTargetIdentity, type NotebookTarget, type TargetArgument } from '../notebook-target/notebook-target.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';
import { type BackendConnectContext, NotebookBackend, type TargetParseContext } from './notebook-backend.js';

const schemePattern = /^([a-z][a-z0-9+.-]+):/i;

/**
 * The notebook backends the loaded plugins contribute, by kind and by `connect_notebook`
 * argument. Every target it returns is tied to the backend that parsed it, so
 * `describeNotebookTarget`, `isSameNotebookTarget` and `sessionRecoveryTarget` follow that
 * backend's rules. It knows no kind by name.
 */
@injectable()
export class NotebookTargetResolver {
  public constructor(
    @inject(ContributionProvider)
    @named(NotebookBackend)
    private readonly backends: ContributionProvider<NotebookBackend>,
  ) {}

  /**
   * A single string of any kind (the handoff variable, a resource URI), given to the first backend
   * that recognises its form. The refusal names the URI scheme at most, never the string (it may
   * hold a credential).
   */
  public resolve(raw: string, context: TargetParseContext): NotebookTarget {
    const text = raw.trim();
    if (text.length === 0) {
      throw new CoreError('invalidTarget', `Notebook target is empty: ${this.opensText()}`);
    }
    const backend = this.all().find((candidate) => candidate.recognizes(text));
    if (!backend) {
      const scheme = schemePattern.exec(text)?.[1]?.toLowerCase();
      throw new CoreError(
        'unsupportedTarget',
        scheme !== undefined
          ? `Unsupported notebook target scheme '${scheme}:': no loaded plugin handles it. ${this.opensText()}`
          : `No loaded plugin recognises this notebook target. ${this.opensText()}`,
      );
    }
    return this.parseWith(backend, text, context);
  }

  /**
   * The value of one `connect_notebook` argument: parsed by the backend that takes that argument
   * (the first that recognises the value when several do). Throws `unsupportedTarget` when none does.
   */
  public resolveArgument(argument: TargetArgument, raw: string, context: TargetParseContext): NotebookTarget {
    const candidates = this.takers(argument);
    if (candidates.length === 0) {
      throw new CoreError(
        'unsupportedTarget',
        `This server cannot open notebooks by '${argument}': no loaded plugin handles them. ${this.opensText()}`,
      );
    }
    const text = raw.trim();
    const backend = candidates.find((candidate) => candidate.recognizes(text)) ?? (candidates[0] as NotebookBackend);
    return this.parseWith(backend, raw, context);
  }

  /** A string known to be of one kind. Throws `unsupportedTarget` when no backend handles the kind. */
  public resolveAs(kind: NotebookTarget['kind'], raw: string, context: TargetParseContext): NotebookTarget {
    return this.parseWith(this.backendForKind(kind), raw, context);
  }

  /** The backends that take `argument`, in contribution order. */
  public takers(argument: TargetArgument): readonly NotebookBackend[] {
    return this.all().filter((candidate) => candidate.argument === argument);
  }

  /** The backend of `target`'s kind. Throws `unsupportedTarget` when none is loaded. */
  public backendFor(target: NotebookTarget): NotebookBackend {
    return this.backendForKind(target.kind);
  }

  /** Reaches `target` again to rejoin it: its backend's `reopen`, else its `connect`. */
  public reopen(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    const backend = this.backendFor(target);
    return backend.reopen ? backend.reopen(target, context) : backend.connect(target, context);
  }

  /** The first backend that creates notebooks (of those taking `argument`, when given), if any. */
  public creator(argument?: TargetArgument): NotebookBackend | undefined {
    return this.all().find(
      (candidate) => candidate.create !== undefined && (argument === undefined || candidate.argument === argument),
    );
  }

  /** The first backend that lists notebooks, if any. */
  public lister(): NotebookBackend | undefined {
    return this.all().find((candidate) => candidate.list !== undefined);
  }

  /** The first backend that lists the kernels of new notebooks, if any. */
  public kernelLister(): NotebookBackend | undefined {
    return this.all().find((candidate) => candidate.listKernels !== undefined);
  }

  /** Every backend that lists notebooks, in contribution order. */
  public listers(): readonly NotebookBackend[] {
    return this.all().filter((candidate) => candidate.list !== undefined);
  }

  /**
   * The `session_status` sections of the services behind the backends (`{ daemon: {...} }`), in
   * contribution order, one answer per section name.
   */
  public async serviceStatus(): Promise<Readonly<Record<string, Readonly<Record<string, unknown>>>>> {
    const sections = new Map<string, NotebookBackend>();
    for (const backend of this.all()) {
      if (backend.statusSection && backend.serviceStatus && !sections.has(backend.statusSection)) {
        sections.set(backend.statusSection, backend);
      }
    }
    const entries = await Promise.all(
      [...sections].map(async ([section, backend]) => [section, (await backend.serviceStatus?.()) ?? {}] as const),
    );
    return Object.fromEntries(entries);
  }

  /** The target kinds this container can open, in contribution order. */
  public supportedKinds(): readonly NotebookTarget['kind'][] {
    return this.all().map((candidate) => candidate.kind);
  }

  private backendForKind(kind: NotebookTarget['kind']): NotebookBackend {
    const backend = this.all().find((candidate) => candidate.kind === kind);
    if (!backend) {
      throw new CoreError(
        'unsupportedTarget',
        `This server cannot open ${kind} targets: no loaded plugin handles them. ${this.opensText()}`,
      );
    }
    return backend;
  }

  private parseWith(backend: NotebookBackend, raw: string, context: TargetParseContext): NotebookTarget {
    return bindTargetIdentity(backend.parse(raw, context), backend);
  }

  private all(): readonly NotebookBackend[] {
    return this.backends.getContributions();
  }

  private opensText(): string {
    const kinds = this.supportedKinds();
    return kinds.length === 0
      ? 'This server has no notebook backend loaded.'
      : `This server opens ${kinds.map((kind) => `'${kind}'`).join(', ')} targets.`;
  }
}
