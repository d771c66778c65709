import { describe, expect, it } from 'vitest';
import { mallocArenaEnvironment, mallocArenaMax } from './malloc-arena-environment.js';

describe(mallocArenaEnvironment, () => {
  it('limits the malloc arenas, keeping the rest of the environment', () => {
    const env = { HOME: '/home/a', PATH: '/usr/bin' };
    expect(mallocArenaEnvironment(env)).toEqual({ ...env, MALLOC_ARENA_MAX: String(mallocArenaMax) });
    expect(env).toEqual({ HOME: '/home/a', PATH: '/usr/bin' });
  });

  it('leaves a MALLOC_ARENA_MAX the user set', () => {
    expect(mallocArenaEnvironment({ MALLOC_ARENA_MAX: '8' })).toEqual({ MALLOC_ARENA_MAX: '8' });
  });
});
