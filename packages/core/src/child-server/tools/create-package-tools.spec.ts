import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { NotebookCell } from '../../ports/notebook-handle.js';
import type { FakeExecutor } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  resultText,
  startChildServerTestHarness,
  testExecutor,
  toolError,
} from '../../testing/start-child-server-test-harness.js';

type Json = Record<string, unknown>;

/** The settings a Python package program carries. */
function settingsOf(source: string): Json {
  const python = /'settings_json': (".*")\}\)$/.exec(source);
  if (!python) throw new Error('not a Python package program');
  return JSON.parse(JSON.parse(python[1] as string) as string) as Json;
}

/** A kernel's environment the fake answers package programs from; an install adds what its specs name. */
class FakeEnvironment {
  public interpreter = '/project/.venv/bin/python';
  public prefix = '/project/.venv';
  public externallyManaged = false;
  public packages: Record<string, string> = { pip: '23.0.1', ipykernel: '6.20.2', numpy: '1.24.2' };
  /** Imported in the kernel (normalized names). */
  public loaded: string[] = [];
  /** The install's exit code; a failing one changes nothing. */
  public exitCode = 0;
  /** Called before each listing answer (e.g. to move the kernel into another environment). */
  public beforeAnswer: (() => void) | undefined;
  public readonly programs: Json[] = [];
  /** The install is interrupted part way: its program never answers. */
  public interrupted = false;

  public readonly executor: FakeExecutor = (cell: NotebookCell) => {
    if (cell.id !== 'scratch') return testExecutor(cell);
    const settings = settingsOf(cell.source);
    this.programs.push(settings);
    this.beforeAnswer?.();
    const environment = {
      interpreter: this.interpreter,
      prefix: this.prefix,
      kind: this.externallyManaged ? 'system' : 'venv',
      externally_managed: this.externallyManaged,
      installer: 'pip',
      ...(this.externallyManaged ? { externally_managed_file: '/usr/lib/python3.11/EXTERNALLY-MANAGED' } : {}),
    };
    let printed = '';
    let answer: Json = { language: 'python', environment };
    if (settings.kind === 'install' && this.interrupted) {
      return {
        status: 'error',
        outputs: [
          { output_type: 'stream', name: 'stdout', text: 'Installing collected packages: demo\n' },
          { output_type: 'error', ename: 'KeyboardInterrupt', evalue: '', traceback: [] },
        ],
      };
    }
    if (settings.kind === 'install') {
      const before = { ...this.packages };
      printed = 'Processing things\nSuccessfully installed\n';
      if (this.exitCode === 0) {
        for (const spec of settings.specs as string[]) {
          const [name, version] = (spec.split('/').at(-1) as string).replace('.whl', '').split('-');
          this.packages[name as string] = version ?? '1.0';
        }
      } else printed = 'ERROR: no such thing\n';
      const changed = Object.keys(this.packages).filter((name) => before[name] !== this.packages[name]);
      answer = {
        ...answer,
        install: {
          ran: settings.interpreter === this.interpreter && settings.prefix === this.prefix,
          ...(settings.interpreter === this.interpreter && settings.prefix === this.prefix
            ? {}
            : { why: 'environment_changed' }),
          command: ['python', '-m', 'pip', 'install', ...(settings.specs as string[])],
          exit_code: this.exitCode,
          before,
          after: { ...this.packages },
          loaded: changed
            .filter((name) => this.loaded.includes(name))
            .map((name) => ({ package: name, modules: [name] })),
        },
      };
    } else {
      const names = Object.keys(this.packages)
        .sort()
        .filter((name) => name.includes(String(settings.filter)));
      const start = Number(settings.start);
      answer = {
        ...answer,
        total: names.length,
        packages: names
          .slice(start, start + Number(settings.count))
          .map((name) => ({ name, version: this.packages[name] })),
      };
    }
    const text = `${printed}\n${String(settings.marker)}${JSON.stringify(answer)}\n`;
    return { status: 'ok', outputs: [{ output_type: 'stream', name: 'stdout', text }] };
  };

  public installs(): Json[] {
    return this.programs.filter((program) => program.kind === 'install');
  }
}

describe('package tools', () => {
  let harness: ChildServerTestHarness;
  let environment: FakeEnvironment;
  let asked: Json[];
  let answer: ElicitResult;
  afterEach(async () => {
    await harness.close();
  });

  async function withNotebook(options: { elicitation?: boolean; allowInstalls?: boolean } = {}) {
    environment = new FakeEnvironment();
    asked = [];
    answer = { action: 'accept', content: { confirm: true } };
    harness = await startChildServerTestHarness({
      daemon: { executor: environment.executor },
      server: { allowInstalls: options.allowInstalls === true },
      ...(options.elicitation === false ? {} : { clientCapabilities: { elicitation: {} } }),
    });
    if (options.elicitation !== false) {
      harness.client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params as Json);
        return answer;
      });
    }
    return harness.createNotebook();
  }

  it('list_packages: the environment and a page of packages, filtered, changing no cell', async () => {
    const handle = await withNotebook();
    const listed = await harness.callJson('list_packages', { count: 2 });
    expect(listed).toMatchObject({
      notebook_id: handle.notebookId,
      language: 'python',
      environment: { interpreter: '/project/.venv/bin/python', prefix: '/project/.venv', kind: 'venv' },
      total: 3,
      packages: [
        { name: 'ipykernel', version: '6.20.2' },
        { name: 'numpy', version: '1.24.2' },
      ],
      truncated: { next_start: 2 },
    });
    expect(await harness.callJson('list_packages', { filter: 'pi' })).toMatchObject({ total: 1, filter: 'pi' });
    expect(await toolError(harness.call('list_packages', { count: 501 }))).toContain('count must be between 1 and 500');
    expect(handle.scratchRuns).toHaveLength(2);
    expect(await harness.callJson('get_all_cells', { format: 'json' })).toMatchObject({ cells: [] });
  });

  it('install_packages: asks with the exact packages, the environment and the fingerprint; yes installs and says what changed', async () => {
    await withNotebook();
    const installed = await harness.callJson('install_packages', { packages: ['/w/demo-0.1.whl'] });
    expect(asked).toHaveLength(1);
    const message = String(asked[0]?.message);
    expect(message).toContain('• /w/demo-0.1.whl');
    expect(message).toContain('Interpreter: /project/.venv/bin/python');
    expect(message).toContain('Prefix: /project/.venv (venv, with pip)');
    const fingerprint = /Fingerprint: ([0-9a-f]{16})/.exec(message)?.[1];
    expect(installed).toMatchObject({
      status: 'installed',
      packages: ['/w/demo-0.1.whl'],
      consent: `the person said yes (fingerprint ${fingerprint})`,
      changes: { added: [{ name: 'demo', version: '0.1' }], changed: [], removed: [] },
      output_tail: 'Processing things\nSuccessfully installed',
    });
    expect(environment.installs()).toEqual([
      expect.objectContaining({
        specs: ['/w/demo-0.1.whl'],
        interpreter: '/project/.venv/bin/python',
        prefix: '/project/.venv',
      }),
    ]);
  });

  it('install_packages: declined or cancelled, nothing is installed and the answer says so', async () => {
    await withNotebook();
    for (const given of [{ action: 'decline' }, { action: 'cancel' }] as ElicitResult[]) {
      answer = given;
      const result = await harness.call('install_packages', { packages: ['demo'] });
      expect(resultText(result)).toBe('Not done: the person did not confirm install_packages; nothing was changed.');
    }
    expect(environment.installs()).toEqual([]);
  });

  it('install_packages: a client without elicitation is refused (how the person allows it); the person’s standing yes installs without asking', async () => {
    await withNotebook({ elicitation: false });
    const refused = await toolError(harness.call('install_packages', { packages: ['demo'] }));
    expect(refused).toContain('NTERACT_MCP_ALLOW_INSTALLS=1');
    expect(refused).toContain('not a tool argument');
    expect(environment.installs()).toEqual([]);
    await harness.close();
    await withNotebook({ elicitation: false, allowInstalls: true });
    expect(await harness.callJson('install_packages', { packages: ['demo'] })).toMatchObject({
      status: 'installed',
      consent: expect.stringContaining('without asking'),
    });
  });

  it('install_packages: a system-managed Python is refused before anyone is asked', async () => {
    await withNotebook();
    environment.externallyManaged = true;
    const refused = await toolError(harness.call('install_packages', { packages: ['demo'] }));
    expect(refused).toContain('PEP 668: /usr/lib/python3.11/EXTERNALLY-MANAGED');
    expect(refused).toContain('--break-system-packages');
    expect(asked).toEqual([]);
    expect(environment.installs()).toEqual([]);
  });

  it('install_packages: bad specs are refused before anything runs or anyone is asked', async () => {
    await withNotebook();
    for (const bad of ['-e .', 'demo; rm -rf /', 'demo ==1', 'demo @ https://x', '../demo.whl', '/w/../x.whl']) {
      expect(await toolError(harness.call('install_packages', { packages: [bad] })), bad).toContain('nothing ran');
    }
    expect(asked).toEqual([]);
    expect(environment.programs).toEqual([]);
  });

  it('install_packages: an environment changed after the yes is not installed into', async () => {
    await withNotebook();
    let listings = 0;
    environment.beforeAnswer = () => {
      listings += 1;
      // The question's listing sees the venv; the kernel restarts into another before the install.
      if (listings === 2) environment.prefix = '/elsewhere';
    };
    const refused = await toolError(harness.call('install_packages', { packages: ['demo'] }));
    expect(refused).toContain('no longer the one the person said yes to');
    expect(asked).toHaveLength(1);
    expect(environment.installs()).toEqual([]);
  });

  it('install_packages: a failure that changed nothing is an error saying so; a changed imported package needs a restart', async () => {
    await withNotebook();
    environment.exitCode = 1;
    const failed = await toolError(harness.call('install_packages', { packages: ['demo'] }));
    expect(failed).toContain('the environment is as it was');
    expect(failed).toContain('ERROR: no such thing');
    // Interrupted part way: not an error (something may have changed), and not a claim either way.
    environment.interrupted = true;
    const interrupted = await harness.callJson('install_packages', { packages: ['demo'] });
    expect(interrupted).toMatchObject({ status: 'unknown', output_tail: 'Installing collected packages: demo' });
    expect(String(interrupted.note)).toContain('What the install changed is not known');
    environment.interrupted = false;
    environment.exitCode = 0;
    environment.loaded = ['numpy'];
    const upgraded = await harness.callJson('install_packages', { packages: ['/w/numpy-2.0.whl'] });
    expect(upgraded).toMatchObject({
      changes: { changed: [{ name: 'numpy', from: '1.24.2', to: '2.0' }] },
      restart_needed: { packages: ['numpy'] },
    });
    // restart=true restarts at once, through the path restart_kernel takes; the question said so.
    const restarted = await harness.callJson('install_packages', { packages: ['/w/numpy-2.1.whl'], restart: true });
    expect(restarted).toMatchObject({ restarted: true, changes: { changed: [{ name: 'numpy', to: '2.1' }] } });
    expect(restarted).not.toHaveProperty('restart_needed');
    expect(String(asked.at(-1)?.message)).toContain('Then the kernel restarts');
  });
});
