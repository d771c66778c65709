import { type ChildToolContribution, defineChildTool, errorResult, SessionSlot, textResult } from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import * as z from 'zod';
import { RuntimedDaemonPort } from './runtimed-daemon-port.js';

/**
 * `show_notebook`: an address of the daemon's web page for a notebook (the active one, or one
 * given by id), where the person beside the agent watches it live. It is a launch address: it
 * opens the page once, within an hour (its code is in the fragment), and each call gives a new
 * one. It is only in this tool's answer, which the user asked for; no token ever is. A daemon too
 * old to give launch addresses gets an error, never an address built from its token.
 */
@injectable()
export class ShowNotebookTool implements ChildToolContribution {
  public readonly id = 'local-daemon.show-notebook';
  public readonly specificationVersion = 'v1';

  public constructor(
    @inject(SessionSlot) private readonly slot: SessionSlot,
    @inject(RuntimedDaemonPort) private readonly daemon: RuntimedDaemonPort,
  ) {}

  public tools() {
    return [
      defineChildTool({
        name: 'show_notebook',
        description:
          'An address of a live page of the notebook in the local daemon (the active one, or notebook_id), for the person working with you: they see every cell and output as it changes. Give it to the user; it opens the page once, within an hour, and only on this machine (call show_notebook again for a new one).',
        inputSchema: z.object({
          notebook_id: z.string().optional().describe('A notebook open in the daemon; default the active one.'),
        }),
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        handler: async ({ notebook_id }) => {
          const notebookId = notebook_id?.trim().toLowerCase() ?? this.localActiveNotebook();
          if (notebookId === undefined) {
            return errorResult(
              'No notebook of the local daemon is active: give notebook_id, or connect_notebook / create_notebook first.',
            );
          }
          if (notebook_id !== undefined) {
            const rooms = await this.daemon.listRooms();
            if (!rooms.some((room) => room.notebookId === notebookId)) {
              return errorResult(
                `Notebook ${notebookId} is not open in the local daemon (list_active_notebooks lists them).`,
              );
            }
          }
          const page = await this.daemon.page(notebookId);
          if (!page) return errorResult('The local daemon serves no web page (it was started with --no-page).');
          if (page.launchUrl === undefined) {
            return errorResult(
              "The local daemon is older than one-time page addresses and cannot give a safe address to its page. Once it runs this version (after a restart, which stops its kernels: 'runtimed stop', then 'runtimed start'), show_notebook gives one.",
            );
          }
          return textResult(
            `${page.launchUrl}\nOpen it in a browser on this machine to watch the notebook live. The address opens the page once, within an hour; call show_notebook again for a new one.`,
          );
        },
      }),
    ];
  }

  /** The active notebook when it is the daemon's (its handle carries the daemon's incarnation). */
  private localActiveNotebook(): string | undefined {
    const active = this.slot.active;
    return active?.handle.daemonIncarnation === undefined ? undefined : active.handle.notebookId;
  }
}
