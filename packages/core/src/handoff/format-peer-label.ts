/** The display label before any client has named itself (the original server's default). */
export const defaultPeerDisplayLabel = 'Inkwell';

/** The parts of `clientInfo` a peer label is made of. */
export interface PeerLabelClient {
  readonly name?: string;
  readonly title?: string;
}

/**
 * How this child appears to other peers of a room:
 * `<clientInfo.title ?? clientInfo.name ?? 'Inkwell'> agent:<slug>:<session>`, where the slug is
 * the lowercased client name with every run of characters outside `[a-z0-9]` turned into `-`
 * (`agent` when nothing is left). Empty strings count as absent. Attribution, not authorization.
 */
export function formatPeerLabel(client: PeerLabelClient | undefined, session: string): string {
  const title = nonEmpty(client?.title);
  const name = nonEmpty(client?.name);
  const display = title ?? name ?? defaultPeerDisplayLabel;
  const slug =
    (name ?? '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'agent';
  return `${display} agent:${slug}:${session}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
