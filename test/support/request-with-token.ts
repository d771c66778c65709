/** An answer of a Jupyter Server or Hub REST API: its status and its body (JSON when it parses, else the text). */
export interface TokenApiAnswer {
  readonly status: number;
  readonly json: unknown;
}

/** One REST request with `Authorization: token <token>` (a Jupyter Server's or a Hub's API). */
export async function requestWithToken(
  url: string | URL,
  token: string,
  method: string,
  body?: unknown,
): Promise<TokenApiAnswer> {
  const response = await fetch(url, {
    method,
    headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: response.status, json };
}
