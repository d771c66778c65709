/**
 * The HTML a page starts from, the same for anyone: no data of the notebook (the script fetches it
 * with the page's session), so nothing from a notebook is ever put into this document by the server. The script is an ES module; `startImports` are the
 * chunks it imports as it starts (names of the build's files), asked for beside it. `notebookId`
 * is checked by the caller (a UUID) before it is written into the attribute.
 */
export function renderPageShell(notebookId: string | undefined, startImports: readonly string[]): string {
  const title = notebookId === undefined ? 'Notebooks in runtimed' : `Notebook ${notebookId}`;
  const data = notebookId === undefined ? '' : ` data-notebook="${notebookId}"`;
  const modules = startImports.map((name) => `\n<link rel="modulepreload" href="/assets/${name}">`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/live-page.css">
<script type="module" src="/assets/live-page.js"></script>${modules}
</head>
<body${data}>
<header class="topbar"><div class="topbar-inner">
<a class="home" href="/" title="All open notebooks">runtimed</a>
<h1 id="title">${title}</h1>
<div id="status" class="status">connecting…</div>
<div id="peers" class="peers" aria-label="In the room"></div>
</div></header>
<main id="content"></main>
<div id="notice" class="notice" role="alert" hidden></div>
</body>
</html>
`;
}
