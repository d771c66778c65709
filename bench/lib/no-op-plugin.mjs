// A third-party plugin module that contributes nothing: naming it makes `runt-mcp` run from the
// packages (a plugin must share core's classes), which child-start.mjs compares with the bundle.
import { ContainerModule } from 'inversify';

export function createPlugin() {
  return { id: 'bench.no-op', module: new ContainerModule(() => {}) };
}
