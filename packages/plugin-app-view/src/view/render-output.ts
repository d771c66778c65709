/** An nbformat output as the view receives it. */
export type Output = Readonly<Record<string, unknown>> & { readonly output_type: string };

/** `tag` with `className` and children. */
export function element(tag: string, className?: string, ...children: (Node | string)[]): HTMLElement {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children);
  return node;
}

function joined(text: unknown): string {
  return Array.isArray(text) ? text.join('') : typeof text === 'string' ? text : '';
}

/** The eight ANSI colours and their bright forms (SGR 30–37, 90–97), as classes. */
const ansiColours = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];

/** The escape that starts an ANSI control sequence. */
const esc = String.fromCharCode(27);

/** Text with ANSI SGR colour codes as coloured spans (other escapes dropped). */
export function renderAnsi(text: string): HTMLElement {
  const pre = element('pre', 'ansi');
  let classes: string[] = [];
  const pattern = new RegExp(`${esc}\\[([0-9;]*)m`, 'g');
  const otherEscapes = new RegExp(`${esc}\\[[0-9;?]*[A-Za-z]`, 'g');
  let at = 0;
  const push = (chunk: string) => {
    if (chunk.length === 0) return;
    const clean = chunk.replace(otherEscapes, '');
    pre.append(classes.length === 0 ? clean : element('span', classes.join(' '), clean));
  };
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    push(text.slice(at, match.index));
    at = match.index + match[0].length;
    for (const code of (match[1] || '0').split(';').map(Number)) {
      if (code === 0) classes = [];
      else if (code === 1) classes.push('ansi-bold');
      else if (code >= 30 && code <= 37) classes.push(`ansi-${ansiColours[code - 30]}`);
      else if (code >= 90 && code <= 97) classes.push(`ansi-bright-${ansiColours[code - 90]}`);
      else if (code >= 40 && code <= 47) classes.push(`ansi-bg-${ansiColours[code - 40]}`);
    }
  }
  push(text.slice(at));
  return pre;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Inline Markdown of escaped text: code, bold, italics, links (opened through the host), math kept as text. */
function inline(text: string): string {
  return text
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*])\*([^*]+)\*/g, '$1<em>$2</em>')
    .replace(/\$([^$\n]+)\$/g, '<span class="math">$1</span>')
    .replace(/\[([^\]]+)\]\((https?:[^)\s]+)\)/g, '<a href="$2" data-external="1">$1</a>');
}

/**
 * A small Markdown renderer (headings, paragraphs, lists, fenced code, block math as text, inline
 * code, emphasis, links): everything is escaped first, so no markup of the source reaches the page.
 */
export function renderMarkdown(source: string): HTMLElement {
  const out: string[] = [];
  const lines = source.split('\n');
  let list: string[] | undefined;
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push(`<p>${inline(escapeHtml(paragraph.join(' ')))}</p>`);
    paragraph = [];
    if (list) out.push(`<ul>${list.map((item) => `<li>${inline(escapeHtml(item))}</li>`).join('')}</ul>`);
    list = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = /^(```|\$\$)/.exec(line.trim());
    if (fence) {
      flush();
      const end = fence[1] ?? '```';
      const body: string[] = [];
      for (i++; i < lines.length && !(lines[i] ?? '').trim().startsWith(end); i++) body.push(lines[i] ?? '');
      out.push(`<pre class="${end === '$$' ? 'math' : 'code'}">${escapeHtml(body.join('\n'))}</pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*[-*]\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = heading[1]?.length ?? 1;
      out.push(`<h${level}>${inline(escapeHtml(heading[2] ?? ''))}</h${level}>`);
    } else if (item) {
      if (paragraph.length > 0) flush();
      list ??= [];
      list.push(item[1] ?? '');
    } else if (line.trim() === '') flush();
    else paragraph.push(line);
  }
  flush();
  const node = element('div', 'markdown');
  node.innerHTML = out.join('');
  return node;
}

/** HTML output in a nested frame with every sandbox permission withheld (no script, no navigation, no network origin). */
function renderHtml(html: string): HTMLElement {
  const frame = document.createElement('iframe');
  frame.className = 'html-output';
  frame.setAttribute('sandbox', '');
  frame.srcdoc = `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">${html}`;
  frame.addEventListener('load', () => {
    // A sandbox without same-origin cannot be measured from here: a fixed, scrollable height.
    frame.style.height = '160px';
  });
  return frame;
}

/** The richest representation of a display output the view renders. */
function renderData(data: Readonly<Record<string, unknown>>): HTMLElement {
  for (const mime of ['image/png', 'image/jpeg', 'image/gif', 'image/webp']) {
    const value = data[mime];
    if (typeof value === 'string') {
      const img = document.createElement('img');
      img.src = `data:${mime};base64,${value.replace(/\s/g, '')}`;
      img.alt = 'output image';
      return element('div', 'image', img);
    }
  }
  if (typeof data['text/html'] === 'string' || Array.isArray(data['text/html']))
    return renderHtml(joined(data['text/html']));
  if (data['text/markdown'] !== undefined) return renderMarkdown(joined(data['text/markdown']));
  if (data['text/latex'] !== undefined) return element('pre', 'math', joined(data['text/latex']));
  if (data['application/json'] !== undefined) return element('pre', 'json', joined(data['application/json']));
  if (data['text/plain'] !== undefined) return renderAnsi(joined(data['text/plain']));
  return element('div', 'note', `(${Object.keys(data).join(', ')})`);
}

/** One output as the view shows it. */
export function renderOutput(output: Output): HTMLElement {
  switch (output.output_type) {
    case 'stream': {
      const node = renderAnsi(joined(output.text));
      node.classList.add(output.name === 'stderr' ? 'stderr' : 'stdout');
      return node;
    }
    case 'error': {
      const traceback = Array.isArray(output.traceback) ? output.traceback.map(joined).join('\n') : '';
      const node = renderAnsi(traceback || `${joined(output.ename)}: ${joined(output.evalue)}`);
      node.classList.add('error');
      return node;
    }
    case 'display_data':
    case 'execute_result':
    case 'update_display_data':
      return renderData((output.data ?? {}) as Record<string, unknown>);
    case 'omitted':
      return element('div', 'note', `(an output left out: ${joined(output.reason)})`);
    default:
      return element('div', 'note', `(${output.output_type})`);
  }
}
