import { CoreError } from '../errors/core-error.js';
import { defineToken, type Token } from './define-token.js';

/** What every contribution to a point carries. */
export interface Contribution {
  /** Unique among the contributions to one point; dotted, e.g. `local-daemon.saved-path`. */
  readonly id: string;
  /** The shape version of the point this contribution implements, e.g. `'v1'`. */
  readonly specificationVersion: string;
}

/** A point that many plugins may contribute to, and the shape versions core can call. */
export interface ContributionPointDescriptor {
  readonly token: Token<Contribution>;
  readonly name: string;
  readonly specificationVersions: readonly string[];
  /** Rules across the contributions of the point (e.g. one owner per key); throws a {@link CoreError}. */
  readonly validate?: (contributions: readonly Contribution[]) => void;
}

/** Options of {@link defineContributionPoint}. */
export interface ContributionPointOptions<T extends Contribution> {
  /** Checked after the per-contribution rules when a container is built. */
  readonly validate?: (contributions: readonly T[]) => void;
}

const contributionPoints = new Map<symbol, ContributionPointDescriptor>();

/**
 * Mints the token of a contribution point and records which specification versions core knows
 * for it. Containers validate every contribution against this record when they are built.
 */
export function defineContributionPoint<T extends Contribution>(
  pkg: string,
  name: string,
  specificationVersions: readonly T['specificationVersion'][],
  options: ContributionPointOptions<T> = {},
): Token<T> {
  const token = defineToken<T>(pkg, name);
  contributionPoints.set(token, {
    token: token as Token<Contribution>,
    name,
    specificationVersions: Object.freeze([...specificationVersions]),
    ...(options.validate ? { validate: options.validate as (contributions: readonly Contribution[]) => void } : {}),
  });
  return token;
}

/** Every point defined so far, in definition order. */
export function listContributionPoints(): readonly ContributionPointDescriptor[] {
  return [...contributionPoints.values()];
}

/**
 * Checks one point's contributions: each has an id and a known specification version, and no two
 * share an id. Throws a {@link CoreError} naming the point and the offending contribution.
 */
export function assertValidContributions(point: ContributionPointDescriptor, contributions: readonly unknown[]): void {
  const seen = new Set<string>();
  for (const candidate of contributions) {
    const contribution = candidate as Partial<Contribution> | undefined;
    const id = contribution?.id;
    if (typeof id !== 'string' || id.length === 0 || typeof contribution?.specificationVersion !== 'string') {
      throw new CoreError(
        'invalidContribution',
        `${point.name}: a contribution lacks a string 'id' or 'specificationVersion'`,
      );
    }
    if (!point.specificationVersions.includes(contribution.specificationVersion)) {
      throw new CoreError(
        'unknownSpecificationVersion',
        `${point.name} '${id}' declares specificationVersion '${contribution.specificationVersion}'; ` +
          `this core supports ${point.specificationVersions.map((v) => `'${v}'`).join(', ')}. ` +
          'Upgrade @nteract-mcp/core or use a plugin version built for it.',
      );
    }
    if (seen.has(id)) {
      throw new CoreError('duplicateContributionId', `${point.name}: two contributions share the id '${id}'`);
    }
    seen.add(id);
  }
  point.validate?.(contributions as readonly Contribution[]);
}
