import type { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { SessionActivation } from '../session/session-activation.js';
import type { SessionRecoveryState } from '../session/session-recovery-state.js';
import type { SessionSlot } from '../session/session-slot.js';
import type { PeerAwareness } from './awareness/peer-awareness.js';
import type { ExecutionStore } from './executions/execution-store.js';
import type { KernelHistory } from './executions/kernel-history.js';

/** What the child server's tools work with: the session engine, the ports and the call-independent state. */
export interface ChildServerDependencies {
  readonly slot: SessionSlot;
  /** What is being recovered and the start rejoin's outcome (the session report's source). */
  readonly recovery: SessionRecoveryState;
  readonly activation: SessionActivation;
  readonly resolver: NotebookTargetResolver;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly executions: ExecutionStore;
  /** Which cells this server ran in which kernel of each notebook (what a replaced kernel took with it). */
  readonly kernelHistory: KernelHistory;
  /** Relative paths and the default working directory resolve against it. */
  readonly cwd: string;
  /** The serialized size no tool result exceeds; tools that list many cells stop at it. */
  readonly resultBudgetBytes: number;
  /** The peer label as of now (it changes once the client has named itself). */
  peerLabel(): string;
  /** What the session knows of the other peers' work: the cell versions it saw, its change-log cursor. */
  readonly awareness: PeerAwareness;
  /** The person allowed installs without being asked each time (see `ChildServerOptions.allowInstalls`). */
  readonly allowInstalls: boolean;
}
