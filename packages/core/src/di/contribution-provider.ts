import type { ContainerModuleLoadOptions, ResolutionContext } from 'inversify';
import type { Contribution, ContributionPoint } from './contribution-point.js';
import { defineToken } from './define-token.js';

/**
 * The contributions to one point, as a list that is the same array on every call (binding order)
 * and `[]` when nothing is bound. Created on the first call, not when the provider is injected (as
 * Theia's providers are), so a contribution may itself depend on a service that reads its own
 * point: a notebook backend that opens through another kind's backend injects the resolver. Consumers inject it with `@inject(ContributionProvider)
 * @named(PointToken)` instead of multi-injecting the point directly.
 */
export interface ContributionProvider<T extends Contribution> {
  getContributions(): readonly T[];
}

export const ContributionProvider = defineToken<ContributionProvider<Contribution>>('core', 'ContributionProvider');

/** Binds the provider of one contribution point, named by the point's token. */
export function bindContributionProvider<T extends Contribution>(
  options: ContainerModuleLoadOptions,
  point: ContributionPoint<T>,
): void {
  options
    .bind(ContributionProvider)
    .toDynamicValue((context: ResolutionContext): ContributionProvider<Contribution> => {
      let contributions: readonly Contribution[] | undefined;
      return {
        getContributions: () => {
          contributions ??= Object.freeze(context.getAll(point.token, { optional: true }));
          return contributions;
        },
      };
    })
    .inSingletonScope()
    .whenNamed(point.token);
}
