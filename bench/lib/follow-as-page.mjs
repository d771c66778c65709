// The live page's event stream, followed from a benchmark as the page follows it: the launch
// address traded for a session, then the stream (a POST with the session) whose bytes are counted.

/**
 * Follows the room of `pageUrl` (what `show_notebook` answers) as a person's page named `name`;
 * `counter.bytes` grows with every byte of the stream, `stop()` ends it.
 */
export async function followAsPage(pageUrl, name = 'bench') {
  const url = new URL(pageUrl);
  const launch = new URLSearchParams(url.hash.slice(1)).get('launch');
  const notebookId = /\/notebooks\/([^/?#]+)/.exec(url.pathname)?.[1];
  const opened = await fetch(`${url.origin}/api/session`, {
    method: 'POST',
    headers: { origin: url.origin, 'content-type': 'application/json' },
    body: JSON.stringify({ launch }),
  });
  if (!opened.ok) throw new Error(`the page's launch address answered ${opened.status}: ${await opened.text()}`);
  const { session } = await opened.json();
  const controller = new AbortController();
  const response = await fetch(`${url.origin}/api/notebooks/${notebookId}/events`, {
    method: 'POST',
    headers: { origin: url.origin, authorization: `Bearer ${session}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
    signal: controller.signal,
  });
  if (!response.ok || !response.body) throw new Error(`the page's event stream answered ${response.status}`);
  const counter = { bytes: 0 };
  const reader = response.body.getReader();
  (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      counter.bytes += value.byteLength;
    }
  })().catch(() => undefined);
  return { counter, stop: () => controller.abort() };
}
