/** How many characters of client text an error message shows before cutting it. */
export const boundedClientTextChars = 80;

const plainText = /^[\x20-\x7e]*$/;

/**
 * Client-supplied text (a method, a tool name, an id) made safe for an error message or a log
 * line. Short printable-ASCII text comes back unchanged, so `Unknown tool: no_such_tool` reads as
 * it always did; anything else comes back JSON-quoted (control characters and quotes as escapes)
 * and cut to {@link boundedClientTextChars} characters with an ellipsis, so a huge or binary name
 * never makes a huge or garbled answer. Never cuts a surrogate pair in half.
 */
export function boundClientText(text: string, maxChars: number = boundedClientTextChars): string {
  if (text.length <= maxChars && plainText.test(text)) return text;
  if (text.length <= maxChars) return JSON.stringify(text);
  const last = text.charCodeAt(maxChars - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars;
  return JSON.stringify(`${text.slice(0, end)}…`);
}

/**
 * {@link boundClientText}, always quoted, for a message that quotes a name: short printable text
 * in single quotes (`'create_cell'`), anything else JSON-quoted and cut as there (never both).
 */
export function quoteClientText(text: string, maxChars: number = boundedClientTextChars): string {
  const bounded = boundClientText(text, maxChars);
  return bounded === text ? `'${text}'` : bounded;
}
