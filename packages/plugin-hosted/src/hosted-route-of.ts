/**
 * The routes of a Jupyter front end that name a file after the server's base path: JupyterLab's
 * `lab/tree/` and its single-document `doc/tree/` (JupyterLab 4, Notebook 7's "open in a new
 * tab"), both also under a workspace (`lab/workspaces/<name>/tree/`), and the classic and
 * Notebook 7 `notebooks/` and `tree/`.
 */
const routePattern = /\/(?:(?:lab|doc)(?:\/workspaces\/[^/]+)?\/tree|notebooks|tree)\//;

/** Where a front-end route stands in a URL path. */
export interface HostedRoute {
  /** The server's base path: everything before the route, ending in `/`. */
  readonly basePath: string;
  /** What follows the route (a file or directory path, still URL-encoded). */
  readonly rest: string;
}

/**
 * The first front-end route in `pathname` (the leftmost, so a file under a folder named `tree`
 * stays in the path), or `undefined` when it has none. A route is matched whole: in
 * `/user/ada/doc/tree/a.ipynb` the base path is `/user/ada/`, not `/user/ada/doc/`.
 */
export function hostedRouteOf(pathname: string): HostedRoute | undefined {
  const match = routePattern.exec(pathname);
  if (!match) return undefined;
  return {
    basePath: pathname.slice(0, match.index + 1),
    rest: pathname.slice(match.index + match[0].length),
  };
}
