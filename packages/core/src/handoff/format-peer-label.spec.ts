import { describe, expect, it } from 'vitest';
import { formatPeerLabel } from './format-peer-label.js';

describe(formatPeerLabel, () => {
  it('shows the title, else the name, else Inkwell, with a slug of the client name', () => {
    expect(formatPeerLabel({ name: 'claude-code', title: 'Claude Code' }, 'ab12cd34')).toBe(
      'Claude Code agent:claude-code:ab12cd34',
    );
    expect(formatPeerLabel({ name: 'Cursor IDE (beta)' }, 's')).toBe('Cursor IDE (beta) agent:cursor-ide-beta:s');
    expect(formatPeerLabel({ name: '', title: '  ' }, 's')).toBe('Inkwell agent:agent:s');
    expect(formatPeerLabel({ name: '***' }, 's')).toBe('*** agent:agent:s');
    expect(formatPeerLabel(undefined, 's')).toBe('Inkwell agent:agent:s');
  });
});
