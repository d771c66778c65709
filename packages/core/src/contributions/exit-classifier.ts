import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';
import type { ChildExit } from '../ports/child-process-port.js';

/**
 * - `crash`: restart, charged to the crash budget.
 * - `handoff`: intentional (e.g. exit 75 on a daemon upgrade); restart at once, not charged.
 * - `clean-stop`: the child stopped on purpose; do not restart by itself.
 * - `fatal`: restarting cannot help (bad configuration); stop and report.
 */
export type ChildExitClass = 'crash' | 'handoff' | 'clean-stop' | 'fatal';

/**
 * Names the class of a child exit. The first contribution that returns a class wins; `undefined`
 * means "not mine". Pure: it only reads the exit.
 */
export interface ExitClassifier extends Contribution {
  readonly specificationVersion: 'v1';
  classify(exit: ChildExit): ChildExitClass | undefined;
}

export const ExitClassifier = defineContributionPoint<ExitClassifier>('core', 'ExitClassifier', ['v1']);
