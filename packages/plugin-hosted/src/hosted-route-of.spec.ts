import { describe, expect, it } from 'vitest';
import { hostedRouteOf } from './hosted-route-of.js';

describe(hostedRouteOf, () => {
  it('finds each front-end route whole, after any base path', () => {
    expect(hostedRouteOf('/lab/tree/a.ipynb')).toEqual({ basePath: '/', rest: 'a.ipynb' });
    expect(hostedRouteOf('/jhub/user/ada/doc/tree/dir/a.ipynb')).toEqual({
      basePath: '/jhub/user/ada/',
      rest: 'dir/a.ipynb',
    });
    expect(hostedRouteOf('/user/ada/lab/workspaces/auto-x/tree/a.ipynb')).toEqual({
      basePath: '/user/ada/',
      rest: 'a.ipynb',
    });
    expect(hostedRouteOf('/user/ada/doc/workspaces/w1/tree/a.ipynb')).toMatchObject({ basePath: '/user/ada/' });
    expect(hostedRouteOf('/base/notebooks/a.ipynb')).toEqual({ basePath: '/base/', rest: 'a.ipynb' });
    expect(hostedRouteOf('/base/tree/dir/')).toEqual({ basePath: '/base/', rest: 'dir/' });
  });

  it('takes the leftmost route: a folder named like a route stays in the path; a server named lab or doc stays in the base', () => {
    expect(hostedRouteOf('/lab/tree/tree/a.ipynb')).toEqual({ basePath: '/', rest: 'tree/a.ipynb' });
    expect(hostedRouteOf('/doc/tree/lab/tree/a.ipynb')).toEqual({ basePath: '/', rest: 'lab/tree/a.ipynb' });
    expect(hostedRouteOf('/user/ada/lab/lab/tree/a.ipynb')).toEqual({ basePath: '/user/ada/lab/', rest: 'a.ipynb' });
    expect(hostedRouteOf('/user/ada/doc/doc/tree/a.ipynb')).toEqual({ basePath: '/user/ada/doc/', rest: 'a.ipynb' });
  });

  it('has none for a path without a route', () => {
    expect(hostedRouteOf('/lab')).toBeUndefined();
    expect(hostedRouteOf('/user/ada/doc/a.ipynb')).toBeUndefined();
    expect(hostedRouteOf('/labtree/a.ipynb')).toBeUndefined();
  });
});
