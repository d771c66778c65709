import { inject, injectable, named } from 'inversify';
import { TargetKind } from '../contributions/target-kind.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { CoreError } from '../errors/core-error.js';
import type { NotebookTarget } from './notebook-target.js';
import { detectNotebookTargetKind, type TargetParseContext } from './parse-notebook-target.js';

const pluginHint: Readonly<Record<NotebookTarget['kind'], string>> = {
  'local-path': '@nteract-mcp/plugin-local-daemon',
  'notebook-id': '@nteract-mcp/plugin-local-daemon',
  'hosted-url': '@nteract-mcp/plugin-hosted',
};

/** Parses notebook targets with the {@link TargetKind}s the loaded plugins contribute. */
@injectable()
export class NotebookTargetResolver {
  public constructor(
    @inject(ContributionProvider) @named(TargetKind) private readonly kinds: ContributionProvider<TargetKind>,
  ) {}

  /** A single string of any kind (path, UUID or URL), detected by its form. */
  public resolve(raw: string, context: TargetParseContext): NotebookTarget {
    return this.resolveAs(detectNotebookTargetKind(raw), raw, context);
  }

  /** A string known to be of one kind (the `path`, `notebook_id` or `url` parameter). */
  public resolveAs(kind: NotebookTarget['kind'], raw: string, context: TargetParseContext): NotebookTarget {
    const handler = this.kinds.getContributions().find((candidate) => candidate.kind === kind);
    if (!handler) {
      throw new CoreError(
        'unsupportedTarget',
        `This server cannot open ${kind} targets: no loaded plugin handles them (add ${pluginHint[kind]}).`,
      );
    }
    return handler.parse(raw, context);
  }

  /** The target kinds this container can open, in contribution order. */
  public supportedKinds(): readonly NotebookTarget['kind'][] {
    return this.kinds.getContributions().map((candidate) => candidate.kind);
  }
}
