import { CoreError, type HostedUrlTarget, SecretToken } from '@nteract-mcp/core';

const hostedRoutes = ['/lab/tree/', '/notebooks/', '/tree/'] as const;

/** Where a hosted URL is parsed from. */
export interface HostedUrlParseContext {
  /** Token for URLs without `?token=` (usually `JUPYTER_TOKEN`). */
  readonly defaultHostedToken?: string;
}

/**
 * A Jupyter Server notebook URL: `http(s)://host[:port][/base]/{lab/tree|notebooks|tree}/path.ipynb`.
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
  const route = hostedRoutes
    .map((marker) => ({ marker, index: url.pathname.indexOf(marker) }))
    .filter((candidate) => candidate.index >= 0)
    .sort((a, b) => a.index - b.index)[0];
  const encodedPath = route ? url.pathname.slice(route.index + route.marker.length).replace(/\/+$/, '') : '';
  let notebookPath = '';
  try {
    notebookPath = encodedPath.split('/').filter(Boolean).map(decodeURIComponent).join('/');
  } catch {
    notebookPath = '';
  }
  if (!route || !notebookPath.endsWith('.ipynb') || notebookPath.split('/').some((part) => part === '..')) {
    throw new CoreError(
      'invalidTarget',
      `Hosted URL ${url.origin}${url.pathname} does not name a notebook. Expected http(s)://host[:port][/base]/lab/tree/<path>.ipynb (or /notebooks/…, /tree/…).`,
    );
  }
  const basePath = url.pathname.slice(0, route.index + 1);
  const serverUrl = `${url.origin}${basePath}`;
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
