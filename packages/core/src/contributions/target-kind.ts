import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';
import type { NotebookTarget } from '../notebook-target/notebook-target.js';
import type { TargetParseContext } from '../notebook-target/parse-notebook-target.js';

/**
 * Makes a kind of notebook target usable: parses and canonicalises it. A container handles only
 * the kinds its plugins contribute (a distribution without the hosted plugin refuses URLs clearly).
 */
export interface TargetKind extends Contribution {
  readonly specificationVersion: 'v1';
  readonly kind: NotebookTarget['kind'];
  /** Throws `invalidTarget` with an actionable message for bad input. */
  parse(raw: string, context: TargetParseContext): NotebookTarget;
}

export const TargetKind = defineContributionPoint<TargetKind>('core', 'TargetKind', ['v1']);
