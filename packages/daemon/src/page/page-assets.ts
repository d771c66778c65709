import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Logger } from '@nteract-mcp/foundation';

/** The files of the live page's client that the page server serves under `/assets/`, by their content type. */
const assetTypes: Readonly<Record<string, string>> = {
  'live-page.js': 'text/javascript',
  'live-page.css': 'text/css',
  'live-page.js.LEGAL.txt': 'text/plain',
};

/** One asset: its bytes and content type, or why it cannot be served. */
export type PageAsset =
  | { readonly kind: 'found'; readonly type: string; readonly body: Buffer }
  | { readonly kind: 'missing'; readonly message: string };

/**
 * Where the live page's client is built: `dist/page/` of the `@nteract-mcp/daemon` package, found
 * through the package's own name. That works from its sources (the specs under vitest), from its
 * `dist/` and bundled bin, and from the `nteract-mcp` distribution, which depends on the package.
 */
export function defaultPageAssetsDir(): string {
  const manifest = createRequire(import.meta.url).resolve('@nteract-mcp/daemon/package.json');
  return join(dirname(manifest), 'dist', 'page');
}

/**
 * The live page's client files (built by the package's build into `dist/page/`), read once and
 * kept. A missing file is answered with what to do (`npm run build`), and logged once.
 */
export class PageAssets {
  readonly #read = new Map<string, Buffer>();
  #warned = false;

  public constructor(
    private readonly logger: Logger,
    private readonly dir: () => string = defaultPageAssetsDir,
  ) {}

  /** `undefined` for a name that is not one of the page's assets. */
  public read(name: string): PageAsset | undefined {
    const type = assetTypes[name];
    if (type === undefined) return undefined;
    const kept = this.#read.get(name);
    if (kept) return { kind: 'found', type, body: kept };
    let path = name;
    try {
      path = join(this.dir(), name);
      const body = readFileSync(path);
      this.#read.set(name, body);
      return { kind: 'found', type, body };
    } catch (error) {
      const message = `The live page's client is not built: ${path} is missing (run npm run build).`;
      if (!this.#warned) {
        this.#warned = true;
        this.logger.error(message, { reason: (error as Error).message });
      }
      return { kind: 'missing', message };
    }
  }
}
