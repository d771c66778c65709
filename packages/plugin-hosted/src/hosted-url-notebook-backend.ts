import {
  type BackendConnectContext,
  CoreError,
  type CreatedNotebook,
  firstPartyIdentities,
  type HostedUrlTarget,
  type NotebookBackend,
  type NotebookHandle,
  type NotebookTarget,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { HostedOptions } from './hosted-options.js';
import { parseHostedUrlTarget } from './parse-hosted-url-target.js';

const identity = firstPartyIdentities['hosted-url'];

/**
 * Notebooks on a Jupyter Server by URL (`url`): parsed and canonicalised (the `lab/tree` route,
 * no credentials in the identity; the token from `?token=` or the plugin's default stays in a
 * `SecretToken`). This version cannot reach a Jupyter Server yet: `connect` and `create` answer
 * that clearly, as a tool error, and touch nothing.
 */
@injectable()
export class HostedUrlNotebookBackend implements NotebookBackend {
  public readonly id = 'hosted.url';
  public readonly specificationVersion = 'v1';
  public readonly kind = 'hosted-url';
  public readonly argument = 'url';

  public constructor(@inject(HostedOptions) private readonly options: HostedOptions) {}

  public recognizes(raw: string): boolean {
    return /^https?:\/\//i.test(raw.trim());
  }

  public parse(raw: string): HostedUrlTarget {
    return parseHostedUrlTarget(raw, { defaultHostedToken: this.options.defaultToken?.reveal() });
  }

  public describe(target: NotebookTarget): string {
    return identity.describe(target);
  }

  public async connect(target: NotebookTarget, _context: BackendConnectContext): Promise<NotebookHandle> {
    throw new CoreError(
      'unsupportedOperation',
      `Hosted notebooks (${identity.describe(target)}) are not supported by this version yet: connect a local file with 'path' or an open notebook with 'notebook_id'.`,
    );
  }

  public async create(): Promise<CreatedNotebook> {
    throw new CoreError(
      'unsupportedOperation',
      'Creating notebooks on a Jupyter Server is not supported by this version yet: this server has no backend that creates local notebooks.',
    );
  }
}
