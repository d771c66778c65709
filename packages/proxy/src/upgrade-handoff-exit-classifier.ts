import { type ChildExit, type ChildExitClass, childExitCodes, type ExitClassifier } from '@nteract-mcp/core';

/**
 * Exit 75 ({@link childExitCodes}`.upgradeHandoff`) is the child's intentional handoff after a daemon
 * upgrade: restart at once, outside the crash budget. Any other exit is left to the next classifier.
 */
export class UpgradeHandoffExitClassifier implements ExitClassifier {
  public readonly id = 'proxy.upgrade-handoff';
  public readonly specificationVersion = 'v1';

  public classify(exit: ChildExit): ChildExitClass | undefined {
    return exit.code === childExitCodes.upgradeHandoff ? 'handoff' : undefined;
  }
}
