/**
 * The credential channel between the proxy (`nteract-mcp`) and each child it starts: a private
 * pipe on the child's file descriptor {@link credentialChannelFd}, announced to the child by
 * `handoffEnvironment.credentialFd`. It carries the tokens of hosted notebook servers that were
 * given only inside a URL (`?token=`), so a restarted child can rejoin such a notebook: the
 * rejoin target itself never carries credentials (`rejoinTargetWithoutCredentials`).
 *
 * One JSON object per line, both ways:
 * - proxy → child, once, first: `{"kind":"handed","credentials":[{"scope":…,"token":…}, …]}`,
 *   every token the proxy holds (possibly none);
 * - child → proxy, any time after: `{"kind":"keep","scope":…,"token":…}` when the child learns a
 *   token for a scope (or a new one).
 *
 * A scope is what a token opens: a hosted server's base URL without credentials
 * (`http://host:port/base/`). Tokens exist only in the two processes' memory and in this pipe:
 * never in an environment variable, a file, a log line or a message to the MCP client.
 */

/** The child's file descriptor of the channel (the first one after stdin, stdout, stderr). */
export const credentialChannelFd = 3;

/** One token and what it opens. */
export interface ChannelCredential {
  readonly scope: string;
  readonly token: string;
}

/** The child's store the channel fills (core's `KeptCredentials`). */
export interface CredentialChannelStore {
  /** Takes the tokens the proxy handed over, and from then on sends each token it keeps with `send`. */
  connect(handed: readonly ChannelCredential[], send: (credential: ChannelCredential) => void): void;
}

export type CredentialChannelMessage =
  | { readonly kind: 'handed'; readonly credentials: readonly ChannelCredential[] }
  | ({ readonly kind: 'keep' } & ChannelCredential);

/** One line of the channel (with its newline). Pure. */
export function encodeCredentialMessage(message: CredentialChannelMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/** The message of one line, or `undefined` for anything that is not one (never throws). Pure. */
export function decodeCredentialMessage(line: string): CredentialChannelMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (record.kind === 'keep') {
    const credential = readCredential(record);
    return credential ? { kind: 'keep', ...credential } : undefined;
  }
  if (record.kind === 'handed' && Array.isArray(record.credentials)) {
    const credentials = record.credentials.map(readCredential);
    if (credentials.some((credential) => credential === undefined)) return undefined;
    return { kind: 'handed', credentials: credentials as ChannelCredential[] };
  }
  return undefined;
}

function readCredential(value: unknown): ChannelCredential | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { scope, token } = value as Record<string, unknown>;
  if (typeof scope !== 'string' || scope === '' || typeof token !== 'string' || token === '') return undefined;
  return { scope, token };
}
