import { notebookIdPattern } from '@nteract-mcp/foundation';
import * as z from 'zod';
import { describeWireValue } from './describe-wire-issue.js';
import { wireClientContextSchema } from './wire-client-context.js';

const peerLabelMessage = "Field 'peer_label' must be a non-empty string of at most 256 characters";

/** How a peer appears to the room's other peers: a non-blank string of at most 256 characters. */
export const wirePeerLabelSchema = z
  .string({ error: peerLabelMessage })
  .refine((label) => label.trim().length > 0 && label.length <= 256, { error: peerLabelMessage });

/**
 * A notebook's id as a client names it: the UUID the daemon gave it (foundation's
 * `notebookIdPattern`; every room, registry binding and persisted untitled notebook is keyed by
 * one). Anything else is refused before it can reach a lookup or a file path built from it.
 */
export const wireNotebookIdPattern = notebookIdPattern;

/** {@link wireNotebookIdPattern} as the wire schema of a `notebook_id` field. */
export const wireNotebookIdSchema = z.string().regex(wireNotebookIdPattern, {
  error: (issue) => `Field 'notebook_id' must be a notebook UUID, got ${describeWireValue(issue.input)}`,
});

/** The first message of a control connection. */
export const wireControlHandshakeSchema = z.object({ channel: z.literal('control') });

/**
 * The notebook handshakes by `mode`: `open` a file's room by path, `attach` to a known notebook
 * by its UUID (attach-only, creates nothing), `create` a new untitled notebook (`ephemeral`
 * defaults to `true`). `create` runs the kernelspec named `kernel` (see `list_kernels`), else the
 * installed kernel of the language `runtime` (`python`, `r`, ...), else `python3`; a kernel that is
 * not installed is refused (`bad_request`, naming the installed ones). Each mode may carry the
 * opening `client`'s context (see `wireClientContextSchema`): the environment and working directory
 * the room's kernel starts with.
 */
/**
 * What every notebook handshake may add:
 * - `blob_references`, that this peer reads output values the daemon keeps in its blob store from
 *   there (see `BlobReference`): the daemon then sends a reference in place of each such value and
 *   names the blob directory in `connected`. Without it (and from daemons before references went on
 *   the wire) every value travels as its text.
 * - `source_edits`, that this peer applies a source edit to its copy of the cell: the daemon then
 *   tells it a source edit as `cell_source_set` and answers its own as `cell_source` (the cell's
 *   source fields, see `wireCellSourceSchema`), so the cell's outputs do not travel with every
 *   keystroke. Without it (and from daemons before source edits) a source edit is told as
 *   `cell_updated` and answered as `cell`, the whole cell: a peer that declares it reads both.
 * - `comments`, that this peer reads comment threads (see `wire-comment.ts`): the daemon then sends
 *   it the `comment_thread` broadcasts. Its comment requests are served whether or not it declared it.
 */
const notebookPeerOptions = {
  peer_label: wirePeerLabelSchema,
  client: wireClientContextSchema.optional(),
  blob_references: z.literal(true).optional(),
  source_edits: z.literal(true).optional(),
  comments: z.literal(true).optional(),
};

export const wireNotebookHandshakeSchemas = {
  open: z.object({
    channel: z.literal('notebook'),
    mode: z.literal('open'),
    path: z.string(),
    ...notebookPeerOptions,
  }),
  attach: z.object({
    channel: z.literal('notebook'),
    mode: z.literal('attach'),
    notebook_id: wireNotebookIdSchema,
    ...notebookPeerOptions,
  }),
  create: z.object({
    channel: z.literal('notebook'),
    mode: z.literal('create'),
    runtime: z.string().optional(),
    kernel: z.string().optional(),
    working_dir: z.string().optional(),
    ephemeral: z.boolean().optional(),
    ...notebookPeerOptions,
  }),
} as const;

/** The notebook modes, in the order error messages name them. */
export const wireNotebookModes = ['open', 'attach', 'create'] as const;
export type WireNotebookMode = (typeof wireNotebookModes)[number];

export const wireNotebookHandshakeSchema = z.discriminatedUnion('mode', [
  wireNotebookHandshakeSchemas.open,
  wireNotebookHandshakeSchemas.attach,
  wireNotebookHandshakeSchemas.create,
]);
export type WireNotebookHandshake = z.infer<typeof wireNotebookHandshakeSchema>;

/** The first message of a connection: which channel, and for notebooks which room. */
export const runtimedHandshakeSchema = z.union([wireControlHandshakeSchema, wireNotebookHandshakeSchema]);
export type RuntimedHandshake = z.infer<typeof runtimedHandshakeSchema>;
