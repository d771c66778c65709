import './live-page.css';
import { LiveNotebook } from './live-notebook.js';
import { showRoomIndex } from './room-index.js';

/**
 * The live page's script, served as `/assets/live-page.js` (an ES module; the CSP runs nothing
 * inline): the notebook page when the shell names a notebook, else the index of the open
 * notebooks. What the first paint does not need (CodeMirror, KaTeX) is imported when first used.
 */
const content = document.getElementById('content') as HTMLElement;
const notebookId = document.body.dataset.notebook;
if (notebookId) new LiveNotebook(notebookId, content).start();
else void showRoomIndex(content);
