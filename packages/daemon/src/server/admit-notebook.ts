import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import {
  checkWire,
  describeWireValue,
  type WireClientContext,
  type WireNotebookMode,
  wireNotebookHandshakeSchemas,
} from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { KernelClient } from '../room/kernel-launcher.js';
import type { Admission, RoomCatalog } from '../room/room-catalog.js';

/** A notebook handshake let in: the room (held until the peer joined) and the peer's identity. */
export interface NotebookAdmission {
  readonly admission: Admission;
  readonly peer: { readonly id: string; readonly label: string };
}

/** A client context from the wire as the launcher takes it (a relative `cwd` is not one). */
export function kernelClientOf(client: WireClientContext | undefined): KernelClient | undefined {
  if (client === undefined) return undefined;
  return {
    ...(client.env === undefined ? {} : { env: client.env }),
    ...(client.cwd !== undefined && isAbsolute(client.cwd) ? { cwd: client.cwd } : {}),
  };
}

/** Checks a notebook handshake against the schema of its `mode` (`bad_request` naming the field) and admits it. */
export async function admitNotebook(catalog: RoomCatalog, frame: Record<string, unknown>): Promise<NotebookAdmission> {
  const mode = frame.mode;
  if (typeof mode !== 'string' || !Object.hasOwn(wireNotebookHandshakeSchemas, mode)) {
    throw new DaemonError(
      'badRequest',
      `Unknown notebook mode ${describeWireValue(mode)}: use 'open', 'attach' or 'create'`,
    );
  }
  const checked = checkWire(wireNotebookHandshakeSchemas[mode as WireNotebookMode], frame);
  if (!checked.ok) throw new DaemonError('badRequest', checked.message);
  const handshake = checked.value;
  const peer = { id: randomUUID(), label: handshake.peer_label };
  switch (handshake.mode) {
    case 'open':
      return { admission: await catalog.open(handshake.path, kernelClientOf(handshake.client)), peer };
    case 'attach':
      return { admission: await catalog.attach(handshake.notebook_id, kernelClientOf(handshake.client)), peer };
    case 'create':
      return {
        admission: await catalog.create({
          ...(handshake.runtime === undefined ? {} : { runtime: handshake.runtime }),
          ...(handshake.kernel === undefined ? {} : { kernel: handshake.kernel }),
          workingDir: handshake.working_dir ?? '',
          ephemeral: handshake.ephemeral !== false,
          ...(handshake.client === undefined ? {} : { client: kernelClientOf(handshake.client) }),
        }),
        peer,
      };
  }
}
