import { ChangeSet, type ChangeSpec } from '@codemirror/state';
import diff from 'fast-diff';

/** The room's new text put into a person's editor: what to apply there, and where the other peer's change ends. */
export interface SourceMerge {
  /** Changes to the editor's text (`local`) that give it the room's change while keeping the person's. */
  readonly changes: ChangeSet;
  /** Where the room's change ends in the merged text (for the other peer's mark); `undefined` when it changed nothing. */
  readonly changedTo: number | undefined;
}

/**
 * The character-level changes that turn `from` into `to` (a diff of the two, each run of inserted
 * or deleted characters one change): what a peer's whole-text write did, in changes another
 * peer's concurrent changes can be mapped over.
 */
export function changesBetween(from: string, to: string): ChangeSet {
  const specs: ChangeSpec[] = [];
  let at = 0;
  for (const [operation, text] of diff(from, to)) {
    if (operation === diff.EQUAL) at += text.length;
    else if (operation === diff.DELETE) {
      specs.push({ from: at, to: at + text.length });
      at += text.length;
    } else specs.push({ from: at, insert: text });
  }
  return ChangeSet.of(specs, from.length);
}

/**
 * Merges at the character level, as an operational transform with the room as the authority: `base`
 * is the room's text the person's editor started from, `local` the editor's text (the person's
 * changes over `base`, not yet in the room), `remote` the room's text now (another peer's changes
 * over `base`). Both peers' changes are kept: the room's are mapped over the person's and applied
 * to the editor, so the editor then holds `remote` with the person's changes in it (where both
 * inserted at one place, the room's text comes first). With no local changes the result is `remote`.
 */
export function mergeSource(base: string, local: string, remote: string): SourceMerge {
  const theirs = changesBetween(base, remote);
  const changes = local === base ? theirs : theirs.map(changesBetween(base, local), true);
  let changedTo: number | undefined;
  changes.iterChangedRanges((_fromA, _toA, _fromB, toB) => {
    changedTo = toB;
  });
  return { changes, changedTo };
}
