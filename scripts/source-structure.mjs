#!/usr/bin/env node
// The shape of the source tree: non-test lines per package, and the import graph between
// packages and between the folders of a package. Used by test/architecture.test.ts (which holds
// the rules) and runnable by hand: `node scripts/source-structure.mjs` prints a report.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const importPattern =
  /(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every `.ts` file under `dir`, recursively (`dist` and `node_modules` left out). */
export function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** True for a test file (`*.spec.ts`, `*.test.ts`). */
export function isTestFile(path) {
  return /\.(spec|test)\.ts$/.test(path);
}

/** The module specifiers a file imports or re-exports (static and dynamic), comments stripped. */
export function importsOf(path) {
  const text = readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const specifiers = [];
  for (const match of text.matchAll(importPattern)) specifiers.push(match[1] ?? match[2]);
  return specifiers;
}

/** The workspace packages: `{ name, dir }` for packages/* and examples/*. */
export function workspacePackages() {
  const out = [];
  for (const group of ['packages', 'examples']) {
    for (const entry of readdirSync(join(repoRoot, group))) {
      const dir = join(repoRoot, group, entry);
      try {
        const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        out.push({ name: manifest.name, dir, manifest });
      } catch {
        // not a package
      }
    }
  }
  return out;
}

/** Non-test source lines of a package's `src` (the `testing/` subpath counted separately). */
export function lineCounts(pkg) {
  let source = 0;
  let testing = 0;
  for (const file of sourceFiles(join(pkg.dir, 'src'))) {
    if (isTestFile(file)) continue;
    const lines = readFileSync(file, 'utf8').split('\n').length - 1;
    if (/[/\\]testing[/\\]/.test(relative(pkg.dir, file))) testing += lines;
    else source += lines;
  }
  return { source, testing };
}

/** Package → the workspace packages its non-test source imports. */
export function packageGraph(packages = workspacePackages()) {
  const names = new Set(packages.map((pkg) => pkg.name));
  const graph = new Map();
  for (const pkg of packages) {
    const deps = new Set();
    for (const file of sourceFiles(join(pkg.dir, 'src'))) {
      if (isTestFile(file)) continue;
      for (const specifier of importsOf(file)) {
        const target = [...names].find((name) => specifier === name || specifier.startsWith(`${name}/`));
        if (target && target !== pkg.name) deps.add(target);
      }
    }
    graph.set(pkg.name, deps);
  }
  return graph;
}

/**
 * Edges between the top-level folders of `srcDir` (a file directly in `src` is the folder `.`),
 * from non-test files' relative imports: `Map<from, Map<to, [fromFile → toFile]>>`.
 */
export function folderGraph(srcDir) {
  const graph = new Map();
  const folderOf = (file) => {
    const parts = relative(srcDir, file).split(/[/\\]/);
    return parts.length > 1 ? parts[0] : '.';
  };
  for (const file of sourceFiles(srcDir)) {
    if (isTestFile(file)) continue;
    const from = folderOf(file);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const specifier of importsOf(file)) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
      const to = folderOf(target);
      if (to === from) continue;
      const edges = graph.get(from);
      if (!edges.has(to)) edges.set(to, []);
      edges.get(to).push(`${relative(srcDir, file)} → ${relative(srcDir, target)}`);
    }
  }
  return graph;
}

/** File-level import cycles among the non-test files of `srcDir` (each cycle as a list of files). */
export function fileCycles(srcDir) {
  const files = sourceFiles(srcDir).filter((file) => !isTestFile(file));
  const edges = new Map(
    files.map((file) => [
      file,
      importsOf(file)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))),
    ]),
  );
  const cycles = [];
  const state = new Map();
  const stack = [];
  const visit = (file) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of edges.get(file) ?? []) {
      if (!edges.has(next)) continue;
      if (state.get(next) === 'open') cycles.push(stack.slice(stack.indexOf(next)).map((f) => relative(srcDir, f)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}

/**
 * Import-time registration: a function that writes a module-level collection (a `Map`, `Set` or
 * array declared at the top of its file: a registry), called at the top level of a module (in a
 * statement or a top-level variable's initializer), so that importing the module changes what
 * another module sees. `sources` is `[{ path, text }]`; answers `path: call` per finding.
 * Registering functions are matched by name across the files given.
 */
export function importTimeRegistrations(sources) {
  const parsed = sources.map(({ path, text }) => ({
    path,
    file: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true),
  }));
  const registering = new Set();
  for (const { file } of parsed) {
    const collections = new Set();
    for (const statement of file.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        const isCollection =
          init !== undefined &&
          ((ts.isNewExpression(init) && /^(Map|Set|WeakMap|WeakSet)$/.test(init.expression.getText(file))) ||
            ts.isArrayLiteralExpression(init));
        if (isCollection && ts.isIdentifier(declaration.name)) collections.add(declaration.name.text);
      }
    }
    if (collections.size === 0) continue;
    for (const statement of file.statements) {
      if (!ts.isFunctionDeclaration(statement) || !statement.name || !statement.body) continue;
      let writes = false;
      const visit = (node) => {
        if (
          ts.isCallExpression(node) &&
          ts.isPropertyAccessExpression(node.expression) &&
          ts.isIdentifier(node.expression.expression) &&
          collections.has(node.expression.expression.text) &&
          /^(set|add|push|unshift|splice|delete|clear)$/.test(node.expression.name.text)
        ) {
          writes = true;
        }
        ts.forEachChild(node, visit);
      };
      visit(statement.body);
      if (writes) registering.add(statement.name.text);
    }
  }
  const findings = [];
  for (const { path, file } of parsed) {
    const visitTopLevel = (node) => {
      if (ts.isFunctionLike(node) || ts.isClassLike(node)) return; // runs later, not on import
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        const name = ts.isIdentifier(callee)
          ? callee.text
          : ts.isPropertyAccessExpression(callee)
            ? callee.name.text
            : '';
        if (registering.has(name)) findings.push(`${path}: ${node.getText(file).split('\n')[0]}`);
      }
      ts.forEachChild(node, visitTopLevel);
    };
    for (const statement of file.statements) visitTopLevel(statement);
  }
  return findings;
}

/** Top-level expression statements (code run on import) of a file, as text. */
export function topLevelStatements(path) {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  return file.statements.filter((statement) => ts.isExpressionStatement(statement)).map((s) => s.getText(file));
}

function report() {
  const packages = workspacePackages();
  const counts = packages.map((pkg) => ({ name: pkg.name, ...lineCounts(pkg) }));
  const total = counts.reduce((sum, row) => sum + row.source + row.testing, 0);
  console.log('non-test source lines (src, plus testing/ kits):');
  for (const row of counts.sort((a, b) => b.source + b.testing - (a.source + a.testing))) {
    const share = (((row.source + row.testing) / total) * 100).toFixed(1);
    console.log(
      `  ${row.name.padEnd(40)} ${String(row.source).padStart(6)} + ${String(row.testing).padStart(4)}  ${share}%`,
    );
  }
  console.log(`  ${'total'.padEnd(40)} ${String(total).padStart(6)}`);
  console.log('\npackage imports:');
  for (const [name, deps] of packageGraph(packages)) console.log(`  ${name} → ${[...deps].sort().join(', ') || '∅'}`);
  const core = packages.find((pkg) => pkg.name === '@nteract-mcp/core');
  if (core) {
    console.log('\ncore folder imports:');
    for (const [from, edges] of [...folderGraph(join(core.dir, 'src'))].sort()) {
      console.log(`  ${from} → ${[...edges.keys()].sort().join(', ') || '∅'}`);
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) report();
