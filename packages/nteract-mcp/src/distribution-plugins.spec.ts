import { Clock, DaemonPort, Logger, RecoveryLoop, SessionRecoveryState } from '@nteract-mcp/core';
import { createTestContainer, FakeDaemonPort, ManualClock, RecordingLogger } from '@nteract-mcp/core/testing';
import { DaemonStarter } from '@nteract-mcp/plugin-local-daemon';
import { describe, expect, it } from 'vitest';
import { childPlugins } from './distribution-plugins.js';

describe(childPlugins, () => {
  it('recovers a hosted handoff through the hosted contribution, independent of an absent local daemon, to a clear end', async () => {
    const daemon = new FakeDaemonPort({ stopped: true });
    const clock = new ManualClock();
    const container = createTestContainer({ plugins: childPlugins({ env: {} }) })
      .override(DaemonPort, daemon)
      .override(DaemonStarter, { enabled: false, start: async () => undefined })
      .override(Clock, clock)
      .override(Logger, new RecordingLogger())
      .build();
    const url = 'http://127.0.0.1:9/lab/tree/a.ipynb';
    const loop = container.get(RecoveryLoop);
    await loop.onStart({ handoff: { rejoinNotebook: url }, cwd: '/', peerLabel: () => 'agent', requestExit: () => {} });
    // Whatever the hosted backend answers, the bounded retry ends (no server listens on port 9).
    for (let i = 0; i < 10_000 && clock.pendingTimerCount > 0; i++) {
      await clock.advanceAndSettle(100);
      await loop.idle();
    }
    expect(container.get(SessionRecoveryState).rejoin).toEqual({
      requested: url,
      outcome: 'failed',
      reason: expect.stringContaining(`connect_notebook(url="${url}")`),
    });
    expect(clock.pendingTimerCount).toBe(0);
    expect(daemon.calls.filter((call) => !call.startsWith('queryInfo'))).toEqual([]);
    loop.stop();
  });
});
