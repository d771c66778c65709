/** A text with its middle cut out: `head` + (the cut) + `tail`, all from the original. */
export interface MiddleCut {
  readonly head: string;
  readonly tail: string;
  /** Characters left out, starting at `head.length` of the original. */
  readonly cutChars: number;
  /** Line breaks inside the part left out. */
  readonly cutLines: number;
}

/** How far back a cut looks for a line break, as a share of the part kept. */
const lineSearchShare = 0.25;

/**
 * `text` cut to at most `maxChars` characters (plus the caller's marker): the first and the last
 * half kept, each ending/starting at a line break when there is one near, never inside a
 * surrogate pair; `undefined` when it fits. Pure.
 */
export function cutMiddle(text: string, maxChars: number): MiddleCut | undefined {
  if (text.length <= maxChars) return undefined;
  const half = Math.max(0, Math.floor(maxChars / 2));
  let headEnd = half;
  const lastBreak = text.lastIndexOf('\n', headEnd - 1);
  if (lastBreak >= 0 && lastBreak + 1 >= half * (1 - lineSearchShare)) headEnd = lastBreak + 1;
  headEnd = safeBoundary(text, headEnd);
  let tailStart = text.length - half;
  const nextBreak = text.indexOf('\n', tailStart);
  if (nextBreak >= 0 && nextBreak < text.length - 1 && nextBreak + 1 <= tailStart + half * lineSearchShare) {
    tailStart = nextBreak + 1;
  }
  tailStart = Math.max(headEnd, safeBoundary(text, tailStart));
  return {
    head: text.slice(0, headEnd),
    tail: text.slice(tailStart),
    cutChars: tailStart - headEnd,
    cutLines: countLineBreaks(text, headEnd, tailStart),
  };
}

/** `index`, moved back by one when it would split a surrogate pair. */
export function safeBoundary(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return index;
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

function countLineBreaks(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}
