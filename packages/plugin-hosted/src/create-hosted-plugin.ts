import { definePlugin, type McpPlugin, NotebookBackend, RecoveryContribution, SecretToken } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { HostedOptions } from './hosted-options.js';
import { HostedRejoinRetry } from './hosted-rejoin-retry.js';
import { HostedUrlNotebookBackend } from './hosted-url-notebook-backend.js';

export interface CreateHostedPluginOptions {
  /** Default Jupyter token; falls back to `env.JUPYTER_TOKEN`. Never logged. */
  readonly token?: string;
  /** Environment to read `JUPYTER_TOKEN` from; defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Notebooks on a Jupyter Server, addressed by URL: the `hosted-url` notebook backend (parsing only in this version) and its bounded rejoin retry. */
export function createHostedPlugin(options: CreateHostedPluginOptions = {}): McpPlugin {
  const token = options.token ?? (options.env ?? process.env).JUPYTER_TOKEN;
  const hosted: HostedOptions = Object.freeze({ defaultToken: token ? new SecretToken(token) : undefined });
  return definePlugin({
    id: 'hosted',
    module: new ContainerModule(({ bind }) => {
      bind(HostedOptions).toConstantValue(hosted);
      bind(NotebookBackend).to(HostedUrlNotebookBackend).inSingletonScope();
      bind(RecoveryContribution).to(HostedRejoinRetry).inSingletonScope();
    }),
  });
}
