import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';

/** The MCP generation a connection speaks: `initialize`-based, or per-request negotiation (2026-07-28). */
export type ProtocolEra = 'legacy' | 'native';

/** The client as it names itself (`clientInfo`); used for the peer label. */
export interface ClientIdentity {
  readonly name: string;
  readonly version?: string;
  readonly title?: string;
}

/** A JSON-RPC request as admission sees it: nothing has been locked yet. */
export interface AdmissionRequest {
  readonly method: string;
  readonly params?: unknown;
}

/**
 * - `pass`: not this era's request; ask the next admission.
 * - `probe`: answer it without locking the era (`server/discover`).
 * - `open`: a valid first request of this era; lock the connection to it.
 * - `reject`: this era's request, but invalid; answer with this JSON-RPC error and lock nothing.
 */
export type AdmissionDecision =
  | { readonly kind: 'pass' }
  | { readonly kind: 'probe' }
  | { readonly kind: 'open'; readonly protocolVersion: string; readonly client: ClientIdentity | undefined }
  | { readonly kind: 'reject'; readonly code: number; readonly message: string; readonly data?: unknown };

/**
 * Recognises the first request of one protocol era and decides whether it opens a lifecycle.
 * Guarantees expected of implementations: pure (no I/O, no recovery or daemon work started by a
 * decision); `pass` for anything of another era.
 */
export interface ProtocolAdmission extends Contribution {
  readonly specificationVersion: 'v1';
  readonly era: ProtocolEra;
  admit(request: AdmissionRequest): AdmissionDecision;
}

export const ProtocolAdmission = defineContributionPoint<ProtocolAdmission>('core', 'ProtocolAdmission', ['v1']);

/** `{ name, version?, title? }` from a `clientInfo` value when it carries a string name; else `undefined`. */
export function readClientIdentity(value: unknown): ClientIdentity | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, version, title } = value as Record<string, unknown>;
  if (typeof name !== 'string' || name.length === 0) return undefined;
  return {
    name,
    ...(typeof version === 'string' ? { version } : {}),
    ...(typeof title === 'string' ? { title } : {}),
  };
}
