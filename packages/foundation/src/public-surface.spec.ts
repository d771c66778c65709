import { describe, expect, it } from 'vitest';

/**
 * The public surface of @nteract-mcp/foundation, pinned: adding or removing an export is a deliberate change
 * to this list (and to its users), never a side effect of a refactoring.
 */
describe('the public surface of @nteract-mcp/foundation', () => {
  it('exports exactly the documented names from the main entry', async () => {
    const surface = Object.keys(await import('./index.js')).sort();
    expect(surface).toEqual([
      'ListenerSet',
      'StderrLogger',
      'SystemClock',
      'boundClientText',
      'boundedClientTextChars',
      'cellContentVersion',
      'holdYoungGenerationAtStart',
      'largeTransientBytes',
      'mallocArenaEnvironment',
      'mallocArenaMax',
      'mallocMmapThresholdBytes',
      'notebookIdPattern',
      'parseLogLevel',
      'quoteClientText',
      'randomHex',
      'redactLogFields',
      'releaseLargeTransient',
      'releaseLargeTransientWhenAnswered',
      'releaseLargeTransientsNow',
      'sniffTopLevelId',
      'sniffTrailingId',
      'userCacheDir',
      'youngGenerationFlags',
      'youngGenerationSemiSpaceMb',
    ]);
  });

  it('exports exactly the documented names from the ./testing subpath', async () => {
    const surface = Object.keys(await import('./testing/index.js')).sort();
    expect(surface).toEqual(['ManualClock', 'RecordingLogger']);
  });
});
