/**
 * The HTML a page starts from: no data of the notebook (the script fetches it), so nothing from a
 * notebook is ever put into this document by the server. `notebookId` is checked by the caller
 * (a UUID) before it is written into the attribute.
 */
export function renderPageShell(notebookId: string | undefined): string {
  const title = notebookId === undefined ? 'Notebooks in runtimed' : `Notebook ${notebookId}`;
  const data = notebookId === undefined ? '' : ` data-notebook="${notebookId}"`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="/assets/live-page.css">
<script src="/assets/live-page.js" defer></script>
</head>
<body${data}>
<header><h1 id="title">${title}</h1><p id="status">connecting…</p><p id="peers"></p></header>
<main id="content"></main>
</body>
</html>
`;
}
