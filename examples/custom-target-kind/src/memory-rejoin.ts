import { BoundedRetryRecovery, Clock, describeNotebookTarget, Logger, SessionSlot } from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { memoryKind } from './memory-target.js';

/**
 * The `acme.memory` kind's part of the child's recovery loop. Without it core's own bounded retry
 * would bring a lost `memory:` session back all the same; a kind contributes its own to choose
 * its schedule (a store restarts in well under a second: 100 ms doubling to 2 s, 8 attempts) and
 * what the agent is told when it gives up. A lost session (its handle closed `disconnected`, as
 * when the store restarts) is noticed by core's loss watch, removed, and tried again at once.
 */
@injectable()
export class MemoryRejoin extends BoundedRetryRecovery {
  public constructor(
    @inject(Clock) clock: Clock,
    @inject(Logger) logger: Logger,
    @inject(SessionSlot) slot: SessionSlot,
  ) {
    super(clock, logger, {
      id: 'acme.memory.rejoin',
      handles: (target) => target.kind === memoryKind,
      schedule: { initialMs: 100, maxMs: 2_000, maxAttempts: 8 },
      giveUpReason: (target, attempts, last) =>
        `The memory store did not come back after ${attempts} attempts (last: ${last}). ` +
        `Connect again with connect_notebook(url="${describeNotebookTarget(target)}").`,
      lossWatch: { slot, reason: 'the memory store restarted' },
    });
  }
}
