import { describe, expect, it } from 'vitest';
import { connectionLabel, kernelStateLabel, kernelWantsRestart } from './kernel-state-label.js';

describe(kernelStateLabel, () => {
  it('shows a ready kernel by its status, and as ready when it has none yet', () => {
    expect(kernelStateLabel({ state: 'ready', kernel_status: 'busy' })).toEqual({
      text: 'kernel busy',
      className: 'kernel busy',
      title: '',
    });
    expect(kernelStateLabel({ state: 'ready', kernel_status: null }).text).toBe('kernel ready');
  });

  it('shows any other kernel by the room’s state in words, its class dashed, the reason as its tooltip', () => {
    expect(kernelStateLabel({ state: 'not_started', kernel_status: null })).toEqual({
      text: 'kernel not started',
      className: 'kernel not-started',
      title: '',
    });
    // A status left from before the kernel stopped does not hide that it stopped.
    expect(kernelStateLabel({ state: 'stopped', kernel_status: 'idle' }).text).toBe('kernel stopped');
    expect(
      kernelStateLabel({ state: 'unavailable', kernel_status: null, reason: 'no kernelspec with ipykernel' }),
    ).toEqual({ text: 'kernel unavailable', className: 'kernel unavailable', title: 'no kernelspec with ipykernel' });
  });
});

describe(kernelWantsRestart, () => {
  it('wants a restart for a stopped or dead kernel only', () => {
    expect(kernelWantsRestart({ state: 'stopped', kernel_status: null })).toBe(true);
    expect(kernelWantsRestart({ state: 'ready', kernel_status: 'dead' })).toBe(true);
    expect(kernelWantsRestart({ state: 'ready', kernel_status: 'idle' })).toBe(false);
    expect(kernelWantsRestart({ state: 'starting', kernel_status: null })).toBe(false);
    expect(kernelWantsRestart({ state: 'unavailable', kernel_status: null, reason: 'x' })).toBe(false);
  });
});

describe(connectionLabel, () => {
  it('says each state of the connection', () => {
    expect(connectionLabel('connecting')).toBe('connecting…');
    expect(connectionLabel('live')).toBe('live');
    expect(connectionLabel('reconnecting')).toBe('reconnecting…');
    expect(connectionLabel('closed')).toBe('not open to you');
  });
});
