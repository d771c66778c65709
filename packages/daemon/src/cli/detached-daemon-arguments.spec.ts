import { youngGenerationSemiSpaceMb } from '@nteract-mcp/foundation';
import { describe, expect, it } from 'vitest';
import { detachedDaemonArguments } from './detached-daemon-arguments.js';

describe(detachedDaemonArguments, () => {
  it('runs the bin in the foreground with the caller’s arguments and a capped young generation', () => {
    expect(detachedDaemonArguments('/opt/runtimed.js', ['start', '--socket', '/tmp/s.sock'], {})).toEqual([
      `--max-semi-space-size=${youngGenerationSemiSpaceMb}`,
      '/opt/runtimed.js',
      'start',
      '--socket',
      '/tmp/s.sock',
      '--foreground',
    ]);
  });

  it('leaves the young generation to a --max-semi-space-size the user set in NODE_OPTIONS', () => {
    expect(
      detachedDaemonArguments('/opt/runtimed.js', ['start'], { NODE_OPTIONS: '--max-semi-space-size=32' }),
    ).toEqual(['/opt/runtimed.js', 'start', '--foreground']);
  });
});
