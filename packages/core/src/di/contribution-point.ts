import { CoreError } from '../errors/core-error.js';
import { defineToken, type Token } from './define-token.js';

/** What every contribution to a point carries. */
export interface Contribution {
  /** Unique among the contributions to one point; dotted, e.g. `local-daemon.saved-path`. */
  readonly id: string;
  /** The shape version of the point this contribution implements, e.g. `'v1'`. */
  readonly specificationVersion: string;
}

/**
 * A point that many plugins may contribute to: its token (what plugins bind to), its name, the
 * shape versions core can call, and the rules across its contributions. A plain value: defining a
 * point registers nothing; core's list of points (`contributionPoints`) is what containers bind
 * and validate.
 */
export interface ContributionPoint<T extends Contribution> {
  readonly token: Token<T>;
  readonly name: string;
  readonly specificationVersions: readonly string[];
  /** Rules across the contributions of the point (e.g. one owner per key); throws a {@link CoreError}. */
  readonly validate?: (contributions: readonly T[]) => void;
}

/** Options of {@link defineContributionPoint}. */
export interface ContributionPointOptions<T extends Contribution> {
  /** Checked after the per-contribution rules when a container is built. */
  readonly validate?: (contributions: readonly T[]) => void;
}

/**
 * Mints the token of a contribution point with the specification versions core knows for it.
 * Pure: nothing is recorded anywhere; the point takes effect by being listed in
 * `contributionPoints`, which every container binds (one provider per point) and validates.
 */
export function defineContributionPoint<T extends Contribution>(
  pkg: string,
  name: string,
  specificationVersions: readonly T['specificationVersion'][],
  options: ContributionPointOptions<T> = {},
): ContributionPoint<T> {
  return Object.freeze({
    token: defineToken<T>(pkg, name),
    name,
    specificationVersions: Object.freeze([...specificationVersions]),
    ...(options.validate ? { validate: options.validate } : {}),
  });
}

/**
 * Checks one point's contributions: each has an id and a known specification version, and no two
 * share an id. Throws a {@link CoreError} naming the point and the offending contribution.
 */
export function assertValidContributions<T extends Contribution>(
  point: ContributionPoint<T>,
  contributions: readonly unknown[],
): void {
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
  point.validate?.(contributions as readonly T[]);
}
