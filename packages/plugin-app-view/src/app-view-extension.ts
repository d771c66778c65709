import type { ClientExtension } from '@nteract-mcp/core';
import { cellsViewHtml } from './view/cells-view-html.js';
import { viewContentOf } from './view-content.js';

/** The MCP Apps extension (SEP-1865), as clients name it in their capabilities. */
export const uiExtension = 'io.modelcontextprotocol/ui';

/** The view's resource. */
export const appViewResourceUri = 'ui://nteract-mcp/cells.html';

/** MCP Apps' MIME type of an HTML view. */
const appMimeType = 'text/html;profile=mcp-app';

type ShownCall = Parameters<ClientExtension['structuredContent']>[0];

/**
 * The view of the cells a tool touched: a self-contained HTML page (inline script and styles, no
 * network: its content security policy declares no domain) that renders the `structuredContent`
 * this extension gives the results of the tools that show cells, and calls the tools again
 * through the host when the person clicks.
 */
export class AppViewExtension implements ClientExtension {
  public readonly id = 'app-view.cells';
  public readonly specificationVersion = 'v1';
  public readonly extension = uiExtension;
  public readonly settings = Object.freeze({ mimeTypes: [appMimeType] });
  public readonly resources = Object.freeze([
    {
      uri: appViewResourceUri,
      name: 'nteract cells',
      description: 'The cells a notebook tool touched, with their outputs (MCP Apps view)',
      mimeType: appMimeType,
      read: () => ({
        text: cellsViewHtml,
        meta: { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } },
      }),
    },
  ]);

  public toolMeta(): Readonly<Record<string, unknown>> {
    // The nested key is the specification's; the flat one is what hosts still read.
    return { ui: { resourceUri: appViewResourceUri }, 'ui/resourceUri': appViewResourceUri };
  }

  public async structuredContent(call: ShownCall): Promise<Record<string, unknown> | undefined> {
    return (await viewContentOf(call)) as unknown as Record<string, unknown> | undefined;
  }
}
