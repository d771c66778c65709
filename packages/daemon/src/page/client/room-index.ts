import { el } from './element.js';
import { PageApi } from './page-api.js';
import { peerChip } from './peer-chip.js';

/** The index page: the open notebooks, each with its path (or untitled id), its peers and its kernel. */
export async function showRoomIndex(content: HTMLElement): Promise<void> {
  const status = document.getElementById('status') as HTMLElement;
  try {
    const rooms = await PageApi.rooms();
    status.textContent = `${rooms.length} open`;
    if (rooms.length === 0) {
      content.replaceChildren(
        el('p', { className: 'empty-notebook', textContent: 'No notebook is open in runtimed.' }),
      );
      return;
    }
    content.replaceChildren(
      el(
        'ul',
        { className: 'rooms' },
        rooms.map((room) => {
          const labels = room.peer_labels ?? [];
          const kernel =
            room.runtime?.state === 'ready'
              ? (room.kernel_status ?? 'ready')
              : (room.runtime?.state ?? room.kernel_status ?? 'none');
          return el('li', { className: 'room' }, [
            el('a', {
              href: `/notebooks/${room.notebook_id}`,
              className: 'room-name',
              textContent: room.notebook_path ?? `untitled ${room.notebook_id}`,
            }),
            el('span', { className: 'room-facts' }, [
              el('span', {
                className: `kernel ${kernel.replace(/[\s_]/g, '-')}`,
                textContent: `kernel ${kernel.replace('_', ' ')}`,
              }),
              el('span', {
                className: 'peer-count',
                textContent: `${room.active_peers} ${room.active_peers === 1 ? 'peer' : 'peers'}`,
                title: labels.join(', '),
              }),
              ...labels.map((label) => peerChip(label)),
            ]),
          ]);
        }),
      ),
    );
  } catch (error) {
    status.textContent = (error as Error).message;
  }
}
