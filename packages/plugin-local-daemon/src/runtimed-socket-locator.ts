import { resolveRuntimedSocketPath } from '@nteract-mcp/runtimed-protocol';
import { inject, injectable } from 'inversify';
import { LocalDaemonOptions } from './local-daemon-options.js';

/** Answers where the daemon socket is: the configured path, else the daemon's discovery rules. */
@injectable()
export class RuntimedSocketLocator {
  public constructor(@inject(LocalDaemonOptions) private readonly options: LocalDaemonOptions) {}

  public socketPath(): string {
    return this.options.socketPath ?? resolveRuntimedSocketPath(this.options.env ?? process.env);
  }
}
