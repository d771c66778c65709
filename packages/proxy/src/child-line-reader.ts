import { type JsonRpcFrame, JsonRpcLineFramer, type JsonRpcLineFramerOptions } from '@nteract-mcp/core';
import { type ScannedAnswer, type SessionReportCache, scanChildAnswer } from './scan-child-answer.js';

/** What one line of a child became: an answer read without being built, or a frame as the framer makes it. */
export type ChildLine = { readonly kind: 'answer'; readonly answer: ScannedAnswer } | JsonRpcFrame;

/**
 * Splits a child's stdout into lines (core's {@link JsonRpcLineFramer}: its cap, reassembly and
 * errors) and reads each successful answer laid out as the MCP SDK writes it with
 * {@link scanChildAnswer}, so a pass-through answer is never parsed into objects nor decoded into
 * a string. Every other line is framed as the framer frames it. Pure: no I/O.
 */
export class ChildLineReader {
  readonly #framer: JsonRpcLineFramer<ChildLine>;

  public constructor(options: Pick<JsonRpcLineFramerOptions, 'maxLineBytes'> = {}) {
    const reports: SessionReportCache = {};
    this.#framer = new JsonRpcLineFramer<ChildLine>({
      ...options,
      readLine: (line) => {
        const answer = scanChildAnswer(line, reports);
        return answer === undefined ? undefined : { kind: 'answer', answer };
      },
    });
  }

  /** The cap on one line, in bytes. */
  public get maxLineBytes(): number {
    return this.#framer.maxLineBytes;
  }

  /** Feeds the next chunk; returns every line completed by it, in order. */
  public push(chunk: Buffer): ChildLine[] {
    return this.#framer.push(chunk);
  }
}
