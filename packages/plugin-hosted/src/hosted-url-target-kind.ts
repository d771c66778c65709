import { type NotebookTarget, parseHostedUrlTarget, type TargetKind } from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { HostedOptions } from './hosted-options.js';

/** Jupyter Server notebook URLs; the token stays in a `SecretToken`, out of the identity. */
@injectable()
export class HostedUrlTargetKind implements TargetKind {
  public readonly id = 'hosted.url';
  public readonly specificationVersion = 'v1';
  public readonly kind = 'hosted-url';

  public constructor(@inject(HostedOptions) private readonly options: HostedOptions) {}

  public parse(raw: string): NotebookTarget {
    return parseHostedUrlTarget(raw, { defaultHostedToken: this.options.defaultToken?.reveal() });
  }
}
