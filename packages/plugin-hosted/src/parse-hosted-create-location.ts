import { CoreError, SecretToken } from '@nteract-mcp/core';
import { hostedRouteOf } from './hosted-route-of.js';

/** Where `create_notebook(url=…)` puts a new notebook on a Jupyter Server. */
export interface HostedCreateLocation {
  /** The server's base URL (origin plus base path), without credentials, ending in `/`. */
  readonly serverUrl: string;
  /** The directory on the server (decoded, no leading or trailing slash; `''` for the root). */
  readonly directory: string;
  /** The new notebook's path on the server when the URL names a `.ipynb` file (which must not exist yet). */
  readonly notebookPath: string | undefined;
  readonly token: SecretToken | undefined;
}

/**
 * The `url` of `create_notebook`: a directory on a Jupyter Server
 * (`http(s)://host[:port][/base]/lab/tree/<dir>`, or another route of {@link hostedRouteOf}; the bare server URL is its
 * root directory) or a `.ipynb` path there that does not exist yet. The token comes from
 * `?token=` or `context.defaultHostedToken`. Error messages never repeat the raw URL.
 */
export function parseHostedCreateLocation(
  raw: string,
  context: { readonly defaultHostedToken?: string },
): HostedCreateLocation {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new CoreError('invalidTarget', 'The url for a new hosted notebook is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CoreError(
      'invalidTarget',
      `The url for a new hosted notebook must use http or https, not '${url.protocol}'.`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new CoreError(
      'invalidTarget',
      `The url for a new hosted notebook on ${url.host} carries a user name or password; pass the Jupyter token as ?token=… or in JUPYTER_TOKEN instead.`,
    );
  }
  const pathname = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  const route = hostedRouteOf(pathname);
  const basePath = route ? route.basePath : pathname;
  let parts: string[] = [];
  try {
    parts = route ? route.rest.split('/').filter(Boolean).map(decodeURIComponent) : [];
  } catch {
    parts = ['..'];
  }
  if (parts.some((part) => part === '..' || part === '.' || part.includes('/'))) {
    throw new CoreError(
      'invalidTarget',
      `The url ${url.origin}${url.pathname} does not name a directory on a Jupyter Server. Expected http(s)://host[:port][/base]/lab/tree/<directory> or …/lab/tree/<directory>/<new>.ipynb.`,
    );
  }
  const last = parts[parts.length - 1];
  const isNotebook = last?.endsWith('.ipynb') === true;
  const tokenText = url.searchParams.get('token') ?? context.defaultHostedToken;
  return Object.freeze({
    serverUrl: `${url.origin}${basePath}`,
    directory: (isNotebook ? parts.slice(0, -1) : parts).join('/'),
    notebookPath: isNotebook ? parts.join('/') : undefined,
    token: tokenText ? new SecretToken(tokenText) : undefined,
  });
}
