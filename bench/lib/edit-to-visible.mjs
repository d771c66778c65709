import { until } from './stats.mjs';

/** The machine's clock in ms, as the page reads it (`performance.timeOrigin + performance.now()`). */
export const now = () => performance.timeOrigin + performance.now();

/**
 * The agent's one-line `set_cell` of `cellId` to `source`: ms from its answer to the new text shown
 * in the page. The page's init script must record, in `__shownAt` (the machine's clock), when the
 * text named by `__want` (`{ id, text }`) first showed in its cell. Shown before the answer reached
 * the agent (the page hears the change first): 0.
 */
export async function editToVisible(peer, page, cellId, source) {
  await page.evaluate(
    (want) => {
      globalThis.__shownAt = undefined;
      globalThis.__want = want;
    },
    { id: cellId, text: source },
  );
  await peer.call('set_cell', { cell_id: cellId, source });
  const answeredAt = now();
  const shownAt = await until(`${source} in the page`, () => page.evaluate(() => globalThis.__shownAt), 30_000, 2);
  return Math.max(0, shownAt - answeredAt);
}
