const daemonMarker = '(daemon ';

/** Prefix of the banner text item: `[nteract] <message>\n`. */
export const bannerPrefix = '[nteract] ';

/**
 * The daemon version a child reports in `serverInfo.title` (`"nteract (daemon 2.3.2+abc1234)"`):
 * the text after `"(daemon "` up to the last `)`, trimmed. `undefined` when the title is absent,
 * has no marker or closing parenthesis after it, or the version is empty. Pure.
 */
export function daemonVersionFromTitle(title: string | null | undefined): string | undefined {
  if (typeof title !== 'string') return undefined;
  const start = title.indexOf(daemonMarker);
  if (start === -1) return undefined;
  const rest = title.slice(start + daemonMarker.length);
  const end = rest.lastIndexOf(')');
  if (end === -1) return undefined;
  const version = rest.slice(0, end).trim();
  return version.length > 0 ? version : undefined;
}

/** What a restart changed, as far as the proxy knows. */
export interface RestartBannerInput {
  /** Daemon version reported by the previous child, if it reported one. */
  readonly previousVersion: string | undefined;
  /** Daemon version reported by the new child, if it reported one. */
  readonly newVersion: string | undefined;
  /** Whether a rejoin target was handed to the new child. */
  readonly handedOff: boolean;
}

/**
 * The banner after a restart: `Daemon upgraded (<old> → <new>)` when both versions are known and
 * differ (compared as plain strings), else `MCP server restarted`; with `, session reconnected`
 * appended when a target was handed off. That suffix says a rejoin was *requested*; it does not
 * say the notebook is ready. Pure.
 */
export function restartBanner(input: RestartBannerInput): string {
  const { previousVersion, newVersion, handedOff } = input;
  const upgraded = previousVersion !== undefined && newVersion !== undefined && previousVersion !== newVersion;
  const headline = upgraded ? `Daemon upgraded (${previousVersion} → ${newVersion})` : 'MCP server restarted';
  return handedOff ? `${headline}, session reconnected` : headline;
}

/** The parts of a `tools/call` result a banner looks at. */
export interface BannerCarrier {
  readonly content?: unknown;
  readonly isError?: unknown;
}

/**
 * Holds at most one pending banner (a newer one replaces it) and delivers it once, as a new first
 * text item `[nteract] <message>\n` of the next successful tool result.
 * Guarantees: delivered at most once; never added to an error result (`isError: true`) or to a
 * result whose `content` is not an array, and such results leave it queued; results are never
 * mutated. Pure: no I/O.
 */
export class BannerQueue {
  #pending: string | undefined;

  /** Queues `message`, replacing any banner not yet delivered. An empty message clears the queue. */
  public queue(message: string): void {
    this.#pending = message.length > 0 ? message : undefined;
  }

  /** The banner waiting for delivery, if any. */
  public pending(): string | undefined {
    return this.#pending;
  }

  /** Removes and returns the pending banner (e.g. for the `reconnect` tool's own answer). */
  public take(): string | undefined {
    const message = this.#pending;
    this.#pending = undefined;
    return message;
  }

  /**
   * A copy of `result` with the pending banner as its first content item, consuming the banner;
   * `result` itself when nothing is pending or the result cannot carry it (see the class).
   */
  public prependTo<R extends BannerCarrier>(result: R): R {
    if (this.#pending === undefined || result.isError === true) return result;
    const existing = result.content;
    if (existing !== undefined && !Array.isArray(existing)) return result;
    const content: readonly unknown[] = existing ?? [];
    const item = { type: 'text', text: `${bannerPrefix}${this.#pending}\n` };
    this.#pending = undefined;
    return { ...result, content: [item, ...content] };
  }
}
