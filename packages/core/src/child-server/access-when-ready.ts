import { CoreError } from '../errors/core-error.js';
import type { SessionAccess, SessionRequirement } from '../session/session-slot.js';
import type { ChildServerDependencies } from './child-server-dependencies.js';
import type { ToolCallContext } from './tools/child-tool-registry.js';

/** How long a tool waits, at most, for the active notebook's kernel (or document) to finish starting. */
export const defaultSessionStartWaitMs = 60_000;

/** Progress is reported this often while the tool waits. */
const waitProgressEveryMs = 5_000;

/**
 * Access to the active session for a tool, as {@link SessionSlot.access} gives it, except that a
 * session still starting (its document syncing, or its kernel starting: `connect_notebook`
 * answers with the retained projection before the kernel is up) is waited for instead of refused:
 * at most `waitMs`, reporting the wait as progress, until the cancellation of the call. A session
 * that cannot become ready (no session, a lost connection, an unavailable runtime) is refused at
 * once with the slot's error; one still not ready when the wait ends gets the slot's error too.
 */
export async function accessWhenReady(
  deps: Pick<ChildServerDependencies, 'slot' | 'clock'>,
  requirement: SessionRequirement,
  context: Pick<ToolCallContext, 'signal' | 'reportProgress'>,
  waitMs = defaultSessionStartWaitMs,
): Promise<SessionAccess> {
  try {
    return deps.slot.access(requirement);
  } catch (error) {
    if (!CoreError.is(error, 'runtimeNotReady') && !CoreError.is(error, 'documentNotReady')) throw error;
    const session = deps.slot.active;
    const readiness = session?.handle.readiness();
    // Only a start in progress is worth waiting for.
    if (!session || readiness?.runtime === 'unavailable' || readiness?.document === 'failed') throw error;
    const id = session.handle.notebookId;
    const started = deps.clock.now();
    const what = error.kind === 'runtimeNotReady' ? 'kernel' : 'document';
    const report = () => {
      const seconds = Math.round((deps.clock.now() - started) / 1000);
      context.reportProgress(seconds, `waiting for the ${what} of notebook ${id} to be ready (${seconds} s)`);
    };
    report();
    let ticker = deps.clock.setTimer(waitProgressEveryMs, function tick() {
      report();
      ticker = deps.clock.setTimer(waitProgressEveryMs, tick);
    });
    const stop = new AbortController();
    const onCancel = () => stop.abort();
    context.signal.addEventListener('abort', onCancel, { once: true });
    const timer = deps.clock.setTimer(waitMs, () => stop.abort());
    try {
      await session.handle.waitUntilReady(stop.signal).catch(() => undefined);
    } finally {
      ticker.cancel();
      timer.cancel();
      context.signal.removeEventListener('abort', onCancel);
    }
    return deps.slot.access(requirement);
  }
}
