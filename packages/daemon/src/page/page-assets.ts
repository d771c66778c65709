import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Logger } from '@nteract-mcp/foundation';

/** The files of the live page's client that the page server serves under `/assets/`, by their content type. */
const assetTypes: Readonly<Record<string, string>> = {
  'live-page.js': 'text/javascript',
  'live-page.css': 'text/css',
  'live-page.js.LEGAL.txt': 'text/plain',
};

/** Besides those, the chunks `live-page.js` imports when it needs them (`<name>-<hash>.js`). */
const chunkName = /^[A-Za-z0-9_-]+\.js$/;

/** The build's list of the chunks `live-page.js` imports as it starts (not served). */
const startImportsFile = 'live-page.imports.json';

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

/** A build of the client as read: its files by name, and the chunks `live-page.js` imports as it starts. */
interface PageBuild {
  readonly files: ReadonlyMap<string, Buffer>;
  readonly startImports: readonly string[];
}

/**
 * The live page's client files (built by the package's build into `dist/page/`), read once
 * together and kept: the script and the chunks it imports later are always of one build. A
 * missing client is answered with what to do (`npm run build`), and logged once.
 */
export class PageAssets {
  #build: PageBuild | undefined;
  #warned = false;

  public constructor(
    private readonly logger: Logger,
    private readonly dir: () => string = defaultPageAssetsDir,
  ) {}

  /** `undefined` for a name that is not one of the page's assets. */
  public read(name: string): PageAsset | undefined {
    const type = assetTypes[name] ?? (chunkName.test(name) ? 'text/javascript' : undefined);
    if (type === undefined) return undefined;
    let path = name;
    try {
      const dir = this.dir();
      path = join(dir, name);
      this.#build ??= readBuild(dir);
      const body = this.#build.files.get(name);
      if (body) return { kind: 'found', type, body };
      if (assetTypes[name] === undefined) return undefined;
      throw new Error(`${name} is not in the build`);
    } catch (error) {
      const message = `The live page's client is not built: ${path} is missing (run npm run build).`;
      if (!this.#warned) {
        this.#warned = true;
        this.logger.error(message, { reason: (error as Error).message });
      }
      return { kind: 'missing', message };
    }
  }

  /**
   * The chunks `live-page.js` imports as it starts (the page's HTML preloads them, so that they
   * are not asked for only once the script is read); none when the client is not built.
   */
  public startImports(): readonly string[] {
    try {
      this.#build ??= readBuild(this.dir());
      return this.#build.startImports;
    } catch {
      return [];
    }
  }
}

/** A build in `dir`; throws when it holds no `live-page.js` (not built, or being built). */
function readBuild(dir: string): PageBuild {
  const listed = readdirSync(dir);
  const names = listed.filter((name) => assetTypes[name] !== undefined || chunkName.test(name));
  if (!names.includes('live-page.js')) throw new Error(`no live-page.js in ${dir}`);
  const files = new Map(names.map((name) => [name, readFileSync(join(dir, name))]));
  const imports: unknown = listed.includes(startImportsFile)
    ? JSON.parse(readFileSync(join(dir, startImportsFile), 'utf8'))
    : [];
  const startImports = Array.isArray(imports)
    ? imports.filter((name): name is string => typeof name === 'string' && chunkName.test(name) && files.has(name))
    : [];
  return { files, startImports };
}
