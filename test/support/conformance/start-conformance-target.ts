import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createUserEnvironment, type UserEnvironment } from '../create-user-environment.js';
import { descendantsOf, type ProcessInfo, processesWithHome } from '../process-tree.js';
import { shippedBins } from '../start-user-session.js';
import { waitFor } from '../wait-for.js';

/** The suite's CLI (`conformance` bin of @modelcontextprotocol/conformance). */
export const conformanceCli = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
/** Preloaded into the suite's process: lets it load on Node 20 (see node20-shim/register.mjs). */
export const node20ShimModule = fileURLToPath(new URL('./node20-shim/register.mjs', import.meta.url));
/** The loopback Streamable-HTTP -> stdio bridge the suite talks to. */
export const stdioHttpBridge = fileURLToPath(new URL('./stdio-http-bridge.mjs', import.meta.url));

export interface ConformanceTargetOptions {
  /** Extra environment for the proxy (and so its child and the daemon), e.g. `NTERACT_MCP_PLUGINS`. */
  readonly env?: Readonly<Record<string, string>>;
  /** Arguments of the bridge before `--` (e.g. `['--warm-up', 'none']`). */
  readonly bridgeArgs?: readonly string[];
}

/** One check of a scenario's `checks.json`, as the suite writes it. */
export interface ConformanceCheck {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** `SUCCESS`, `FAILURE`, `WARNING`, `SKIPPED` or `INFO`. */
  readonly status: string;
  readonly errorMessage?: string;
  readonly details?: unknown;
}

export interface ScenarioRun {
  readonly scenario: string;
  /** The suite's exit code: 0 when every failure is in the baseline and no baseline entry passes. */
  readonly exitCode: number | null;
  readonly output: string;
  readonly checks: readonly ConformanceCheck[];
}

export interface RunScenarioOptions {
  /** `--spec-version` (the suite's default is the newest revision). */
  readonly specVersion?: string;
  /** `--expected-failures`: the baseline YAML. */
  readonly expectedFailures?: string;
  /** `--timeout` of the scenario in ms (the suite's default is 30 s, short on a loaded machine). */
  readonly timeoutMs?: number;
}

/** What `stop()` found. */
export interface ConformanceTargetStop {
  /** How the bridge ended after SIGTERM (`code 0` when it stopped its children and exited). */
  readonly bridgeExit: string;
  /** Processes of the session still running once the bridge was gone, except the daemon and its kernels. */
  readonly leftByBridge: readonly ProcessInfo[];
}

/**
 * The shipped `nteract-mcp` as a user starts it (fresh temp HOME/XDG dirs, nothing pre-started,
 * default options) behind the bridge, ready for the suite's `server --url`.
 */
export interface ConformanceTarget {
  /** The bridge's endpoint, e.g. `http://127.0.0.1:40123/mcp`. */
  readonly url: string;
  readonly environment: UserEnvironment;
  readonly bridge: ChildProcess;
  /** What the bridge and the servers behind it wrote to stderr. */
  stderr(): string;
  /** Runs one server scenario of the suite against the bridge and reads its `checks.json`. */
  runScenario(scenario: string, options?: RunScenarioOptions): Promise<ScenarioRun>;
  /**
   * SIGTERMs the bridge (it stops its servers), notes what it left running, then stops the daemon
   * and whatever else runs with the session's HOME, and removes the temp dirs. Idempotent.
   */
  stop(): Promise<ConformanceTargetStop>;
}

export async function startConformanceTarget(options: ConformanceTargetOptions = {}): Promise<ConformanceTarget> {
  const environment = createUserEnvironment(shippedBins.runtimed, options.env ? { env: options.env } : {});
  const bridge = spawn(
    process.execPath,
    [stdioHttpBridge, ...(options.bridgeArgs ?? []), '--port', '0', '--', process.execPath, shippedBins.proxy],
    { env: { ...environment.env }, cwd: environment.dirs.project, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  let exit: string | undefined;
  bridge.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  bridge.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  bridge.once('exit', (code, signal) => {
    exit = signal ? `signal ${signal}` : `code ${code}`;
  });

  /** Suite runs still going (a test that timed out leaves one behind): ended first by stop(). */
  const suites = new Set<ChildProcess>();
  let stopped: Promise<ConformanceTargetStop> | undefined;
  const stop = (): Promise<ConformanceTargetStop> => {
    stopped ??= (async () => {
      for (const suite of suites) suite.kill('SIGKILL');
      if (exit === undefined) bridge.kill('SIGTERM');
      // The bridge gives each server 5 s after closing its stdin, then 5 s after SIGTERM.
      await waitFor('the bridge to exit', () => exit !== undefined, { timeoutMs: 30_000 }).catch(() => {
        bridge.kill('SIGKILL');
      });
      await waitFor('the bridge to exit after SIGKILL', () => exit !== undefined, { timeoutMs: 10_000 });
      const daemon = environment.daemonPid();
      const daemonTree = new Set(
        daemon === undefined ? [] : [daemon, ...descendantsOf(daemon).map((info) => info.pid)],
      );
      const leftByBridge = processesWithHome(environment.dirs.home).filter((info) => !daemonTree.has(info.pid));
      await environment.cleanup();
      return { bridgeExit: exit ?? 'still running', leftByBridge };
    })();
    return stopped;
  };

  try {
    const url = await waitFor(
      'the bridge to listen',
      () => {
        if (exit !== undefined) throw new Error(`the bridge exited (${exit}): ${stderr}`);
        return /^listening (\S+)$/m.exec(stdout)?.[1];
      },
      { timeoutMs: 30_000 },
    );
    let runs = 0;
    const runScenario = async (scenario: string, run: RunScenarioOptions = {}): Promise<ScenarioRun> => {
      runs += 1;
      const outputDir = join(environment.dirs.root, 'conformance', `${runs}-${scenario}`);
      mkdirSync(outputDir, { recursive: true });
      const args = [conformanceCli, 'server', '--url', url, '--scenario', scenario, '-o', outputDir];
      if (run.specVersion) args.push('--spec-version', run.specVersion);
      if (run.expectedFailures) args.push('--expected-failures', run.expectedFailures);
      args.push('--timeout', String(run.timeoutMs ?? 120_000));
      const { exitCode, output } = await runSuite(args, outputDir, suites);
      return { scenario, exitCode, output, checks: readChecks(outputDir, scenario, output) };
    };
    return { url, environment, bridge, stderr: () => stderr, runScenario, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs the suite's CLI with the Node 20 shim preloaded; resolves with its exit code and output. */
function runSuite(
  args: readonly string[],
  cwd: string,
  running: Set<ChildProcess>,
): Promise<{ exitCode: number | null; output: string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_OPTIONS: `--import ${pathToFileURL(node20ShimModule).href}`,
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
  return new Promise((resolve, reject) => {
    const suite = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(suite);
    let output = '';
    suite.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    suite.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    suite.once('error', reject);
    suite.once('close', (code) => {
      running.delete(suite);
      resolve({ exitCode: code, output });
    });
  });
}

/** The `checks.json` the suite wrote under `outputDir` (in `server-<scenario>-<timestamp>/`). */
function readChecks(outputDir: string, scenario: string, output: string): ConformanceCheck[] {
  const runDirs = readdirSync(outputDir).filter((name) => name.startsWith(`server-${scenario}-`));
  if (runDirs.length !== 1) {
    throw new Error(`expected one result dir for ${scenario} in ${outputDir}, found ${runDirs.length}:\n${output}`);
  }
  const checks: unknown = JSON.parse(readFileSync(join(outputDir, runDirs[0] as string, 'checks.json'), 'utf8'));
  if (!Array.isArray(checks)) throw new Error(`checks.json of ${scenario} is not an array`);
  return checks as ConformanceCheck[];
}
