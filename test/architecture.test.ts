import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  fileCycles,
  folderGraph,
  importTimeRegistrations,
  isTestFile,
  lineCounts,
  packageGraph,
  repoRoot,
  sourceFiles,
  topLevelStatements,
  workspacePackages,
} from '../scripts/source-structure.mjs';

/**
 * The house rules of ARCHITECTURE.md, checked on the source: which package may import which,
 * the layers inside core, and where the proxy↔child contract may be spelled out.
 */

const packages = workspacePackages();
const graph = packageGraph(packages);
const packageNamed = (name: string) => {
  const found = packages.find((pkg) => pkg.name === name);
  if (!found) throw new Error(`no workspace package ${name}`);
  return found;
};

/** Who may import whom (workspace packages only; anything not listed may import nothing of ours). */
const allowedImports: Readonly<Record<string, readonly string[]>> = {
  '@nteract-mcp/foundation': [],
  '@nteract-mcp/runtimed-protocol': ['@nteract-mcp/foundation'],
  '@nteract-mcp/output-shaping': [],
  '@nteract-mcp/core': ['@nteract-mcp/foundation', '@nteract-mcp/output-shaping'],
  '@nteract-mcp/proxy': ['@nteract-mcp/core', '@nteract-mcp/foundation'],
  '@nteract-mcp/daemon': ['@nteract-mcp/foundation', '@nteract-mcp/output-shaping', '@nteract-mcp/runtimed-protocol'],
  '@nteract-mcp/plugin-local-daemon': [
    '@nteract-mcp/core',
    '@nteract-mcp/foundation',
    '@nteract-mcp/runtimed-protocol',
  ],
  '@nteract-mcp/plugin-hosted': ['@nteract-mcp/core', '@nteract-mcp/foundation', '@nteract-mcp/output-shaping'],
  '@nteract-mcp/plugin-transport-legacy': ['@nteract-mcp/core', '@nteract-mcp/foundation'],
  '@nteract-mcp/plugin-transport-native': ['@nteract-mcp/core', '@nteract-mcp/foundation'],
  '@nteract-mcp/plugin-app-view': ['@nteract-mcp/core'],
  '@nteract-mcp/example-custom-protocol-era': ['@nteract-mcp/core'],
  '@nteract-mcp/example-custom-rejoin-rule': ['@nteract-mcp/core', '@nteract-mcp/foundation'],
  '@nteract-mcp/example-custom-target-kind': ['@nteract-mcp/core', '@nteract-mcp/foundation'],
  '@nteract-mcp/example-declared-policies-tool': ['@nteract-mcp/core'],
  // Embedding composes its own server: core, the plugins it chose, and the daemon bin it auto-starts.
  '@nteract-mcp/example-embedding': [
    '@nteract-mcp/core',
    '@nteract-mcp/foundation',
    '@nteract-mcp/plugin-local-daemon',
    '@nteract-mcp/plugin-transport-legacy',
    '@nteract-mcp/daemon',
  ],
};

/**
 * The layers inside core, bottom first. A folder may import only folders of lower layers, so the
 * folders form a stack: the DI floor and errors at the bottom, the composition roof and the test
 * kit on top.
 */
const coreLayers: readonly (readonly string[])[] = [
  ['errors'],
  ['di'],
  ['handoff', 'json-rpc'],
  ['notebook-target'],
  ['ports'],
  ['contributions'],
  ['session'],
  ['recovery'],
  ['child-server'],
  ['lifecycle'],
  ['composition'],
  ['testing'],
  ['.'],
];

/** Literals of the proxy↔child contract: spelled out in core/src/handoff only (tests may pin them). */
const contractLiterals = [
  'NTERACT_MCP_REJOIN_NOTEBOOK',
  'NTERACT_MCP_AGENT_SESSION',
  'NTERACT_MCP_PEER_LABEL',
  'NTERACT_MCP_KNOWN_TASKS',
  'nteract/idempotencyKey',
  'nteract/session',
  "'honored'",
];

/** A file's text without comments (documentation may name the contract; code must import it). */
function codeOf(path: string): string {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
}

describe('the package graph', () => {
  it('has no cycle', () => {
    const visiting = new Set<string>();
    const done = new Set<string>();
    const cycles: string[] = [];
    const visit = (name: string, path: string[]): void => {
      if (done.has(name)) return;
      if (visiting.has(name)) {
        cycles.push([...path.slice(path.indexOf(name)), name].join(' → '));
        return;
      }
      visiting.add(name);
      for (const dep of graph.get(name) ?? []) visit(dep, [...path, name]);
      visiting.delete(name);
      done.add(name);
    };
    for (const name of graph.keys()) visit(name, []);
    expect(cycles).toEqual([]);
  });

  it('keeps every package to the imports its layer allows (plugins never import each other; the daemon knows no core)', () => {
    const violations: string[] = [];
    for (const [name, deps] of graph) {
      if (name === 'nteract-mcp') continue; // the distribution composes everything
      const allowed = allowedImports[name];
      if (!allowed) {
        violations.push(`${name} has no rule in allowedImports`);
        continue;
      }
      for (const dep of deps) if (!allowed.includes(dep)) violations.push(`${name} → ${dep}`);
    }
    expect(violations).toEqual([]);
  });

  it.each(['@nteract-mcp/example-custom-rejoin-rule', '@nteract-mcp/example-custom-target-kind'])(
    'lets the example plugin %s depend on @nteract-mcp/core and no first-party plugin, in code and in its manifest',
    (name) => {
      const example = packageNamed(name);
      const declared = Object.keys({ ...example.manifest.dependencies, ...example.manifest.devDependencies });
      expect(declared.filter((dep) => dep.startsWith('@nteract-mcp/plugin-') || dep === 'nteract-mcp')).toEqual([]);
      expect([...(graph.get(example.name) ?? [])].filter((dep) => dep.includes('plugin'))).toEqual([]);
    },
  );

  it('ships each bin from one package (two would clash in one global install)', () => {
    const shipped = new Map<string, string[]>();
    for (const pkg of packages) {
      const manifest = JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8')) as { bin?: unknown };
      const bins = typeof manifest.bin === 'string' ? [pkg.name] : Object.keys((manifest.bin ?? {}) as object);
      for (const bin of bins) shipped.set(bin, [...(shipped.get(bin) ?? []), pkg.name]);
    }
    expect([...shipped].filter(([, owners]) => owners.length > 1)).toEqual([]);
    expect(shipped.get('runtimed')).toEqual(['nteract-mcp']);
  });

  it('keeps core at most 35% of the non-test source lines', () => {
    const counted = packages.filter((pkg) => pkg.dir.startsWith(join(repoRoot, 'packages')));
    const lines = (pkg: (typeof packages)[number]) => {
      const { source, testing } = lineCounts(pkg);
      return source + testing;
    };
    const total = counted.reduce((sum, pkg) => sum + lines(pkg), 0);
    const share = lines(packageNamed('@nteract-mcp/core')) / total;
    expect(share).toBeLessThanOrEqual(0.35);
  });
});

describe('inside core', () => {
  const src = join(packageNamed('@nteract-mcp/core').dir, 'src');

  it('has no import cycle between files', () => {
    expect(fileCycles(src)).toEqual([]);
  });

  it('imports only downwards: no arrow from a lower layer to a higher one', () => {
    const layerOf = (folder: string) => coreLayers.findIndex((layer) => layer.includes(folder));
    const violations: string[] = [];
    for (const [from, edges] of folderGraph(src)) {
      if (layerOf(from) === -1) violations.push(`folder ${from} has no layer`);
      for (const [to, files] of edges) {
        if (layerOf(to) === -1) violations.push(`folder ${to} has no layer`);
        else if (layerOf(to) >= layerOf(from)) violations.push(...files);
      }
    }
    expect(violations).toEqual([]);
  });
});

describe('the proxy↔child contract', () => {
  it('is spelled out only in core/src/handoff: every other source file imports the names', () => {
    const handoff = join(packageNamed('@nteract-mcp/core').dir, 'src', 'handoff');
    const offenders: string[] = [];
    for (const pkg of packages) {
      for (const file of sourceFiles(join(pkg.dir, 'src'))) {
        if (isTestFile(file) || file.startsWith(handoff)) continue;
        const code = codeOf(file);
        for (const literal of contractLiterals) {
          if (code.includes(literal)) offenders.push(`${relative(repoRoot, file)}: ${literal}`);
        }
        if (/\b(?:exit\(|code\s*===?\s*|Code\s*=\s*)75\b/.test(code)) offenders.push(`${relative(repoRoot, file)}: 75`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("lets the proxy's tracker read no reply text", () => {
    const tracker = codeOf(join(packageNamed('@nteract-mcp/proxy').dir, 'src', 'rejoin-target-tracker.ts'));
    expect(tracker).not.toMatch(/startsWith|JSON\.parse|\.content\b|toolName/);
  });
});

/** Every non-test source file of packages/* and examples/* (the `testing/` kits included). */
const productionFiles = packages.flatMap((pkg) =>
  sourceFiles(join(pkg.dir, 'src')).filter((file: string) => !isTestFile(file)),
);
const relativeTo = (file: string) => relative(repoRoot, file);

/** The processes' entry modules: the only files whose top level runs code (they start the process). */
const processEntries = [
  'packages/daemon/src/runtimed.ts',
  // The live page's script in the browser (bundled on its own into the daemon's dist/page/).
  'packages/daemon/src/page/client/live-page.ts',
  // The MCP Apps view's script in the client's sandboxed frame (bundled into the plugin's HTML string).
  'packages/plugin-app-view/src/view/cells-view.ts',
  'packages/nteract-mcp/src/nteract-mcp.ts',
  'packages/nteract-mcp/src/runt-mcp.ts',
  'examples/custom-protocol-era/src/main.ts',
  'examples/custom-rejoin-rule/src/main.ts',
  'examples/custom-target-kind/src/main.ts',
  'examples/embedding/src/main.ts',
];

describe('the extension surface', () => {
  // It parses every production file (about 9 s on a loaded 2-core machine): a time limit of its own.
  it('has no import-time registration: importing a module changes nothing another module sees', {
    timeout: 120_000,
  }, () => {
    const sources = productionFiles.map((file) => ({ path: relativeTo(file), text: readFileSync(file, 'utf8') }));
    expect(importTimeRegistrations(sources)).toEqual([]);
    // Only a process entry runs statements at its top level.
    const running = productionFiles
      .filter((file) => !processEntries.includes(relativeTo(file)))
      .filter((file) => topLevelStatements(file).length > 0)
      .map(relativeTo);
    expect(running).toEqual([]);
    // So the bundler may drop any module an entry does not use: no folder is special-cased.
    expect(readFileSync(join(repoRoot, 'bundle-entry.shared.ts'), 'utf8')).not.toMatch(/sideEffects:(?!\s*false\b)/);
  });

  it('would see a registry filled on import (the check can fail)', () => {
    const registry = `const points = new Map();
export function definePoint(name) { points.set(name, { name }); return Symbol(name); }`;
    expect(
      importTimeRegistrations([
        { path: 'points.ts', text: registry },
        {
          path: 'backend.ts',
          text: "import { definePoint } from './points.js';\nexport const Backend = definePoint('Backend');",
        },
        { path: 'later.ts', text: "export function late() { return definePoint('Late'); }" },
      ]),
    ).toEqual(["backend.ts: definePoint('Backend')"]);
  });

  /**
   * The points core binds, from its one visible list, with who consumes each in production and, for
   * the points third parties are meant to use, the example that shows how.
   */
  const coreSrc = join(packageNamed('@nteract-mcp/core').dir, 'src');
  const listed = [
    ...readFileSync(join(coreSrc, 'composition', 'contribution-points.ts'), 'utf8').matchAll(/^\s+(\w+)Point,$/gm),
  ].map(([, name]) => `${(name as string)[0]?.toUpperCase()}${(name as string).slice(1)}`);
  const forThirdParties: Readonly<Record<string, string>> = {
    NotebookBackend: 'examples/custom-target-kind',
    RecoveryContribution: 'examples/custom-target-kind',
    ChildToolContribution: 'examples/embedding',
    ClientExtension: 'examples/embedding',
    ProtocolAdmission: 'examples/custom-protocol-era',
  };

  it('lists every point in one place, each defined once in core and nowhere else', () => {
    const defined = productionFiles.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/defineContributionPoint<\w+>\(\s*'(\w[\w-]*)',\s*'(\w+)'/g)].map(
        ([, pkg, name]) => `${pkg}:${name} in ${relativeTo(file).split('/src/')[0]}`,
      ),
    );
    expect(defined.sort()).toEqual(listed.map((name) => `core:${name} in packages/core`).sort());
    expect(listed.sort()).toEqual([
      'ChildToolContribution',
      'ClientExtension',
      'NotebookBackend',
      'ProtocolAdmission',
      'RecoveryContribution',
    ]);
  });

  it.each(listed)(
    '%s has a production consumer and a producer; a point meant for third parties has an example',
    (name) => {
      const inProduction = productionFiles.filter((file) => !/[/\\]testing[/\\]/.test(file));
      const uses = (pattern: RegExp) => inProduction.filter((file) => pattern.test(codeOf(file))).map(relativeTo);
      const consumers = uses(new RegExp(`@named\\(${name}\\)|\\{ name: ${name} \\}`));
      const producers = uses(new RegExp(`bind\\(${name}\\)`));
      expect(consumers.filter((file) => file.startsWith('packages/'))).not.toEqual([]);
      expect(producers).not.toEqual([]);
      const example = forThirdParties[name];
      if (example) expect(producers.filter((file) => file.startsWith(`${example}/`))).not.toEqual([]);
    },
  );
});

/** Over this many lines a source file needs a comment saying why it must stay one file. */
const maxLines = 600;
const oneFileReason = /Why one file: \S.{40,}/;

describe("the proxy's bundle", () => {
  /** The bin and every chunk it imports statically (read when it starts; dynamic ones only when used). */
  function startupModules(dist: string, entry: string, seen = new Set<string>()): string[] {
    if (seen.has(entry)) return [];
    seen.add(entry);
    const text = readFileSync(join(dist, entry), 'utf8');
    const imported = [...text.matchAll(/(?:^|[;\n}])\s*import\s*(?:[^"'()]*?from\s*)?["']\.\/([^"']+\.js)["']/g)].map(
      (match) => match[1] as string,
    );
    return [text, ...imported.flatMap((chunk) => startupModules(dist, chunk, seen))];
  }

  it('starts without zod or the MCP SDK schemas: they cost the proxy several MB of heap it never uses', () => {
    const dist = join(repoRoot, 'packages', 'nteract-mcp', 'dist');
    const modules = startupModules(dist, 'nteract-mcp.js');
    expect(modules.length).toBeGreaterThan(1);
    expect(modules.filter((text) => /\$ZodType|ZodError/.test(text)).length).toBe(0);
    // The check can fail: the child's bundle, which validates tool arguments with zod, has them.
    expect(readFileSync(join(dist, 'runt-mcp-bundled.cjs'), 'utf8')).toMatch(/ZodError/);
  });
});

describe('the size of a source file', () => {
  it(`is at most ${maxLines} lines in packages/*/src (tests excepted), unless a "Why one file:" comment says why`, () => {
    const long = productionFiles
      .filter((file) => relativeTo(file).startsWith('packages/'))
      .map((file) => ({ file: relativeTo(file), text: readFileSync(file, 'utf8') }))
      .filter(({ text }) => text.split('\n').length - 1 > maxLines)
      .filter(({ text }) => !oneFileReason.test(text))
      .map(({ file, text }) => `${file}: ${text.split('\n').length - 1} lines`);
    expect(long).toEqual([]);
  });
});

describe('imports between files', () => {
  it.each(packages.map((pkg) => [pkg.name, pkg.dir] as const))(
    '%s has no import cycle, type-only imports included',
    (_name, dir) => {
      expect(fileCycles(join(dir, 'src'))).toEqual([]);
    },
  );

  it('counts a type-only import as an edge (the check can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cycle-'));
    try {
      mkdirSync(join(dir, 'src'));
      writeFileSync(join(dir, 'src', 'a.ts'), "import type { B } from './b.js';\nexport interface A { b: B }\n");
      writeFileSync(join(dir, 'src', 'b.ts'), "import { type A } from './a.js';\nexport interface B { a?: A }\n");
      expect(fileCycles(join(dir, 'src'))).toEqual([['a.ts', 'b.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Where behaviour is chosen by a name: an MCP tool's or a protocol era's name compared (`===`,
 * `!==`, `case`, a set of names asked `.has`) anywhere but the module that defines that tool or
 * era makes the behaviour of a tool something a third party's tool cannot get by declaring it.
 * The MCP side only: the daemon's wire (its request types share some tools' names) is its own.
 */
const mcpSideFiles = productionFiles.filter(
  (file) => !/packages[/\\](daemon|runtimed-protocol)[/\\]/.test(file) && !/[/\\]testing[/\\]/.test(file),
);

/** Each tool `defineChildTool` defines in `files`, with the file that defines it. */
function toolDefinitions(files: readonly { path: string; text: string }[]): Map<string, string> {
  const tools = new Map<string, string>();
  for (const { path, text } of files) {
    for (const [, name] of text.matchAll(/defineChildTool\(\{\s*name:\s*'(\w+)'/g)) tools.set(name as string, path);
  }
  return tools;
}

/** Each comparison of one of `names` in `files` outside the file `home(name)` names, as `path: name`. */
function nameComparisons(
  files: readonly { path: string; text: string }[],
  names: readonly string[],
  home: (name: string) => readonly string[],
): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    for (const name of names) {
      if (home(name).includes(path)) continue;
      const literal = `'${name}'`;
      const compared = new RegExp(
        `(===|!==|\\bcase)\\s*${literal}|${literal}\\s*(===|!==)|\\.(has|includes)\\(\\s*${literal}`,
      );
      // A list of names (a set asked `.has` later, a `switch` table): two or more of them in one literal.
      const listed = new RegExp(`[[(]\\s*${literal}\\s*,\\s*'(${names.join('|')})'|new Set\\(\\[[^\\]]*${literal}`);
      if (compared.test(text) || listed.test(text)) found.push(`${path}: ${name}`);
    }
  }
  return found;
}

describe('behaviour chosen by name', () => {
  const files = mcpSideFiles.map((file) => ({ path: relativeTo(file), text: codeOf(file) }));
  const tools = toolDefinitions(files);

  it('finds the tools (the check can fail)', () => {
    expect(tools.size).toBeGreaterThanOrEqual(20);
    const sample = [
      { path: 'a/tools.ts', text: "defineChildTool({ name: 'run_code' })" },
      {
        path: 'b/server.ts',
        text: "if (name === 'run_code') wait();\nconst slow = new Set(['run_code', 'run_code']);",
      },
    ];
    expect(nameComparisons(sample, ['run_code'], (name) => [toolDefinitions(sample).get(name) ?? ''])).toEqual([
      'b/server.ts: run_code',
    ]);
  });

  it('compares no tool name outside the module that defines that tool', () => {
    // The proxy finds the tool whose answer it adds its supervision section to by the tool's
    // declaration in the child's list (declaresSupervisionStatus), not by its name.
    expect(nameComparisons(files, [...tools.keys()], (name) => [tools.get(name) ?? ''])).toEqual([]);
  });
});

/**
 * The protocol eras the plugins declare (`era = '<name>'` on their admission and connection), each
 * with the package that declares it. Core declares none: the fake era of its test kit is no plugin's.
 */
function eraDefinitions(files: readonly { path: string; text: string }[]): Map<string, string> {
  const eras = new Map<string, string>();
  for (const { path, text } of files) {
    if (path.startsWith('packages/core/')) continue;
    for (const [, name] of text.matchAll(/\bera\s*[=:]\s*'([\w.-]+)'/g)) {
      eras.set(name as string, path.split('/src/')[0] as string);
    }
  }
  return eras;
}

/**
 * Each file of `files` outside `home(name)` (a package folder) that spells one of the era `names`
 * as a string literal, compared or used in any other way, as `path: name`.
 */
function eraNameUses(
  files: readonly { path: string; text: string }[],
  names: readonly string[],
  home: (name: string) => string,
): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    for (const name of names) {
      if (path.startsWith(`${home(name)}/`)) continue;
      const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      if (new RegExp(`(['"\`])${escaped}\\1`).test(text)) found.push(`${path}: ${name}`);
    }
  }
  return found;
}

/**
 * What an era does differently is what its connection's dialect (`EraDialect`) says: core asks it
 * and never which era it is, so a third party's era gets core's behaviour by declaring it. Every
 * package but the daemon's (its wire is its own), the test kits included.
 */
describe('behaviour chosen by protocol era', () => {
  const files = productionFiles
    .filter((file) => !/packages[/\\](daemon|runtimed-protocol)[/\\]/.test(file))
    .map((file) => ({ path: relativeTo(file), text: codeOf(file) }));
  const eras = eraDefinitions(files);
  const homeOf = (name: string) => eras.get(name) ?? '';

  it('finds the eras and their uses (the check can fail)', () => {
    expect(Object.fromEntries(eras)).toMatchObject({
      legacy: 'packages/plugin-transport-legacy',
      native: 'packages/plugin-transport-native',
    });
    const sample = [
      { path: 'packages/plugin-x/src/x-connection.ts', text: "export class X { readonly era = 'x-era'; }" },
      { path: 'packages/core/src/a.ts', text: "if (era() === 'x-era') wait();" },
      { path: 'packages/core/src/b.ts', text: 'const shapes = { "x-era": 1 };' },
      { path: 'packages/core/src/c.ts', text: "const other = 'x-era-2';" },
      { path: 'packages/proxy/src/d.ts', text: 'log(`x-era`);' },
    ];
    const found = eraDefinitions(sample);
    expect(Object.fromEntries(found)).toEqual({ 'x-era': 'packages/plugin-x' });
    expect(eraNameUses(sample, [...found.keys()], (name) => found.get(name) ?? '')).toEqual([
      'packages/core/src/a.ts: x-era',
      'packages/core/src/b.ts: x-era',
      'packages/proxy/src/d.ts: x-era',
    ]);
  });

  it("names no era in core's production source", () => {
    const core = files.filter(({ path }) => path.startsWith('packages/core/'));
    expect(core.length).toBeGreaterThan(100);
    expect(eraNameUses(core, [...eras.keys()], homeOf)).toEqual([]);
  });

  it('names each era only in the plugin that defines it (the proxy, the bins and the examples included)', () => {
    expect(eraNameUses(files, [...eras.keys()], homeOf)).toEqual([]);
  });
});

/**
 * Core's main entry names what a plugin author needs (the ports, the contribution points and what
 * their contracts mention, the tool and handle kits) and nothing core alone uses: 227 names before
 * the names nobody outside core used were made internal (issue 45), 213 with what a third party's
 * tool now declares, 209 once the helpers only core calls (a JSON-RPC validator and error text, a
 * credential decoder, default waits, the hosted kind's guard) left it and what an era plugin and
 * a supervising host need came in (the era's dialect and its task shapes, the status-tool
 * declaration), 210 with the SDK server's dialect, which the initialize era speaks as it is (one
 * description of it, not a copy in the plugin), 214 with the client-extension point (issue 48: its
 * token, the two helpers the proxy shares with the child to read what a client declared and to
 * announce it, and the `_meta` key of the proxy's plain tool list). A new export is a deliberate
 * change to this budget, not a side effect.
 */
const coreExportBudget = 214;

describe("core's public surface", () => {
  it(`exports at most ${coreExportBudget} names from its main entry`, () => {
    const entry = readFileSync(join(packageNamed('@nteract-mcp/core').dir, 'src', 'index.ts'), 'utf8');
    const names = new Set<string>();
    for (const [, list] of entry.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
      for (const item of (list as string).split(',')) {
        const name = item
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .pop()
          ?.trim();
        if (name) names.add(name);
      }
    }
    expect(names.size).toBeGreaterThan(100);
    expect(names.size).toBeLessThanOrEqual(coreExportBudget);
  });
});
