import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** From what size something dropped counts as a large transient: 8 MiB. */
export const largeTransientBytes = 8 * 1024 * 1024;

/** V8's full collection, made callable once (undefined when this runtime refuses it). */
let fullCollection: (() => void) | undefined | null = null;
/** A large transient was dropped and not given back yet. */
let pending = false;
/** A large transient waits for the next answer to be given back. */
let pendingAnswer = false;

function collector(): (() => void) | undefined {
  if (fullCollection !== null) return fullCollection;
  try {
    setFlagsFromString('--expose-gc');
    fullCollection = runInNewContext('gc') as () => void;
  } catch {
    fullCollection = undefined;
  }
  return fullCollection;
}

/**
 * Gives the memory of a large transient back soon: a full collection once the current task is
 * over (several calls before it make one). V8 frees a large string or buffer that nothing refers
 * to any more only at its next full collection, and a process that keeps little alive between
 * large messages (the daemon, the child) may not reach one for hours: after a 100 MB output the
 * daemon kept 460 MB RSS while idle, of which 112 MB were live (bench/large-outputs.mjs).
 *
 * Call it with the size of what was just dropped (a frame read or written, a file written, an
 * answer sent); below {@link largeTransientBytes} it does nothing. A full collection of a heap
 * holding a few large strings takes milliseconds: it marks objects, not bytes.
 */
export function releaseLargeTransient(bytes: number): void {
  if (bytes < largeTransientBytes || pending || !collector()) return;
  pending = true;
  setImmediate(releaseScheduled).unref();
}

/**
 * Like {@link releaseLargeTransient}, for a large transient that the request being handled holds
 * until its answer is made (a value read for it, shaped into a small answer over several tasks):
 * nothing is scheduled, and the next {@link releaseLargeTransientsNow} (the answer going out)
 * gives it back. A collection scheduled by {@link releaseLargeTransient} meanwhile does not count,
 * since the transient may still have been held then.
 */
export function releaseLargeTransientWhenAnswered(bytes: number): void {
  if (bytes < largeTransientBytes || !collector()) return;
  pendingAnswer = true;
}

/**
 * Gives back now what {@link releaseLargeTransient} and {@link releaseLargeTransientWhenAnswered}
 * were told of and has not given back yet: for the moment a request is answered, when what
 * handling it dropped is unreferenced, so that the memory is back before anyone hears the answer.
 * Does nothing when nothing is pending.
 */
export function releaseLargeTransientsNow(): void {
  if (!pending && !pendingAnswer) return;
  pending = false;
  pendingAnswer = false;
  fullCollection?.();
}

/** The collection {@link releaseLargeTransient} scheduled (what waits for an answer keeps waiting). */
function releaseScheduled(): void {
  if (!pending) return;
  pending = false;
  fullCollection?.();
}
