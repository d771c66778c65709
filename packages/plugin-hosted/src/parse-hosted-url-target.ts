import { CoreError, type HostedUrlTarget, SecretToken } from '@nteract-mcp/core';
import { hostedRouteOf } from './hosted-route-of.js';

/** Where a hosted URL is parsed from. */
export interface HostedUrlParseContext {
  /** Token for URLs without `?token=` (usually `JUPYTER_TOKEN`). */
  readonly defaultHostedToken?: string;
}

/**
 * A Jupyter Server notebook URL: `http(s)://host[:port][/base]/{lab/tree|doc/tree|notebooks|tree}/path.ipynb`
 * (also `lab/workspaces/<name>/tree/…`, see {@link hostedRouteOf}).
 * The token comes from `?token=` or `context.defaultHostedToken` and is kept in a {@link SecretToken};
 * the identity URL carries no credentials, query or fragment and uses the `lab/tree` route.
 * Error messages never repeat the raw URL, since it may hold a token.
 */
export function parseHostedUrlTarget(raw: string, context: HostedUrlParseContext): HostedUrlTarget {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new CoreError('invalidTarget', 'Hosted notebook URL is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CoreError('invalidTarget', `Hosted notebook URL must use http or https, not '${url.protocol}'.`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new CoreError(
      'invalidTarget',
      `Hosted notebook URL for ${url.host} carries a user name or password; pass the Jupyter token as ?token=… or in JUPYTER_TOKEN instead.`,
    );
  }
  const route = hostedRouteOf(url.pathname);
  const encodedPath = route ? route.rest.replace(/\/+$/, '') : '';
  let notebookPath = '';
  try {
    notebookPath = encodedPath.split('/').filter(Boolean).map(decodeURIComponent).join('/');
  } catch {
    notebookPath = '';
  }
  if (!route || !notebookPath.endsWith('.ipynb') || notebookPath.split('/').some((part) => part === '..')) {
    throw new CoreError(
      'invalidTarget',
      `Hosted URL ${url.origin}${url.pathname} does not name a notebook. Expected http(s)://host[:port][/base]/lab/tree/<path>.ipynb (or /doc/tree/…, /notebooks/…, /tree/…).`,
    );
  }
  const serverUrl = `${url.origin}${route.basePath}`;
  const identityPath = notebookPath.split('/').map(encodeURIComponent).join('/');
  const tokenText = url.searchParams.get('token') ?? context.defaultHostedToken;
  return Object.freeze({
    kind: 'hosted-url',
    url: `${serverUrl}lab/tree/${identityPath}`,
    serverUrl,
    notebookPath,
    token: tokenText ? new SecretToken(tokenText) : undefined,
  });
}
