import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { dirname, extname, resolve, sep } from 'node:path';

/** The image types served from beside a notebook, by file extension. */
const imageTypes: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
};

/** The largest image served from beside a notebook. */
const maxFileBytes = 50 * 1024 * 1024;

/**
 * Answers with an image in the notebook's folder or below it, as a markdown cell names it by a
 * relative path (`![](figures/plot.png)`; `segments`: the path's URL segments): PNG, JPEG, GIF,
 * WebP or SVG only, its real path (symlinks followed) inside the notebook's real folder, at most
 * {@link maxFileBytes}, with `headers` and a CSP that sandboxes it (an SVG's scripts never run,
 * even opened on its own). 404 for anything else, saying why; nothing is read then.
 */
export async function serveNotebookFile(
  response: ServerResponse,
  notebookPath: string | undefined,
  segments: readonly string[],
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  const refuse = (message: string): void => {
    response.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
    response.end(message);
  };
  if (notebookPath === undefined) return refuse('An untitled notebook has no folder: save it to a file first.');
  let relative: string;
  try {
    relative = segments.map((segment) => decodeURIComponent(segment)).join('/');
  } catch {
    return refuse('Not found.');
  }
  const type = imageTypes[extname(relative).toLowerCase()];
  if (type === undefined) return refuse('Only images (PNG, JPEG, GIF, WebP, SVG) beside the notebook are served.');
  try {
    const folder = await realpath(dirname(notebookPath));
    const file = await realpath(resolve(folder, relative));
    const stats = await stat(file);
    if (!file.startsWith(`${folder}${sep}`) || !stats.isFile()) return refuse('Not found beside the notebook.');
    if (stats.size > maxFileBytes) return refuse(`Larger than ${maxFileBytes} bytes: not served.`);
    response.writeHead(200, {
      ...headers,
      'Content-Security-Policy': "sandbox; default-src 'none'; style-src 'unsafe-inline'",
      'Content-Type': type,
      'Content-Length': String(stats.size),
    });
    createReadStream(file)
      .on('error', () => response.destroy())
      .pipe(response);
  } catch {
    refuse('Not found beside the notebook.');
  }
}
