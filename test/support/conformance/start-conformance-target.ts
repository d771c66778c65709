import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createUserEnvironment, type UserEnvironment } from '../create-user-environment.js';
import { descendantsOf, type ProcessInfo, processesWithHome } from '../process-tree.js';
import { shippedBins } from '../shipped-bins.js';
import { waitFor } from '../wait-for.js';
import { parseSuiteOutput, type SuiteOutput } from './parse-suite-output.js';

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

/** One check the suite reported for a scenario. */
export interface ConformanceCheck {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** `SUCCESS`, `FAILURE`, `WARNING`, `SKIPPED` or `INFO`. */
  readonly status: string;
  readonly errorMessage?: string;
}

/** One run of the suite's CLI, and what it printed (read as {@link parseSuiteOutput} reads it). */
export interface SuiteRun extends SuiteOutput {
  /** The command as run, with the target's URL in it, e.g. `conformance server --url http://… --scenario ping`. */
  readonly command: string;
  /** The suite's exit code: 0 when no check failed. */
  readonly exitCode: number | null;
  readonly output: string;
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
  /**
   * Runs the suite's CLI with `args` (the words after `conformance`, `<url>` standing for the
   * bridge's URL), as an outsider types it: no option added, the suite's defaults for the rest.
   */
  runConformance(args: readonly string[]): Promise<SuiteRun>;
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
    const runConformance = async (args: readonly string[]): Promise<SuiteRun> => {
      const withUrl = args.map((arg) => (arg === '<url>' ? url : arg));
      const { exitCode, output } = await runSuite(withUrl, environment.dirs.project, suites);
      return { command: ['conformance', ...withUrl].join(' '), exitCode, output, ...parseSuiteOutput(output) };
    };
    return { url, environment, bridge, stderr: () => stderr, runConformance, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Runs the suite's CLI (`conformance` is its bin) with the Node 20 shim preloaded, as the README
 * says to on Node 20 (a no-op on a Node with `fs.globSync`); resolves with its exit code and output.
 */
function runSuite(
  args: readonly string[],
  cwd: string,
  running: Set<ChildProcess>,
): Promise<{ exitCode: number | null; output: string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_OPTIONS: `--import ${pathToFileURL(node20ShimModule).href}`,
  };
  return new Promise((resolve, reject) => {
    const suite = spawn(process.execPath, [conformanceCli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
