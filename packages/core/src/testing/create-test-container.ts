import type { Container, ServiceIdentifier } from 'inversify';
import { buildMcpContainer } from '../composition/create-mcp-container.js';
import type { BindingOverride } from '../composition/create-plugin-container.js';
import type { McpPlugin } from '../di/mcp-plugin.js';

/**
 * Builds a real container (core + the given plugins) with chosen bindings replaced, usually the
 * ports by the fakes of this module:
 * `createTestContainer({ plugins }).override(DaemonPort, new FakeDaemonPort()).build()`.
 * Everything not overridden is the production binding.
 */
export class TestContainerBuilder {
  readonly #overrides: BindingOverride[] = [];

  public constructor(private readonly plugins: readonly McpPlugin[]) {}

  /** Replaces whatever is bound to `token` (or adds a binding) with `value`. Last override wins. */
  public override<T>(token: ServiceIdentifier<T>, value: T): this {
    const existing = this.#overrides.findIndex((candidate) => candidate.token === token);
    if (existing >= 0) this.#overrides.splice(existing, 1);
    this.#overrides.push({ token, value });
    return this;
  }

  /** Builds and validates the container, as `createMcpContainer` would. */
  public build(): Container {
    return buildMcpContainer(this.plugins, this.#overrides);
  }
}

export function createTestContainer(options: { readonly plugins?: readonly McpPlugin[] } = {}): TestContainerBuilder {
  return new TestContainerBuilder(options.plugins ?? []);
}
