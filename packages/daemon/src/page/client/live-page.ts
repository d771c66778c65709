import './live-page.css';
import { el } from './element.js';
import { LiveNotebook } from './live-notebook.js';
import { startSession } from './page-session.js';
import { showRoomIndex } from './room-index.js';

/**
 * The live page's script, served as `/assets/live-page.js` (an ES module; the CSP runs nothing
 * inline): first the page's session (from a launch address, or kept), then the notebook page when
 * the shell names a notebook, else the index of the open notebooks. What the first paint does
 * not need (CodeMirror, KaTeX) is imported when first used.
 */
const content = document.getElementById('content') as HTMLElement;
const notebookId = document.body.dataset.notebook;
void startSession().then(
  (refused) => {
    if (refused !== undefined) showRefusal(content, refused);
    else if (notebookId) new LiveNotebook(notebookId, content).start();
    else void showRoomIndex(content);
  },
  (error: unknown) => showRefusal(content, `Could not open the page: ${(error as Error).message ?? error}`),
);

/** The page says plainly why it shows nothing (a spent or expired launch address, no session). */
function showRefusal(content: HTMLElement, message: string): void {
  const status = document.getElementById('status');
  if (status) status.textContent = 'not open to you';
  content.replaceChildren(el('p', { className: 'empty-notebook', textContent: message }));
}
