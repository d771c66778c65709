import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  type Clock,
  type JsonRpcId,
  type JsonRpcMessage,
  type Logger,
  readSessionReport,
  type SessionReport,
  sessionReportMetaKey,
} from '@nteract-mcp/core';
import { quoteClientText } from '@nteract-mcp/foundation';
import { type ChildConnection, parseAnswer } from './child-connection.js';
import type { InFlightRequest, InFlightRequests } from './in-flight-requests.js';
import type { ProxyStatus } from './proxy-status.js';
import type { ScannedAnswer } from './scan-child-answer.js';
import { type ProxyWireError, toProxyWireError } from './to-proxy-wire-error.js';
import type { ToolListCache } from './tool-list-cache.js';
import type { WriteTurn } from './turn-writer.js';
import type { RelayedLine, UpstreamWriter } from './upstream-writer.js';
import type { BannerQueue } from './version-banner.js';

type Pending = InFlightRequest<ChildConnection>;

export interface ChildAnswerRelayOptions {
  /** The ledger of forwarded requests: an answer goes to the request it takes from there, once. */
  readonly requests: InFlightRequests<ChildConnection>;
  readonly writer: UpstreamWriter;
  /** The span the proxy's reads open: what is learned from a relayed answer is recorded after its write. */
  readonly turn: WriteTurn;
  /** The restart banner, appended to the next `tools/call` result that can carry it. */
  readonly banner: BannerQueue;
  /** What the proxy adds to the child's `session_status`. */
  readonly status: ProxyStatus;
  readonly tools: ToolListCache;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The opened upstream era sends every result as it is (see `UpstreamHandshake.resultsAsIs`). */
  readonly resultsAsIs: () => boolean;
  /** A tool result of `child` carried a session report (the proxy's only source of what the session holds). */
  readonly onReport: (child: ChildConnection, report: SessionReport) => void;
  /**
   * A child's successful result to `pending` went to the client (after its write): `result` as
   * parsed, or `undefined` when it was passed on unread (see {@link readsResult}).
   */
  readonly onAnswered: (pending: Pending, result: Record<string, unknown> | undefined) => void;
  /** Whether {@link onAnswered} needs the result of the answer to `pending` (it is then parsed, never passed through unread). */
  readonly readsResult?: (pending: Pending) => boolean;
}

/**
 * Every answer to a forwarded request (one in the ledger of {@link InFlightRequests}), from a
 * child or from the proxy itself, goes through here: it is where each gets exactly one answer
 * ({@link reply} takes it from the ledger first, and a request already answered gets nothing
 * more). Requests the proxy answers at once, without forwarding them, are not its business.
 *
 * A child's successful answer goes on one of two ways:
 * - **passed through**: when nothing in it changes on the way (the era sends results as they are,
 *   no banner is due, the proxy adds nothing to the method and reads nothing of it), a successful
 *   answer the child connection scanned without parsing ({@link relayScanned}) leaves as the
 *   child's own bytes, only its id replaced by the client's; its session report is recorded after
 *   the write;
 * - **decorated**: otherwise it is parsed and the proxy adds what it adds — the restart banner
 *   (any `tools/call` result), its supervision section (`session_status`), the known list and
 *   `reconnect` (`tools/list`) — and writes it anew; a parsed answer the proxy changed nothing in
 *   still goes out as the child's bytes when its id is where the MCP SDK puts it.
 *
 * An error answer of the child is passed on (a cold-start `tools/list` gets the known list
 * instead); a result that is not an object is answered with an internal error. A fault while
 * relaying answers the request with an internal error and never stops the proxy.
 */
export class ChildAnswerRelay {
  readonly #options: ChildAnswerRelayOptions;
  /** The session report value relayed last, as the answer scan parsed it, and what reading it gave. */
  #lastReportValue: unknown;
  #lastReportRead: SessionReport | undefined;

  public constructor(options: ChildAnswerRelayOptions) {
    this.#options = options;
  }

  /**
   * A successful answer of `child`, as its connection scanned it (not parsed): passed through when
   * nothing in it changes, else parsed and relayed as {@link relayParsed} does.
   */
  public relayScanned(child: ChildConnection, answer: ScannedAnswer): void {
    const { requests, writer, turn, logger } = this.#options;
    const pending = requests.sentAs(child, answer.id);
    try {
      if (pending === undefined || !this.#passesThrough(child, pending)) {
        this.#relay(child, parseAnswer(answer), answer.line);
        return;
      }
      if (!requests.take(pending)) return;
      writer.writeRelayed(answer, pending.upstreamId);
      // The client has its answer first; what the proxy learns from it is recorded right after.
      turn.afterWrites(() => {
        try {
          if (pending.toolName !== undefined && answer.sessionReport !== undefined) {
            this.#observeReportValue(child, answer.sessionReport);
          }
          this.#options.onAnswered(pending, undefined);
          this.#logAnswered(pending, answer.isError ? 'isError' : 'ok', undefined);
        } catch (error) {
          logger.error('recording a relayed answer failed', { error });
        }
      });
    } catch (error) {
      this.#relayFailed(pending, error);
    }
  }

  /** An answer of `child` (result or error), parsed, with the line it came on when there was one. */
  public relayParsed(child: ChildConnection, message: JsonRpcMessage, line?: Buffer): void {
    try {
      this.#relay(child, message, line);
    } catch (error) {
      this.#relayFailed(this.#options.requests.sentAs(child, (message as { id?: unknown }).id), error);
    }
  }

  /**
   * Answers `pending` with `error`, else `result`, unless it was answered already; `relayed` is
   * the child's line the result came from when nothing in it was changed.
   */
  public reply(pending: Pending, result: unknown, error: ProxyWireError | undefined, relayed?: RelayedLine): void {
    if (!this.#options.requests.take(pending)) return;
    this.#logAnswered(
      pending,
      error ? 'error' : (result as { isError?: unknown }).isError === true ? 'isError' : 'ok',
      error?.code,
    );
    this.#options.writer.write(
      error
        ? { jsonrpc: '2.0', id: pending.upstreamId, error }
        : ({ jsonrpc: '2.0', id: pending.upstreamId, result } as JsonRpcMessage),
      relayed,
    );
  }

  /**
   * Answers `pending` with `error`; a cold-start `tools/list` gets the known tool list instead
   * (`reconnect` stays callable when the child cannot start).
   */
  public fail(pending: Pending, error: ProxyWireError): void {
    if (pending.fallback) this.serveKnownTools(pending);
    else this.reply(pending, undefined, error);
  }

  /** Answers a `tools/list` with the list known now (cache or built-in) plus `reconnect`. */
  public serveKnownTools(pending: Pending): void {
    const { tools } = this.#options;
    this.reply(pending, { tools: tools.withReconnect(tools.current()) }, undefined);
  }

  /** The answer to `pending` goes to the client as the child wrote it (see {@link relayScanned}). */
  #passesThrough(child: ChildConnection, pending: Pending): boolean {
    return (
      this.#options.resultsAsIs() &&
      this.#options.banner.idle &&
      !this.#answersStatus(child, pending) &&
      pending.request.method !== 'tools/list' &&
      this.#options.readsResult?.(pending) !== true
    );
  }

  /** Whether `pending` calls a tool of `child` that answers its status document (the proxy adds its section). */
  #answersStatus(child: ChildConnection, pending: Pending): boolean {
    return pending.toolName !== undefined && child.statusTools.has(pending.toolName);
  }

  #relay(child: ChildConnection, message: JsonRpcMessage, line: Buffer | undefined): void {
    const id = (message as { id: JsonRpcId }).id;
    const pending = this.#options.requests.sentAs(child, id);
    if (!pending) {
      this.#options.logger.debug('ignoring a child response to no pending request', { id });
      return;
    }
    if ('error' in message) {
      this.fail(pending, message.error);
      return;
    }
    const raw = (message as { result: unknown }).result;
    if (!isRecord(raw)) {
      this.reply(
        pending,
        undefined,
        toProxyWireError({
          kind: 'internal',
          doing: ` while relaying the answer to ${quoteClientText(pending.request.method)}`,
          error: 'the nteract MCP server answered with a result that is not an object',
        }),
      );
      return;
    }
    const result = this.#decorate(child, pending, raw);
    // Nothing added: the child's own bytes go on, under the client's id.
    this.reply(pending, result, undefined, result === raw && line !== undefined ? { line, id } : undefined);
    this.#options.onAnswered(pending, raw);
  }

  /** `result` with what the proxy adds to an answer to `pending`; `result` itself when it adds nothing. */
  #decorate(child: ChildConnection, pending: Pending, raw: Record<string, unknown>): Record<string, unknown> {
    const { banner, status, tools } = this.#options;
    let result = raw;
    if (pending.toolName !== undefined) {
      const report = readSessionReport(result);
      if (report !== undefined) this.#options.onReport(child, report);
      if (this.#answersStatus(child, pending)) result = status.decorate(result, child.handedOff);
      result = banner.appendTo(result);
    }
    if (pending.request.method === 'tools/list') {
      const live = Array.isArray(result.tools) ? (result.tools as Tool[]) : [];
      // An empty live list is never served: the known one is better than `reconnect` alone.
      result = { ...result, tools: tools.withReconnect(live.length > 0 ? live : tools.current()) };
    }
    return result;
  }

  /**
   * Records a session report as a relayed answer carried it (`_meta[sessionReportMetaKey]`, as
   * parsed). The child repeats one report until its session changes and the answer scan hands the
   * same value for the same bytes, so a repeated one is not read again.
   */
  #observeReportValue(child: ChildConnection, value: unknown): void {
    if (value !== this.#lastReportValue) {
      this.#lastReportValue = value;
      this.#lastReportRead = readSessionReport({ _meta: { [sessionReportMetaKey]: value } });
    }
    if (this.#lastReportRead !== undefined) this.#options.onReport(child, this.#lastReportRead);
  }

  #relayFailed(pending: Pending | undefined, error: unknown): void {
    this.#options.logger.error('handling a child message failed', { error });
    if (pending) {
      this.reply(
        pending,
        undefined,
        toProxyWireError({ kind: 'internal', doing: ' while relaying the answer', error }),
      );
    }
  }

  /** One line per answered request: never its arguments or result (they may hold secrets). */
  #logAnswered(pending: Pending, outcome: 'ok' | 'isError' | 'error', code: number | undefined): void {
    const fields: Record<string, unknown> = { method: pending.request.method };
    if (pending.toolName !== undefined) fields.tool = pending.toolName;
    fields.id = pending.upstreamId;
    fields.ms = this.#options.clock.now() - pending.receivedAt;
    fields.outcome = outcome;
    if (code !== undefined) fields.code = code;
    if (pending.resent) fields.resent = true;
    this.#options.logger.debug('forwarded', fields);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
