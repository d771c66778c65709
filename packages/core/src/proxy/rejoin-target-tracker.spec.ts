import { describe, expect, it } from 'vitest';
import {
  agentSessionEnvironmentVariable,
  RejoinTargetTracker,
  rejoinNotebookEnvironmentVariable,
} from './rejoin-target-tracker.js';

const uuid = '8540eb53-0d6a-4b52-9a55-1c3a2f6e0b11';
const otherUuid = '11111111-2222-4333-8444-555555555555';

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const json = (value: unknown) => text(JSON.stringify(value, null, 2));
const failure = (value: string) => ({ content: [{ type: 'text', text: value }], isError: true });

describe(RejoinTargetTracker, () => {
  describe('what the original proxy tracked (ported)', () => {
    it('tracks connect_notebook by path when the reply names nothing', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', { path: '/tmp/test.ipynb' }, text('ok'));
      expect(tracker.current()).toBe('/tmp/test.ipynb');
    });

    it('tracks connect_notebook by notebook_id, without validating it', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', { notebook_id: 'abc-123-def' }, text('ok'));
      expect(tracker.current()).toBe('abc-123-def');
    });

    it('prefers the notebook_id argument over the path argument', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', { notebook_id: 'abc', path: '/tmp/x.ipynb' }, text('ok'));
      expect(tracker.current()).toBe('abc');
    });

    it('tracks create_notebook by its path or notebook_id argument', () => {
      const byPath = new RejoinTargetTracker();
      byPath.observeToolResult('create_notebook', { path: '/tmp/new.ipynb' }, text('ok'));
      expect(byPath.current()).toBe('/tmp/new.ipynb');
      const byId = new RejoinTargetTracker();
      byId.observeToolResult('create_notebook', { notebook_id: 'new-uuid' }, text('ok'));
      expect(byId.current()).toBe('new-uuid');
    });

    it('tracks create_notebook from the notebook_id of its JSON reply', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('create_notebook', {}, json({ notebook_id: uuid, runtime: 'python' }));
      expect(tracker.current()).toBe(uuid);
      const withDeps = new RejoinTargetTracker();
      withDeps.observeToolResult('create_notebook', { dependencies: ['pandas'] }, json({ notebook_id: 'abc-123' }));
      expect(withDeps.current()).toBe('abc-123');
    });

    it('ignores tools that do not choose a notebook', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('execute_cell', { cell_id: 'c1' }, json({ notebook_id: uuid, path: '/a.ipynb' }));
      tracker.observeToolResult(
        'save_notebook',
        { path: '/tmp/s.ipynb' },
        json({ path: '/tmp/s.ipynb', notebook_id: uuid }),
      );
      tracker.observeToolResult('list_active_notebooks', {}, json([{ notebook_id: uuid }]));
      expect(tracker.current()).toBeUndefined();
    });

    it('still tracks the legacy open_notebook alias', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('open_notebook', { path: '/tmp/legacy.ipynb' }, text('ok'));
      expect(tracker.current()).toBe('/tmp/legacy.ipynb');
    });

    it('ignores a failed connect and treats a missing isError as success', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', { path: '/tmp/a.ipynb' }, failure('Failed to open notebook'));
      expect(tracker.current()).toBeUndefined();
      tracker.observeToolResult('connect_notebook', { path: '/tmp/a.ipynb' }, { content: [] });
      expect(tracker.current()).toBe('/tmp/a.ipynb');
      tracker.observeToolResult('connect_notebook', { path: '/tmp/b.ipynb' }, { content: [], isError: false });
      expect(tracker.current()).toBe('/tmp/b.ipynb');
    });

    it('tracks nothing from empty arguments and a plain-text reply', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', {}, text('ok'));
      expect(tracker.current()).toBeUndefined();
    });

    it('ignores arguments that are not strings', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', { path: 42 }, text('ok'));
      expect(tracker.current()).toBeUndefined();
      // a present non-string notebook_id does not fall back to the path argument
      tracker.observeToolResult('connect_notebook', { notebook_id: 5, path: '/x.ipynb' }, text('ok'));
      tracker.observeToolResult('connect_notebook', { notebook_id: null, path: '/x.ipynb' }, text('ok'));
      expect(tracker.current()).toBeUndefined();
      tracker.observeToolResult('connect_notebook', 'not an object', json({ notebook_id: 42 }));
      expect(tracker.current()).toBeUndefined();
    });

    it('replaces the target with each newly connected notebook', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', { path: '/tmp/first.ipynb' }, text('ok'));
      tracker.observeToolResult('connect_notebook', { path: '/tmp/second.ipynb' }, text('ok'));
      expect(tracker.current()).toBe('/tmp/second.ipynb');
    });
  });

  describe('the lifecycle note rules', () => {
    it("prefers the child's canonical path over the UUID and over the raw argument", () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult(
        'connect_notebook',
        { path: '~/work/../work/a.ipynb' },
        json({ notebook_id: uuid, path: '/home/me/work/a.ipynb', connected: true }),
      );
      expect(tracker.current()).toBe('/home/me/work/a.ipynb');
      tracker.observeToolResult('connect_notebook', { notebook_id: otherUuid }, json({ notebook_id: otherUuid }));
      expect(tracker.current()).toBe(otherUuid);
    });

    it('a null notebook_id next to a path still tracks the canonical path the child reports', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult(
        'connect_notebook',
        { path: 'a.ipynb', notebook_id: null },
        json({ notebook_id: uuid, path: '/w/a.ipynb' }),
      );
      expect(tracker.current()).toBe('/w/a.ipynb');
    });

    it('promotes a UUID target to the saved path', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('create_notebook', {}, json({ notebook_id: uuid }));
      tracker.observeToolResult(
        'save_notebook',
        { path: 'out.ipynb' },
        json({ path: '/w/out.ipynb', notebook_id: uuid }),
      );
      expect(tracker.current()).toBe('/w/out.ipynb');
      expect(tracker.childEnvironment({ restart: true })[rejoinNotebookEnvironmentVariable]).toBe('/w/out.ipynb');
    });

    it('follows a save-as of the tracked file-backed notebook (same notebook_id)', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult(
        'connect_notebook',
        { path: '/w/a.ipynb' },
        json({ notebook_id: uuid, path: '/w/a.ipynb' }),
      );
      tracker.observeToolResult(
        'save_notebook',
        { path: '/w/b.ipynb' },
        json({ path: '/w/b.ipynb', notebook_id: uuid }),
      );
      expect(tracker.current()).toBe('/w/b.ipynb');
    });

    it('does not promote on a save of another notebook, a failed save, or a save reply without both fields', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('create_notebook', {}, json({ notebook_id: uuid }));
      tracker.observeToolResult('save_notebook', {}, json({ path: '/w/other.ipynb', notebook_id: otherUuid }));
      tracker.observeToolResult(
        'save_notebook',
        { path: '/w/x.ipynb' },
        failure('Cannot save: /w/x.ipynb is already open'),
      );
      tracker.observeToolResult('save_notebook', { path: '/w/y.ipynb' }, json({ path: '/w/y.ipynb' }));
      tracker.observeToolResult('save_notebook', { path: '/w/z.ipynb' }, text('saved'));
      expect(tracker.current()).toBe(uuid);
    });

    it('clears the target when the active notebook is disconnected', () => {
      const implicit = new RejoinTargetTracker();
      implicit.observeToolResult('connect_notebook', {}, json({ notebook_id: uuid, path: '/w/a.ipynb' }));
      implicit.observeToolResult(
        'disconnect_notebook',
        {},
        text(`Disconnected active session ${uuid}. No active session now.`),
      );
      expect(implicit.current()).toBeUndefined();
      expect(implicit.childEnvironment({ restart: true })).not.toHaveProperty(rejoinNotebookEnvironmentVariable);

      const explicit = new RejoinTargetTracker();
      explicit.observeToolResult('connect_notebook', {}, json({ notebook_id: uuid, path: '/w/a.ipynb' }));
      explicit.observeToolResult(
        'disconnect_notebook',
        { notebook_id: uuid },
        text(`Disconnected active session ${uuid}. No active session now.`),
      );
      expect(explicit.current()).toBeUndefined();
    });

    it('keeps the target when a parked notebook is disconnected', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', {}, json({ notebook_id: uuid, path: '/w/a.ipynb' }));
      tracker.observeToolResult(
        'disconnect_notebook',
        { notebook_id: otherUuid },
        text(`Disconnected parked session ${otherUuid}. Peer connection released; daemon eviction timer will start.`),
      );
      expect(tracker.current()).toBe('/w/a.ipynb');
    });

    it("trusts the child's word that the released notebook was parked, even when it is the tracked one", () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', {}, json({ notebook_id: uuid, path: '/w/a.ipynb' }));
      tracker.observeToolResult(
        'disconnect_notebook',
        { notebook_id: uuid },
        text(`Disconnected parked session ${uuid}.`),
      );
      expect(tracker.current()).toBe('/w/a.ipynb');
      // without a recognisable reply, naming the tracked notebook counts as releasing the active one
      tracker.observeToolResult('disconnect_notebook', { notebook_id: uuid.toUpperCase() }, text('done'));
      expect(tracker.current()).toBeUndefined();
    });

    it('keeps the target when a disconnect fails', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', {}, json({ notebook_id: uuid }));
      tracker.observeToolResult('disconnect_notebook', {}, failure('No active session to disconnect.'));
      tracker.observeToolResult(
        'disconnect_notebook',
        { notebook_id: otherUuid },
        failure(`No active or parked session with notebook_id '${otherUuid}'.`),
      );
      expect(tracker.current()).toBe(uuid);
    });

    it('never lets a failed connect or create replace the target', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', {}, json({ notebook_id: uuid, path: '/w/a.ipynb' }));
      tracker.observeToolResult('connect_notebook', { path: '/w/missing.ipynb' }, failure('Failed to open notebook'));
      tracker.observeToolResult('create_notebook', {}, { ...json({ notebook_id: otherUuid }), isError: true });
      expect(tracker.current()).toBe('/w/a.ipynb');
    });

    it('keeps a hosted URL without its credentials', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult(
        'connect_notebook',
        { url: 'https://user:pw@hub.example.com/user/me/lab/tree/dir/a.ipynb?token=s3cret&kernel=py' },
        json({ notebook_id: uuid, path: 'dir/a.ipynb' }),
      );
      expect(tracker.current()).toBe('https://hub.example.com/user/me/lab/tree/dir/a.ipynb?kernel=py');
      expect(tracker.current()).not.toContain('s3cret');
      // a hosted target is not moved to a server-side save path
      tracker.observeToolResult('save_notebook', {}, json({ path: 'dir/b.ipynb', notebook_id: uuid }));
      expect(tracker.current()).toBe('https://hub.example.com/user/me/lab/tree/dir/a.ipynb?kernel=py');
    });

    it('prefers the URL the child reports for a hosted notebook', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult(
        'connect_notebook',
        { url: 'http://localhost:8888/notebooks/a.ipynb?token=abc' },
        json({ url: 'http://localhost:8888/lab/tree/a.ipynb', path: 'a.ipynb' }),
      );
      expect(tracker.current()).toBe('http://localhost:8888/lab/tree/a.ipynb');
    });

    it('ignores results that are not objects', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeToolResult('connect_notebook', { path: '/w/a.ipynb' }, undefined);
      tracker.observeToolResult('connect_notebook', { path: '/w/a.ipynb' }, 'ok');
      expect(tracker.current()).toBeUndefined();
    });
  });

  describe('agent attribution and child environment', () => {
    it('creates one stable 8-hex agent session per tracker', () => {
      const tracker = new RejoinTargetTracker();
      expect(tracker.agentSession()).toMatch(/^[0-9a-f]{8}$/);
      expect(tracker.agentSession()).toBe(tracker.agentSession());
      expect(new RejoinTargetTracker({ agentSession: 'cafe0001' }).agentSession()).toBe('cafe0001');
    });

    it('keeps the agent:<slug>:<session> suffix from the client identity', () => {
      const tracker = new RejoinTargetTracker({ agentSession: 'cafe0001' });
      expect(tracker.agentSuffix()).toBe('agent:agent:cafe0001');
      tracker.observeClientInfo({ name: 'Claude Code', title: 'Claude Code', version: '2.0' });
      tracker.observeClientInfo({ version: 'no name' });
      tracker.observeClientInfo(null);
      expect(tracker.clientIdentity()).toEqual({ name: 'Claude Code', title: 'Claude Code', version: '2.0' });
      expect(tracker.peerLabel()).toBe('Claude Code agent:claude-code:cafe0001');
      expect(tracker.agentSuffix()).toBe('agent:claude-code:cafe0001');
    });

    it('seeds the rejoin target only on restarts, and the agent session always', () => {
      const tracker = new RejoinTargetTracker({ agentSession: 'cafe0001' });
      tracker.observeToolResult('connect_notebook', {}, json({ notebook_id: uuid, path: '/w/a.ipynb' }));
      expect(tracker.childEnvironment({ restart: false })).toEqual({ [agentSessionEnvironmentVariable]: 'cafe0001' });
      expect(tracker.childEnvironment({ restart: true })).toEqual({
        [agentSessionEnvironmentVariable]: 'cafe0001',
        [rejoinNotebookEnvironmentVariable]: '/w/a.ipynb',
      });
      expect(agentSessionEnvironmentVariable).toBe('NTERACT_MCP_AGENT_SESSION');
      expect(rejoinNotebookEnvironmentVariable).toBe('NTERACT_MCP_REJOIN_NOTEBOOK');
    });
  });
  describe('session reports (the child says what to rejoin)', () => {
    it('takes the target from a report and clears it on a null target', () => {
      const tracker = new RejoinTargetTracker();
      expect(tracker.targetSource()).toBeUndefined();
      tracker.observeSessionReport({ target: '/w/a.ipynb', notebookId: uuid });
      expect(tracker.current()).toBe('/w/a.ipynb');
      expect(tracker.targetSource()).toBe('report');
      tracker.observeSessionReport({ target: null });
      expect(tracker.current()).toBeUndefined();
      expect(tracker.childEnvironment({ restart: true })).not.toHaveProperty(rejoinNotebookEnvironmentVariable);
    });

    it('keeps the notebook id of a reported target, so a later text-rule save can move it', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeSessionReport({ target: uuid, notebookId: uuid });
      tracker.observeToolResult('save_notebook', {}, json({ notebook_id: uuid, path: '/w/saved.ipynb' }));
      expect(tracker.current()).toBe('/w/saved.ipynb');
      expect(tracker.targetSource()).toBe('tool-text');
    });

    it('drops credentials from a reported hosted URL', () => {
      const tracker = new RejoinTargetTracker();
      tracker.observeSessionReport({ target: 'https://user:pw@hub.example/lab/tree/a.ipynb?token=s3cret' });
      expect(tracker.current()).toBe('https://hub.example/lab/tree/a.ipynb');
    });
  });
});
