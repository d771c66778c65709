import type { ChildExit } from '@nteract-mcp/core';
import { type ChildExitClass, ContributionProvider, ExitClassifier } from '@nteract-mcp/core';
import { inject, injectable, named } from 'inversify';

/**
 * Classifies a child exit with the contributed {@link ExitClassifier}s, first answer wins.
 * Without an answer: a spawn failure is `fatal` (restarting the same missing binary cannot help),
 * exit code 0 is a `clean-stop`, anything else (other codes, signals) a `crash`.
 */
@injectable()
export class ExitClassifierChain {
  public constructor(
    @inject(ContributionProvider)
    @named(ExitClassifier)
    private readonly classifiers: ContributionProvider<ExitClassifier>,
  ) {}

  public classify(exit: ChildExit): ChildExitClass {
    for (const classifier of this.classifiers.getContributions()) {
      const verdict = classifier.classify(exit);
      if (verdict !== undefined) return verdict;
    }
    if (exit.spawnError !== undefined) return 'fatal';
    return exit.code === 0 && exit.signal === null ? 'clean-stop' : 'crash';
  }
}
