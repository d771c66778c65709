/**
 * The headers of an output's frame document. Its own CSP, not the page's: the output's scripts and
 * styles run (inline, or from https: CDNs as plotly, bokeh or vega load them), and the `sandbox`
 * directive gives the document an opaque origin even when it is opened on its own (no cookie, no
 * access to the page or the page server's API); only the page itself may frame it. Its links open
 * in a new tab (`allow-popups`, the tab not sandboxed: it is the linked site's own page).
 */
export const outputFrameHeaders: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox; default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' https:; " +
    "style-src 'unsafe-inline' https:; img-src data: blob: https:; font-src data: https:; media-src data: blob: https:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/**
 * Tells the page how tall the document is (the page cannot measure a frame of another origin), each
 * time its size changes.
 */
const reportHeight = `(() => {
  const report = () => parent.postMessage({ runtimedFrameHeight: document.documentElement.getBoundingClientRect().height }, '*');
  new ResizeObserver(report).observe(document.documentElement);
  addEventListener('load', report);
})();`;

/**
 * The document of an HTML or SVG output's frame: the output's markup as the kernel produced it (it
 * runs in the sandbox: see {@link outputFrameHeaders}), with a base style and the height report.
 */
export function renderOutputFrame(markup: string): string {
  return `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<base target="_blank">
<style>html,body{margin:0;padding:0;background:#fff}body{padding:4px 10px;font:14px/1.45 system-ui,sans-serif;color:#1f2328;overflow-y:hidden}table{border-collapse:collapse;font-size:13px}th,td{padding:4px 8px;border-bottom:1px solid #e1e4e8;text-align:right}th{font-weight:600}tbody tr:nth-child(odd){background:#f6f8fa}svg{max-width:100%;height:auto}</style>
<script>${reportHeight}</script>
</head>
<body>
${markup}
</body>
</html>
`;
}
