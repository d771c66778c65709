import { ContainerModule } from 'inversify';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../di/mcp-plugin.js';
import { CoreError } from '../errors/core-error.js';
import { readSessionReport } from '../handoff/session-report.js';
import {
  describeNotebookTarget,
  isSameNotebookTarget,
  type NotebookTarget,
} from '../notebook-target/notebook-target.js';
import { sessionRecoveryTarget } from '../session/notebook-session.js';
import { RejoinCoordinator } from '../session/rejoin-coordinator.js';
import { noSessionMessage } from '../session/session-drop-info.js';
import { createTestContainer } from '../testing/create-test-container.js';
import type { FakeDaemonPort } from '../testing/fake-daemon-port.js';
import { FakeNotebookBackend, type FakeNotebookBackendOptions } from '../testing/fake-notebook-backend.js';
import {
  type ChildServerTestHarness,
  resultText,
  startChildServerTestHarness,
  toolError,
} from '../testing/start-child-server-test-harness.js';
import { NotebookBackend } from './notebook-backend.js';
import { NotebookTargetResolver } from './notebook-target-resolver.js';

/** A third party's kind, as a plugin would define it: `shelf:<name>` notebooks, a field core never reads. */
interface ShelfTarget {
  readonly kind: 'acme.shelf';
  readonly shelf: string;
}

function shelfBackend(daemon: () => FakeDaemonPort | undefined, overrides: Partial<FakeNotebookBackendOptions> = {}) {
  return new FakeNotebookBackend({
    id: 'acme.shelf',
    kind: 'acme.shelf',
    argument: 'url',
    identity: { describe: (target) => `shelf:${(target as ShelfTarget).shelf}` },
    recognizes: (raw) => raw.startsWith('shelf:'),
    parse: (raw) => {
      const shelf = raw.trim().slice('shelf:'.length);
      if (!/^[a-z]+$/.test(shelf))
        throw new CoreError('invalidTarget', `'${raw}' names no shelf: write shelf:<letters>`);
      return { kind: 'acme.shelf', shelf } satisfies ShelfTarget;
    },
    connect: async (target, { peerLabel }) => {
      const port = daemon();
      if (!port) throw new CoreError('daemonUnavailable', 'no daemon');
      return port.openNotebook(`/shelves/${(target as ShelfTarget).shelf}.ipynb`, { peerLabel });
    },
    ...overrides,
  });
}

function shelfPlugin(backend: FakeNotebookBackend) {
  return definePlugin({
    id: 'acme.shelf',
    module: new ContainerModule(({ bind }) => {
      bind(NotebookBackend).toConstantValue(backend);
    }),
  });
}

let resolverOf: () => NotebookTargetResolver = () => {
  throw new Error('no container yet');
};

function thrown(run: () => unknown): CoreError {
  try {
    run();
  } catch (error) {
    if (CoreError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a CoreError');
}

describe('the NotebookBackend contribution point', () => {
  let harness: ChildServerTestHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('refuses two backends of one kind, a badly named kind and an unknown argument when the container is built', () => {
    const twice = (id: string) => shelfBackend(() => undefined, { id });
    const duplicate = thrown(() =>
      createTestContainer({
        plugins: [
          definePlugin({
            id: 'acme.two-shelves',
            module: new ContainerModule(({ bind }) => {
              bind(NotebookBackend).toConstantValue(twice('acme.shelf-a'));
              bind(NotebookBackend).toConstantValue(twice('acme.shelf-b'));
            }),
          }),
        ],
      }).build(),
    );
    expect(duplicate.kind).toBe('duplicateTargetKind');
    expect(duplicate.message).toBe(
      "NotebookBackend: 'acme.shelf-a' and 'acme.shelf-b' both handle 'acme.shelf' targets; load only one of them.",
    );

    const badKind = thrown(() =>
      createTestContainer({
        plugins: [shelfPlugin(shelfBackend(() => undefined, { kind: 'shelf' as 'acme.shelf' }))],
      }).build(),
    );
    expect(badKind.kind).toBe('invalidContribution');
    expect(badKind.message).toContain("kind 'shelf' must be a dotted lowercase name");

    const badArgument = thrown(() =>
      createTestContainer({
        plugins: [shelfPlugin(shelfBackend(() => undefined, { argument: 'shelf' as 'url' }))],
      }).build(),
    );
    expect(badArgument.message).toContain("argument 'shelf' is not one of path, notebook_id, url");
  });

  it('refuses an unknown kind clearly, naming what the server opens but never the raw string', () => {
    const resolver = createTestContainer({
      plugins: [shelfPlugin(shelfBackend(() => undefined))],
    })
      .build()
      .get(NotebookTargetResolver);
    const byScheme = thrown(() => resolver.resolve('ftp://user:s3cret@host/a.ipynb', { cwd: '/' }));
    expect(byScheme.kind).toBe('unsupportedTarget');
    expect(byScheme.message).toBe(
      "Unsupported notebook target scheme 'ftp:': no loaded plugin handles it. This server opens 'acme.shelf' targets.",
    );
    expect(thrown(() => resolver.resolve('a.ipynb', { cwd: '/' })).message).toBe(
      "No loaded plugin recognises this notebook target. This server opens 'acme.shelf' targets.",
    );
    expect(thrown(() => resolver.resolveAs('local-path', 'a.ipynb', { cwd: '/' })).message).toBe(
      "This server cannot open local-path targets: no loaded plugin handles them. This server opens 'acme.shelf' targets.",
    );
    expect(thrown(() => resolver.resolveArgument('path', 'a.ipynb', { cwd: '/' })).kind).toBe('unsupportedTarget');
    expect(thrown(() => resolver.resolve(' ', { cwd: '/' })).kind).toBe('invalidTarget');
    // A contributed target that did not come from its backend has no identity core could guess.
    expect(thrown(() => describeNotebookTarget({ kind: 'acme.shelf' })).kind).toBe('unsupportedTarget');
  });

  it('ties parsed targets to their backend: describe, identity and the round trip through the single-string form', () => {
    const resolver = createTestContainer({
      plugins: [shelfPlugin(shelfBackend(() => undefined))],
    })
      .build()
      .get(NotebookTargetResolver);
    const target = resolver.resolve(' shelf:maths ', { cwd: '/' });
    expect(target).toEqual({ kind: 'acme.shelf', shelf: 'maths' });
    expect(JSON.stringify(target)).toBe('{"kind":"acme.shelf","shelf":"maths"}');
    expect(describeNotebookTarget(target)).toBe('shelf:maths');
    expect(resolver.resolve(describeNotebookTarget(target), { cwd: '/' })).toEqual(target);
    expect(isSameNotebookTarget(target, resolver.resolveArgument('url', 'shelf:maths', { cwd: '/' }))).toBe(true);
    expect(isSameNotebookTarget(target, resolver.resolve('shelf:poems', { cwd: '/' }))).toBe(false);
    expect(resolver.supportedKinds()).toEqual(['acme.shelf']);
  });

  it('connects a third-party kind through connect_notebook of the child server, reports it, and rejoins it through the backend alone', async () => {
    const backend = shelfBackend(() => harness?.daemon);
    harness = await startChildServerTestHarness({ plugins: [shelfPlugin(backend)] });
    const h = harness;
    resolverOf = () => h.container.get(NotebookTargetResolver);

    expect(await toolError(h.call('connect_notebook', { url: 'shelf:42' }))).toBe(
      "'shelf:42' names no shelf: write shelf:<letters>",
    );
    const result = await h.call('connect_notebook', { url: 'shelf:maths' });
    expect(result.isError).not.toBe(true);
    expect(JSON.parse(resultText(result))).toMatchObject({ path: '/shelves/maths.ipynb', connected: true });
    expect(backend.calls).toEqual(['connect:acme.shelf']);
    // The session keeps the target it was reached by; the report names it in its own form.
    expect(readSessionReport(result)?.target).toBe('shelf:maths');
    const active = h.slot.active;
    if (!active) throw new Error('no active session');
    expect(sessionRecoveryTarget(active)).toBe(active.target);
    expect((await h.callJson('session_status')).active).toMatchObject({ target: 'shelf:maths', origin: 'connect' });
    expect((await h.callJson('create_cell', { source: 'x = 1' })).cell_id).toBe('cell-1');

    // Lost, as a daemon restart would: the reconnect hint uses the kind's argument; core brings it back through the backend.
    h.slot.removeWhere(() => true, 'test: the daemon went away');
    expect(noSessionMessage(h.slot.lastDrop)).toContain('connect_notebook(notebook_id=');
    const rejoined = await h.container.get(RejoinCoordinator).rejoin(active.target, { peerLabel: 'test' });
    expect(rejoined.kind).toBe('published');
    expect(backend.calls).toEqual(['connect:acme.shelf', 'connect:acme.shelf']);
    expect(describeNotebookTarget(h.slot.active?.target as NotebookTarget)).toBe('shelf:maths');
  });

  it('reopens through reopen when the backend has one, and says why the notebook is gone when it refuses', async () => {
    const backend = shelfBackend(() => harness?.daemon, {
      reopen: async () => {
        throw new CoreError('notebookUnavailable', 'the shelf was emptied');
      },
    });
    harness = await startChildServerTestHarness({ plugins: [shelfPlugin(backend)] });
    const h = harness;
    resolverOf = () => h.container.get(NotebookTargetResolver);
    const target = resolverOf().resolve('shelf:maths', { cwd: '/' });
    const evicted = await h.container.get(RejoinCoordinator).rejoin(target, { peerLabel: 'test' });
    expect(evicted).toEqual({ kind: 'evicted', reason: 'the shelf was emptied' });
    expect(backend.calls).toEqual(['reopen:acme.shelf']);
    expect(noSessionMessage(h.slot.lastDrop)).toBe(
      'No active notebook session (notebook was evicted: the shelf was emptied). Start again with create_notebook, or connect_notebook to a saved file.',
    );
  });
});
