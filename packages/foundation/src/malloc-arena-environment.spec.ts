import { describe, expect, it } from 'vitest';
import { mallocArenaEnvironment, mallocArenaMax, mallocMmapThresholdBytes } from './malloc-arena-environment.js';

describe(mallocArenaEnvironment, () => {
  it('limits the malloc arenas and fixes the mmap threshold, keeping the rest of the environment', () => {
    const env = { HOME: '/home/a', PATH: '/usr/bin' };
    expect(mallocArenaEnvironment(env)).toEqual({
      ...env,
      MALLOC_ARENA_MAX: String(mallocArenaMax),
      MALLOC_MMAP_THRESHOLD_: String(mallocMmapThresholdBytes),
    });
    expect(env).toEqual({ HOME: '/home/a', PATH: '/usr/bin' });
  });

  it('leaves a MALLOC_ARENA_MAX and a MALLOC_MMAP_THRESHOLD_ the user set', () => {
    const env = { MALLOC_ARENA_MAX: '8', MALLOC_MMAP_THRESHOLD_: '65536' };
    expect(mallocArenaEnvironment(env)).toEqual(env);
  });
});
