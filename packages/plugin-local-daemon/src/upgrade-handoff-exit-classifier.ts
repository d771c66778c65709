import type { ChildExit, ChildExitClass, ExitClassifier } from '@nteract-mcp/core';

/** The exit code a child uses when the daemon's version changed under it (EX_TEMPFAIL). */
export const upgradeHandoffExitCode = 75;

/**
 * Exit 75 is the child's intentional handoff after a daemon upgrade: restart at once, outside the
 * crash budget. Any other exit is left to the next classifier.
 */
export class UpgradeHandoffExitClassifier implements ExitClassifier {
  public readonly id = 'local-daemon.upgrade-handoff';
  public readonly specificationVersion = 'v1';

  public classify(exit: ChildExit): ChildExitClass | undefined {
    return exit.code === upgradeHandoffExitCode ? 'handoff' : undefined;
  }
}
