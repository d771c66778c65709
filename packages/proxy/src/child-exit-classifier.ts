import { type ChildExit, type ChildExitClass, childExitCodes } from '@nteract-mcp/core';
import { injectable } from 'inversify';

/**
 * Names the class of a child exit: exit 75 ({@link childExitCodes}`.upgradeHandoff`) is the
 * child's intentional handoff after a daemon upgrade (restart at once, outside the crash budget);
 * a spawn failure is `fatal` (restarting the same missing binary cannot help); exit code 0 is a
 * `clean-stop`; anything else (other codes, signals) a `crash`. Pure: it only reads the exit.
 */
@injectable()
export class ChildExitClassifier {
  public classify(exit: ChildExit): ChildExitClass {
    if (exit.code === childExitCodes.upgradeHandoff) return 'handoff';
    if (exit.spawnError !== undefined) return 'fatal';
    return exit.code === 0 && exit.signal === null ? 'clean-stop' : 'crash';
  }
}
