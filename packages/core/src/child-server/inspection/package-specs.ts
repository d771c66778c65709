import { createHash } from 'node:crypto';
import { ToolError } from '../tools/to-tool-failure.js';
import type { InspectionLanguage } from './kernel-inspection-program.js';

/** The most packages one install names, and the longest spec. */
export const maxInstallSpecs = 20;
const maxSpecChars = 300;

/** A checked spec: what is passed to the installer as it was given, and its normalized form (the fingerprint's). */
export interface PackageSpec {
  readonly given: string;
  readonly normalized: string;
  /** An absolute path to a local package file (not a name). */
  readonly local: boolean;
}

const pythonName = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const pythonExtras =
  /^\[([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:,[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)*)\]/;
const pythonClause = /^(?:===|==|!=|~=|<=|>=|<|>)[A-Za-z0-9][A-Za-z0-9.*+!_-]*$/;
const rName = /^[A-Za-z][A-Za-z0-9.]*[A-Za-z0-9]$/;
/** A local file: an absolute path of plain characters, no `..` segment. */
const localPath = /^\/(?:[A-Za-z0-9._+@%=,~-]+\/)*[A-Za-z0-9._+@%=,~-]+$/;

/**
 * `specs` checked strictly for an install into a `language` kernel, before anything runs; a tool
 * error naming the first bad one otherwise. Python: a requirement name with optional extras and
 * version clauses (`name`, `name[extra]>=1.0,<2`; no markers, URLs or spaces), or the absolute
 * path of a local `.whl`, `.tar.gz` or `.zip`. R: a package name, or the absolute path of a local
 * `.tar.gz`, `.tgz` or `.zip` (not both kinds in one install: R installs local files without a
 * repository). Never an option (`-e`, `--index-url`…), a `;`, a shell character or whitespace. Pure.
 */
export function checkPackageSpecs(language: InspectionLanguage, specs: readonly string[]): readonly PackageSpec[] {
  if (specs.length === 0) throw new ToolError('packages must name at least one package.');
  if (specs.length > maxInstallSpecs) {
    throw new ToolError(`packages names ${specs.length} packages; at most ${maxInstallSpecs} per install.`);
  }
  const checked = specs.map((spec) => checkSpec(language, spec));
  const seen = new Set<string>();
  for (const spec of checked) {
    const key = spec.local ? spec.normalized : spec.normalized.split(/[[<>=!~]/)[0];
    if (seen.has(key as string)) throw new ToolError(`packages names ${JSON.stringify(spec.given)} twice.`);
    seen.add(key as string);
  }
  if (language === 'r' && checked.some((spec) => spec.local) && checked.some((spec) => !spec.local)) {
    throw new ToolError(
      'R installs local package files without a repository: install the local files and the named packages in two calls.',
    );
  }
  return checked;
}

function checkSpec(language: InspectionLanguage, spec: string): PackageSpec {
  const bad = (why: string) =>
    new ToolError(`Not installed, nothing ran: the package spec ${JSON.stringify(spec.slice(0, 80))} ${why}`);
  if (typeof spec !== 'string' || spec.length === 0) throw bad('is empty.');
  if (spec.length > maxSpecChars) throw bad(`is ${spec.length} characters long; at most ${maxSpecChars}.`);
  if (/\s/.test(spec)) throw bad('contains whitespace; give each package as its own item, without spaces.');
  if (spec.startsWith('-')) throw bad('is an option; only package names and local package files are accepted.');
  if (spec.startsWith('/')) {
    const suffixes = language === 'python' ? ['.whl', '.tar.gz', '.zip'] : ['.tar.gz', '.tgz', '.zip'];
    if (!localPath.test(spec) || spec.split('/').some((part) => part === '..' || part === '.')) {
      throw bad('is not a plain absolute path (letters, digits and ._+@%=,~- only, no . or .. segment).');
    }
    if (!suffixes.some((suffix) => spec.endsWith(suffix))) throw bad(`is not a ${suffixes.join(', ')} file.`);
    return { given: spec, normalized: spec, local: true };
  }
  if (language === 'r') {
    if (!rName.test(spec)) {
      throw bad(
        'is not an R package name (letters, digits and dots, starting with a letter; R installs the repository’s current version, so no version specifier) or an absolute path to a package file.',
      );
    }
    return { given: spec, normalized: spec, local: false };
  }
  return { given: spec, normalized: normalizedRequirement(spec, bad), local: false };
}

/** A Python requirement (`name[extras]clauses`) with its name and extras normalized (PEP 503), or `bad`'s error. */
function normalizedRequirement(spec: string, bad: (why: string) => ToolError): string {
  const nameEnd = spec.search(/[[<>=!~]/);
  const name = nameEnd < 0 ? spec : spec.slice(0, nameEnd);
  let rest = nameEnd < 0 ? '' : spec.slice(nameEnd);
  if (!pythonName.test(name)) {
    throw bad(
      'is not a requirement (a package name, optional [extras] and version clauses such as >=1.0,<2) or an absolute path to a .whl, .tar.gz or .zip file.',
    );
  }
  let extras: string[] = [];
  const extrasMatch = pythonExtras.exec(rest);
  if (rest.startsWith('[')) {
    if (!extrasMatch) throw bad('has malformed [extras].');
    extras = (extrasMatch[1] as string).split(',').map(pep503);
    rest = rest.slice(extrasMatch[0].length);
  }
  const clauses = rest === '' ? [] : rest.split(',');
  for (const clause of clauses) {
    if (!pythonClause.test(clause)) {
      throw bad(
        `has a version clause ${JSON.stringify(clause)} that is not one of ==, !=, ~=, <=, >=, <, >, === and a version.`,
      );
    }
  }
  const extrasText = extras.length === 0 ? '' : `[${[...new Set(extras)].sort().join(',')}]`;
  return `${pep503(name)}${extrasText}${clauses.join(',')}`;
}

/** A distribution name as PEP 503 compares it. Pure. */
export function pep503(name: string): string {
  return name.replace(/[-_.]+/g, '-').toLowerCase();
}

/**
 * What a yes to an install is for: sha256 (hex) over the normalized specs (sorted), the
 * interpreter, its prefix and whether the kernel restarts after. Pure.
 */
export function installFingerprint(
  specs: readonly PackageSpec[],
  interpreter: string,
  prefix: string,
  restart: boolean,
): string {
  const what = { specs: specs.map((spec) => spec.normalized).sort(), interpreter, prefix, restart };
  return createHash('sha256').update(JSON.stringify(what)).digest('hex');
}
