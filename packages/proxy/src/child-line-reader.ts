import { type JsonRpcFrame, JsonRpcLineFramer, type JsonRpcLineFramerOptions } from '@nteract-mcp/core';
import { type ScannedAnswer, type SessionReportCache, scanChildAnswer } from './scan-child-answer.js';

/** What one line of a child became: an answer read without being built, or a frame as the framer makes it. */
export type ChildLine = { readonly kind: 'answer'; readonly answer: ScannedAnswer } | JsonRpcFrame;

const newline = 0x0a;
const newlineBytes = Buffer.from('\n');

/**
 * Splits a child's stdout into lines and reads each successful answer laid out as the MCP SDK
 * writes it with {@link scanChildAnswer}, so a pass-through answer is never parsed into objects
 * nor decoded into a string. Every other line (requests, notifications, error answers, other
 * layouts, malformed lines) and every line over the cap goes to a {@link JsonRpcLineFramer}, which
 * frames it exactly as it frames a whole stream.
 *
 * Guarantees: lines come out in order; bytes split anywhere (even inside a UTF-8 character) are
 * reassembled; at most the cap plus the current chunk is held for one line (a longer one is
 * handed to the framer as it arrives, which drops it with one error). Pure: no I/O.
 */
export class ChildLineReader {
  readonly #framer: JsonRpcLineFramer;
  #parts: Buffer[] = [];
  #size = 0;
  /** Set while the rest of a line over the cap goes to the framer. */
  #delegating = false;
  readonly #reports: SessionReportCache = {};

  public constructor(options: JsonRpcLineFramerOptions = {}) {
    this.#framer = new JsonRpcLineFramer(options);
  }

  /** The cap on one line, in bytes. */
  public get maxLineBytes(): number {
    return this.#framer.maxLineBytes;
  }

  /** Feeds the next chunk; returns every line completed by it, in order. */
  public push(chunk: Buffer): ChildLine[] {
    const lines: ChildLine[] = [];
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(newline, start);
      const stop = end === -1 ? chunk.length : end;
      if (this.#delegating) {
        lines.push(...this.#framer.push(chunk.subarray(start, end === -1 ? stop : end + 1)));
        if (end !== -1) this.#delegating = false;
      } else if (this.#size + (stop - start) > this.#framer.maxLineBytes) {
        // Over the cap: the framer takes the line from its start and drops it.
        for (const part of this.#parts) lines.push(...this.#framer.push(part));
        this.#reset();
        lines.push(...this.#framer.push(chunk.subarray(start, end === -1 ? stop : end + 1)));
        this.#delegating = end === -1;
      } else if (end === -1) {
        this.#parts.push(chunk.subarray(start));
        this.#size += chunk.length - start;
      } else {
        const piece = chunk.subarray(start, end);
        const line = this.#size === 0 ? piece : Buffer.concat([...this.#parts, piece]);
        this.#reset();
        const answer = scanChildAnswer(line, this.#reports);
        if (answer !== undefined) lines.push({ kind: 'answer', answer });
        else lines.push(...this.#framer.push(Buffer.concat([line, newlineBytes])));
      }
      if (end === -1) break;
      start = end + 1;
    }
    return lines;
  }

  #reset(): void {
    this.#parts = [];
    this.#size = 0;
  }
}
