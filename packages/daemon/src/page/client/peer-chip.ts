import { el } from './element.js';

/** `human`, `agent` or `other`, from a peer's label (`human:Ada`, `Claude Code agent:<slug>:<session>`). */
export function labelKind(label: string): 'human' | 'agent' | 'other' {
  if (label === 'human' || label.startsWith('human:')) return 'human';
  if (/(^|\s)agent:/.test(label)) return 'agent';
  return 'other';
}

/**
 * A peer's label as a chip: the client's name (an agent's label starts with it) stands out, the
 * `agent:<slug>:<session>` or `human:<name>` part follows; the text is the whole label.
 */
export function peerChip(label: string, className = ''): HTMLElement {
  const kind = labelKind(label);
  const chip = el('span', { className: `chip ${kind} ${className}`.trim(), title: label });
  const at = label.search(/\sagent:/);
  if (kind === 'agent' && at > 0) {
    chip.append(el('span', { className: 'who', textContent: label.slice(0, at) }), ' ');
    chip.append(el('span', { className: 'tag', textContent: label.slice(at + 1) }));
  } else chip.append(label);
  return chip;
}
