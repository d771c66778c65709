import TurndownService from 'turndown';

let service: TurndownService | undefined;

/**
 * `html` as Markdown (turndown, ATX headings, fenced code): `<b>bold</b>` ⇒ `**bold**`. Scripts,
 * styles and `<noscript>` are dropped (widget and plot HTML is mostly script). Pure apart from
 * the shared converter it creates once.
 */
export function htmlToMarkdown(html: string): string {
  service ??= createService();
  return service.turndown(html).trim();
}

function createService(): TurndownService {
  const created = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  created.remove(['script', 'style', 'noscript']);
  return created;
}
