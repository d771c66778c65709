import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  childrenOf,
  createUserEnvironment,
  isAlive,
  nativeRawRequests,
  shippedBins,
  spawnShippedProxy,
  startJupyterServer,
  startUserSession,
  type ToolOutcome,
  type UserSession,
  type UserSessionOptions,
  waitFor,
} from './support/index.js';

/**
 * What the agent may change in the kernel's environment with the person's yes (issue 47):
 * `list_packages` and `install_packages` through the shipped proxy as a user runs it, on a Python
 * kernel of a project venv and on an R kernel, with no package index: the tests build their own
 * tiny packages (a wheel written by hand, an R source package built with `R CMD build`). The
 * venv's package list is read from outside the product (`<venv>/bin/python -m pip list`).
 */

const run = promisify(execFile);
type Json = Record<string, unknown>;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: UserSessionOptions = {}): Promise<UserSession> {
  const session = await startUserSession(options);
  cleanups.push(() => session.stop());
  return session;
}

/** A Python package `name` of `version`, as a wheel written by hand (a zip: the module, METADATA, WHEEL, RECORD). */
async function buildWheel(dir: string, name: string, version: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}-${version}-py3-none-any.whl`);
  const script = [
    'import base64, hashlib, sys, zipfile',
    'path, name, version = sys.argv[1:4]',
    'info = "%s-%s.dist-info" % (name, version)',
    'files = {name + "/__init__.py": "VALUE = %r\\n" % version,',
    '  info + "/METADATA": "Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n" % (name, version),',
    '  info + "/WHEEL": "Wheel-Version: 1.0\\nGenerator: by-hand\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}',
    'digest = lambda text: "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()',
    'record = "".join("%s,%s,%d\\n" % (key, digest(text), len(text.encode())) for key, text in files.items()) + info + "/RECORD,,\\n"',
    'with zipfile.ZipFile(path, "w") as wheel:',
    '    for key, text in files.items(): wheel.writestr(key, text)',
    '    wheel.writestr(info + "/RECORD", record)',
  ].join('\n');
  await run('/usr/bin/python3', ['-c', script, path, name, version]);
  return path;
}

/** `python3 -m venv --system-site-packages <project>/.venv` (Debian's ipykernel comes with the system site). */
async function makeVenv(project: string): Promise<string> {
  const venv = join(project, '.venv');
  await run('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', venv], { timeout: 120_000 });
  return venv;
}

/** The venv's packages (name → version) as pip lists them, read outside the product. */
async function pipList(venv: string): Promise<Record<string, string>> {
  const { stdout } = await run(join(venv, 'bin', 'python'), ['-m', 'pip', 'list', '--format=json'], {
    timeout: 60_000,
  });
  const listed = JSON.parse(stdout) as { name: string; version: string }[];
  return Object.fromEntries(listed.map((entry) => [entry.name.toLowerCase(), entry.version]));
}

/** Whether `/usr/bin/python3` (not the venv) can import `name`. */
async function systemImports(name: string): Promise<boolean> {
  return run('/usr/bin/python3', ['-c', `import ${name}`]).then(
    () => true,
    () => false,
  );
}

async function ok(session: UserSession, name: string, args: Json = {}): Promise<Json> {
  const outcome = await session.call(name, args);
  expect(outcome.isError, `${name}: ${outcome.text}`).toBe(false);
  return outcome.json ?? {};
}

/** What `code` printed in the kernel (run_code's stream outputs). */
async function printed(session: UserSession, code: string): Promise<string> {
  const ran = await ok(session, 'run_code', { code, timeout_secs: 60 });
  return ((ran.outputs ?? []) as { output_type?: string; text?: string; ename?: string }[])
    .map((output) => output.text ?? output.ename ?? '')
    .join('');
}

describe('list_packages and install_packages (Python, legacy era)', () => {
  it('lists the venv kernel’s packages; a declined install changes nothing; a yes installs into the venv only, streaming its output, and the package imports in the kernel; a changed imported package asks for a restart', {
    timeout: 300_000,
  }, async () => {
    const session = await start({ capabilities: { elicitation: {} } });
    const asked: Json[] = [];
    let answer: 'accept' | 'decline' = 'decline';
    session.client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
      asked.push(request.params as Json);
      return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
    });
    const venv = await makeVenv(session.dirs.project);
    const wheel = await buildWheel(join(session.dirs.project, 'wheels'), 'nmcpdemo', '0.1');
    const created = await ok(session, 'create_notebook');
    expect(created.interpreter).toBe(join(venv, 'bin', 'python'));

    const listed = await ok(session, 'list_packages', { filter: 'pip' });
    expect(listed).toMatchObject({
      language: 'python',
      environment: { interpreter: join(venv, 'bin', 'python'), prefix: venv, kind: 'venv', externally_managed: false },
    });
    expect(listed.packages).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'pip' })]));
    const before = await pipList(venv);
    expect(before.nmcpdemo).toBeUndefined();

    // Declined: the question showed the exact package and the environment; nothing changed.
    const declined = await session.call('install_packages', { packages: [wheel] });
    expect(declined.text).toContain('the person did not confirm install_packages; nothing was changed');
    expect(asked).toHaveLength(1);
    const message = String(asked[0]?.message);
    expect(message).toContain(wheel);
    expect(message).toContain(`Interpreter: ${join(venv, 'bin', 'python')}`);
    expect(message).toContain(`Prefix: ${venv}`);
    expect(message).toMatch(/Fingerprint: [0-9a-f]{16}/);
    expect(await pipList(venv)).toEqual(before);

    // A bad spec is refused before anything runs (nobody is asked).
    for (const bad of ['--index-url=http://example.invalid', 'nmcpdemo; rm -rf /', 'nmcpdemo ==0.1', '-e .']) {
      const refused = await session.call('install_packages', { packages: [bad] });
      expect(refused.isError, bad).toBe(true);
      expect(refused.text, bad).toContain('nothing ran');
    }
    expect(asked).toHaveLength(1);

    // Yes: installed into the venv only, its output streamed as progress.
    answer = 'accept';
    const progress: string[] = [];
    const raw = (await session.client.callTool(
      { name: 'install_packages', arguments: { packages: [wheel] } },
      CallToolResultSchema,
      { timeout: 180_000, onprogress: (note) => progress.push(String(note.message ?? '')) },
    )) as { content: { type: string; text?: string }[]; isError?: boolean };
    const text = raw.content.map((item) => item.text ?? '').join('\n');
    expect(raw.isError, text).not.toBe(true);
    const installed = JSON.parse(raw.content[0]?.text ?? '{}') as Json;
    expect(installed).toMatchObject({
      status: 'installed',
      environment: { interpreter: join(venv, 'bin', 'python'), prefix: venv },
      changes: { added: [{ name: 'nmcpdemo', version: '0.1' }], changed: [], removed: [] },
      consent: expect.stringContaining('the person said yes'),
    });
    expect(String(installed.output_tail)).toContain('Successfully installed nmcpdemo-0.1');
    expect(progress.some((note) => note.includes('install_packages:'))).toBe(true);
    expect(asked).toHaveLength(2);
    const after = await pipList(venv);
    expect(after).toEqual({ ...before, nmcpdemo: '0.1' });
    expect(await systemImports('nmcpdemo')).toBe(false);
    expect(await printed(session, 'import nmcpdemo\nprint("value", nmcpdemo.VALUE)')).toContain('value 0.1');

    // A new version of a package the kernel imported: installed, and the answer says a restart is needed.
    const newer = await buildWheel(join(session.dirs.project, 'wheels'), 'nmcpdemo', '0.2');
    const upgraded = await ok(session, 'install_packages', { packages: [newer] });
    expect(upgraded).toMatchObject({
      status: 'installed',
      changes: { added: [], changed: [{ name: 'nmcpdemo', from: '0.1', to: '0.2' }] },
      restart_needed: { packages: ['nmcpdemo'] },
    });
    expect(String((upgraded.restart_needed as Json).note)).toContain('restart_kernel');
    expect((await pipList(venv)).nmcpdemo).toBe('0.2');
  });
});

describe('install_packages without the person asked', () => {
  it('a client without elicitation is refused, saying how the person can allow installs; nothing changes', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    const venv = await makeVenv(session.dirs.project);
    const wheel = await buildWheel(join(session.dirs.project, 'wheels'), 'nmcpdemo', '0.1');
    await ok(session, 'create_notebook');
    const before = await pipList(venv);
    const refused: ToolOutcome = await session.call('install_packages', { packages: [wheel] });
    expect(refused.isError, refused.text).toBe(true);
    expect(refused.text).toContain('NTERACT_MCP_ALLOW_INSTALLS=1');
    expect(refused.text).toContain('nothing ran');
    expect(await pipList(venv)).toEqual(before);
  });

  it('NTERACT_MCP_ALLOW_INSTALLS=1 in the client’s config installs without asking, and says so', {
    timeout: 240_000,
  }, async () => {
    const session = await start({ env: { NTERACT_MCP_ALLOW_INSTALLS: '1' } });
    const venv = await makeVenv(session.dirs.project);
    const wheel = await buildWheel(join(session.dirs.project, 'wheels'), 'nmcpdemo', '0.1');
    await ok(session, 'create_notebook');
    const before = await pipList(venv);
    const installed = await ok(session, 'install_packages', { packages: [wheel] });
    expect(installed).toMatchObject({
      status: 'installed',
      consent: expect.stringContaining('without asking'),
      changes: { added: [{ name: 'nmcpdemo', version: '0.1' }] },
    });
    expect(await pipList(venv)).toEqual({ ...before, nmcpdemo: '0.1' });
    expect(await printed(session, 'import nmcpdemo\nprint(nmcpdemo.VALUE)')).toContain('0.1');
  });

  it('a system-managed Python (PEP 668) is refused before anyone is asked; nothing changes', {
    timeout: 240_000,
  }, async () => {
    const session = await start({ capabilities: { elicitation: {} }, env: { NTERACT_MCP_ALLOW_INSTALLS: '1' } });
    const asked: Json[] = [];
    session.client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
      asked.push(request.params as Json);
      return { action: 'accept', content: { confirm: true } };
    });
    const wheel = await buildWheel(join(session.dirs.project, 'wheels'), 'nmcpdemo', '0.1');
    await ok(session, 'create_notebook');
    const listed = await ok(session, 'list_packages', { count: 500 });
    expect(listed.environment).toMatchObject({ kind: 'system', externally_managed: true });
    const interpreter = String((listed.environment as Json).interpreter);
    const { stdout } = await run(interpreter, ['-m', 'pip', 'list', '--format=json']);
    const refused = await session.call('install_packages', { packages: [wheel] });
    expect(refused.isError, refused.text).toBe(true);
    expect(refused.text).toContain('PEP 668');
    expect(refused.text).toContain('--break-system-packages');
    expect(refused.text).toContain('virtual environment');
    expect(asked).toEqual([]);
    expect((await run(interpreter, ['-m', 'pip', 'list', '--format=json'])).stdout).toBe(stdout);
    expect(await systemImports('nmcpdemo')).toBe(false);
  });
});

describe('install_packages in the 2026-07-28 era', () => {
  it('asks through input_required with a fingerprint; a retry carrying another fingerprint is asked again and installs nothing; declined changes nothing; yes installs', {
    timeout: 300_000,
  }, async () => {
    const environment = createUserEnvironment(shippedBins.runtimed);
    const venv = await makeVenv(environment.dirs.project);
    const wheel = await buildWheel(join(environment.dirs.project, 'wheels'), 'nmcpdemo', '0.1');
    const { transport, stderr } = spawnShippedProxy(V2StdioTransport, {
      env: environment.env,
      cwd: environment.dirs.project,
    });
    const client = new Client(
      { name: 'v2-packages', version: '2.4.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
    );
    // The person declines what the client asks; the yes below is written by hand.
    const asked: Json[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as Json);
      return { action: 'decline' };
    });
    cleanups.push(async () => {
      const proxy = transport.pid;
      const child =
        proxy === null ? undefined : childrenOf(proxy).find((info) => info.cmdline.includes('runt-mcp'))?.pid;
      await client.close().catch(() => undefined);
      for (const pid of [proxy, child].filter((pid): pid is number => typeof pid === 'number')) {
        await waitFor(`process ${pid} to exit`, () => !isAlive(pid), { timeoutMs: 15_000 }).catch(() => {
          if (isAlive(pid)) process.kill(pid, 'SIGKILL');
        });
      }
      await environment.cleanup();
    });
    try {
      await client.connect(transport);
    } catch (error) {
      throw new Error(`the v2 client did not connect: ${(error as Error).message}\n${stderr()}`);
    }
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    // A 2026-07-28 tools/call sent on the transport past the client (with the envelope it would add),
    // so the test sees the input_required answers and writes the retries itself.
    const raw = nativeRawRequests(transport, {
      clientCapabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'v2-packages', version: '2.4.0' },
    });
    const call = (name: string, args: Json, extra: Json = {}): Promise<Json> =>
      raw('tools/call', { name, arguments: args, ...extra });
    const created = (await client.callTool({ name: 'create_notebook', arguments: {} }, { timeout: 180_000 })) as Json;
    expect(created.isError, JSON.stringify(created)).not.toBe(true);
    const before = await pipList(venv);

    // The client fulfils input_required with its handler and retries: declined, nothing installed.
    const declined = (await client.callTool(
      { name: 'install_packages', arguments: { packages: [wheel] } },
      { timeout: 180_000 },
    )) as { content: { text?: string }[] };
    expect(declined.content.map((item) => item.text).join('')).toContain('the person did not confirm install_packages');
    expect(String(asked[0]?.message)).toContain(wheel);
    expect(String(asked[0]?.message)).toContain(join(venv, 'bin', 'python'));
    expect(await pipList(venv)).toEqual(before);

    // By hand: the first answer is input_required naming the fingerprint; a retry whose
    // requestState names another is asked again, and nothing is installed.
    const first = await call('install_packages', { packages: [wheel] });
    expect(first).toMatchObject({
      resultType: 'input_required',
      requestState: expect.stringMatching(/^install_packages:[0-9a-f]{64}$/),
    });
    const state = String(first.requestState);
    const yes = { confirm: { action: 'accept', content: { confirm: true } } };
    const stale = await call(
      'install_packages',
      { packages: [wheel] },
      {
        inputResponses: yes,
        requestState: `install_packages:${'0'.repeat(64)}`,
      },
    );
    expect(stale).toMatchObject({ resultType: 'input_required', requestState: state });
    expect(await pipList(venv)).toEqual(before);

    // The retry for what was shown installs it.
    const done = await call('install_packages', { packages: [wheel] }, { inputResponses: yes, requestState: state });
    const text = ((done.content ?? []) as { text?: string }[]).map((item) => item.text ?? '').join('');
    expect(done.isError, text).not.toBe(true);
    expect(JSON.parse(text.slice(0, text.lastIndexOf('}') + 1))).toMatchObject({
      status: 'installed',
      changes: { added: [{ name: 'nmcpdemo', version: '0.1' }] },
    });
    expect(await pipList(venv)).toEqual({ ...before, nmcpdemo: '0.1' });
    expect(await systemImports('nmcpdemo')).toBe(false);
  });
});

describe('list_packages and install_packages (R)', () => {
  it('lists the R library the test put first, and installs a self-built source package into it; library() loads it', {
    timeout: 300_000,
  }, async () => {
    // The temp R library the kernel puts first, made before the session starts (R skips a missing one).
    const userLibrary = mkdtempSync(join(tmpdir(), 'nmcp-rlib-'));
    cleanups.push(async () => rmSync(userLibrary, { recursive: true, force: true }));
    const session = await start({ capabilities: { elicitation: {} }, env: { R_LIBS_USER: userLibrary } });
    session.client.setRequestHandler(
      ElicitRequestSchema,
      async (): Promise<ElicitResult> => ({
        action: 'accept',
        content: { confirm: true },
      }),
    );
    const source = join(session.dirs.project, 'rsrc', 'nmcpdemor');
    mkdirSync(join(source, 'R'), { recursive: true });
    writeFileSync(
      join(source, 'DESCRIPTION'),
      'Package: nmcpdemor\nVersion: 0.1\nTitle: A Test Package\nDescription: Built by the test.\nLicense: MIT\nAuthor: Test\nMaintainer: Test <test@example.com>\n',
    );
    writeFileSync(join(source, 'NAMESPACE'), 'export(nmcp_value)\n');
    writeFileSync(join(source, 'R', 'x.R'), 'nmcp_value <- function() 41L\n');
    await run('R', ['CMD', 'build', source], { cwd: join(session.dirs.project, 'rsrc'), timeout: 120_000 });
    const tarball = join(session.dirs.project, 'rsrc', 'nmcpdemor_0.1.tar.gz');

    await ok(session, 'create_notebook', { kernel: 'ir' });
    const listed = await ok(session, 'list_packages', { filter: 'jsonlite' });
    expect(listed).toMatchObject({ language: 'r', environment: { prefix: userLibrary, kind: 'R library' } });
    expect((listed.environment as { lib_paths: string[] }).lib_paths[0]).toBe(userLibrary);
    expect(listed.packages).toEqual([expect.objectContaining({ name: 'jsonlite' })]);

    const installed = await ok(session, 'install_packages', { packages: [tarball] });
    expect(installed).toMatchObject({
      status: 'installed',
      environment: { prefix: userLibrary },
      changes: { added: [{ name: 'nmcpdemor', version: '0.1' }], changed: [], removed: [] },
    });
    expect(String(installed.output_tail)).toContain('DONE (nmcpdemor)');
    expect(await printed(session, 'library(nmcpdemor)\ncat("value", nmcp_value(), "\\n")')).toContain('value 41');
    const after = await ok(session, 'list_packages', { filter: 'nmcpdemor' });
    expect(after.packages).toEqual([{ name: 'nmcpdemor', version: '0.1', library: userLibrary }]);
  });
});

describe('list_packages and install_packages on a hosted kernel', () => {
  it('read the hosted kernel’s own interpreter through the same scratch runs; its system Python is refused, unchanged', {
    timeout: 240_000,
  }, async () => {
    const token = `tok-${process.pid}-${Date.now().toString(36)}`;
    const server = await startJupyterServer({ token });
    cleanups.push(() => server.dispose());
    await server.putEmptyNotebook('hosted.ipynb');
    const session = await start({ env: { JUPYTER_TOKEN: token, NTERACT_MCP_ALLOW_INSTALLS: '1' } });
    await ok(session, 'connect_notebook', { url: server.notebookUrl('hosted.ipynb') });
    const listed = await ok(session, 'list_packages', { filter: 'ipykernel' });
    expect(listed).toMatchObject({
      language: 'python',
      environment: { interpreter: '/usr/bin/python3', kind: 'system', externally_managed: true },
      packages: [expect.objectContaining({ name: 'ipykernel' })],
    });
    const wheel = await buildWheel(join(session.dirs.project, 'wheels'), 'nmcpdemo', '0.1');
    const everything = await ok(session, 'list_packages', { count: 500 });
    const refused = await session.call('install_packages', { packages: [wheel] });
    expect(refused.isError, refused.text).toBe(true);
    expect(refused.text).toContain('PEP 668');
    expect(await ok(session, 'list_packages', { count: 500 })).toEqual(everything);
    expect(await systemImports('nmcpdemo')).toBe(false);
  });
});
