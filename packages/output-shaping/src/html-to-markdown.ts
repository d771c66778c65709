import { createRequire } from 'node:module';
import type TurndownService from 'turndown';

// Loaded on the first HTML output, not at start-up: turndown and its DOM are some fifty modules
// that a child restarted after a crash would otherwise load before it can answer.
const loadDependency = createRequire(import.meta.url);
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
  const Turndown = loadDependency('turndown') as typeof TurndownService;
  const created = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  created.remove(['script', 'style', 'noscript']);
  return created;
}
