import type { WireRuntimeState } from '@nteract-mcp/runtimed-protocol';
import type { ConnectionState } from './room-stream.js';

/** How the page's header shows the kernel: its text, its CSS class (the colour), its tooltip. */
export interface KernelStateLabel {
  readonly text: string;
  readonly className: string;
  readonly title: string;
}

/**
 * The kernel as the header shows it: a ready kernel by its status (`busy`, `idle`, …), any other
 * by the room's state (`not started`, `stopped`, `unavailable`, …); the tooltip is the reason
 * the room gave (why it is unavailable), if any.
 */
export function kernelStateLabel(runtime: WireRuntimeState): KernelStateLabel {
  const state = runtime.state === 'ready' ? (runtime.kernel_status ?? 'ready') : runtime.state.replace('_', ' ');
  return { text: `kernel ${state}`, className: `kernel ${state.replace(/\s/g, '-')}`, title: runtime.reason ?? '' };
}

/** A kernel that stopped or died: restarting it is what there is to do (the kernel bar's restart stands out). */
export function kernelWantsRestart(runtime: WireRuntimeState): boolean {
  return runtime.state === 'stopped' || runtime.kernel_status === 'dead';
}

/** The connection to the room as the header says it. */
export function connectionLabel(state: ConnectionState): string {
  return state === 'live'
    ? 'live'
    : state === 'reconnecting'
      ? 'reconnecting…'
      : state === 'closed'
        ? 'not open to you'
        : 'connecting…';
}
