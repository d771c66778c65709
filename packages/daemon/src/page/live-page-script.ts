/**
 * The page's script, served as `/assets/live-page.js` (the CSP runs nothing inline). On the index
 * it lists the open notebooks; on a notebook page it renders the notebook and follows the room's
 * event stream, reading the notebook again after each change (the browser reconnects the stream
 * by itself after a daemon restart). Notebook content is only ever set as text, or as the
 * `srcdoc` of a sandboxed frame without same-origin (HTML and SVG outputs).
 */
export const livePageScript = String.raw`'use strict';
(() => {
  const notebookId = document.body.dataset.notebook;
  const content = document.getElementById('content');
  const status = document.getElementById('status');
  const el = (tag, props = {}, children = []) => {
    const node = document.createElement(tag);
    Object.assign(node, props);
    for (const child of children) node.append(child);
    return node;
  };
  const text = (value) => (Array.isArray(value) ? value.join('') : String(value ?? ''));
  const plain = (value) => text(value).replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');

  function renderOutput(output) {
    if (output.output_type === 'stream') return el('pre', { className: 'stream ' + (output.name || ''), textContent: plain(output.text) });
    if (output.output_type === 'error') return el('pre', { className: 'error', textContent: plain((output.traceback || []).join('\n')) || output.ename + ': ' + output.evalue });
    const data = output.data || {};
    for (const type of ['image/png', 'image/jpeg']) {
      if (data[type]) return el('img', { src: 'data:' + type + ';base64,' + text(data[type]).trim(), alt: type });
    }
    if (data['text/html'] || data['image/svg+xml']) {
      const frame = el('iframe', { className: 'rich' });
      frame.setAttribute('sandbox', '');
      frame.srcdoc = text(data['text/html'] || data['image/svg+xml']);
      return frame;
    }
    return el('pre', { className: 'result', textContent: plain(data['text/plain']) });
  }

  // A person's requests go through the room as this page's own peer (named in the stream's hello).
  let peerId;
  let sent = 0;
  async function send(request) {
    const answer = await fetch('/api/notebooks/' + notebookId + '/requests', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Runtimed-Peer': peerId || '' },
      body: JSON.stringify({ ...request, idempotency_key: 'page-' + peerId + '-' + ++sent }),
    });
    if (!answer.ok) status.textContent = 'not done: ' + (await answer.text());
    return answer.ok ? answer.json() : undefined;
  }

  function button(label, onClick) {
    const node = el('button', { type: 'button', textContent: label });
    node.addEventListener('click', onClick);
    return node;
  }

  function renderCell(cell, index) {
    const head = cell.cell_type === 'code' ? '[' + (cell.execution_count ?? ' ') + ']' : '';
    const source = el('textarea', { className: 'source', value: text(cell.source), spellcheck: false });
    source.rows = Math.max(2, source.value.split('\n').length);
    const save = () => (source.value === text(cell.source) ? Promise.resolve() : send({ type: 'update_cell', cell_id: cell.id, source: source.value }));
    source.addEventListener('blur', () => void save());
    source.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.shiftKey || event.ctrlKey)) {
        event.preventDefault();
        void save().then(() => (cell.cell_type === 'code' ? send({ type: 'execute_cell', cell_id: cell.id }) : undefined));
      }
    });
    const tools = el('div', { className: 'tools' }, [
      ...(cell.cell_type === 'code' ? [button('Run', () => void save().then(() => send({ type: 'execute_cell', cell_id: cell.id })))] : []),
      button('Add below', () => void send({ type: 'insert_cell', source: '', index: index + 1 })),
      button('Delete', () => void send({ type: 'delete_cell', cell_id: cell.id })),
    ]);
    return el('section', { className: 'cell ' + cell.cell_type, id: 'cell-' + cell.id }, [
      el('span', { className: 'prompt', textContent: head }),
      source,
      tools,
      el('div', { className: 'outputs' }, (cell.outputs || []).map(renderOutput)),
    ]);
  }

  async function load() {
    const answer = await fetch(notebookId ? '/api/notebooks/' + notebookId : '/api/rooms');
    if (!answer.ok) throw new Error(await answer.text());
    const body = await answer.json();
    if (!notebookId) {
      content.replaceChildren(el('ul', {}, body.rooms.map((room) =>
        el('li', {}, [el('a', { href: '/notebooks/' + room.notebook_id, textContent: room.notebook_path || 'untitled ' + room.notebook_id }),
          el('span', { textContent: ' · ' + room.active_peers + ' peers · kernel ' + (room.kernel_status || 'none') })]))));
      status.textContent = body.rooms.length + ' open';
      return;
    }
    document.getElementById('title').textContent = body.path || 'untitled ' + body.notebook_id;
    // The cell being edited keeps its text area (and the person's caret): its prompt, tools and
    // outputs are drawn again in place; every other cell is drawn anew.
    const editing = document.activeElement && document.activeElement.closest && document.activeElement.closest('section.cell');
    const drawn = body.cells.map((cell, index) => {
      const fresh = renderCell(cell, index);
      if (!editing || editing.id !== fresh.id) return fresh;
      for (const part of ['.prompt', '.tools', '.outputs']) editing.querySelector(part).replaceWith(fresh.querySelector(part));
      return editing;
    });
    content.replaceChildren(...drawn, button('Add cell', () => void send({ type: 'insert_cell', source: '' })));
    status.textContent = 'kernel ' + (body.runtime.kernel_status || body.runtime.state) + ' · version ' + body.document_version;
    document.getElementById('peers').textContent = 'here: ' + (body.peers || []).join(', ');
  }

  let pending = false;
  const reload = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      load().catch((error) => { status.textContent = String(error.message || error); });
    });
  };
  reload();
  if (notebookId) {
    const name = new URLSearchParams(location.search).get('name') || localStorage.getItem('runtimed-name') || 'human';
    const events = new EventSource('/api/notebooks/' + notebookId + '/events?name=' + encodeURIComponent(name));
    events.addEventListener('hello', (event) => { peerId = JSON.parse(event.data).peer_id; });
    events.onmessage = reload;
    events.onopen = reload;
    events.onerror = () => { status.textContent = 'reconnecting…'; };
  }
})();
`;
