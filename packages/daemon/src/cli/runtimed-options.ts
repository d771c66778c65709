import { DaemonError } from '../daemon-error.js';

/** Everything `runtimed` accepts on its command line, parsed and checked. */
export interface RuntimedOptions {
  readonly command: 'start' | 'status' | 'stop' | 'open' | 'page' | 'help' | 'version';
  readonly foreground: boolean;
  readonly json: boolean;
  readonly socketPath?: string;
  readonly dataDir?: string;
  readonly logFile?: string;
  readonly noKernels: boolean;
  readonly python?: string;
  readonly kernelspecDir?: string;
  readonly keepAliveMs: number;
  /** Kernel lifetime after a last peer whose connection dropped without `leave` (a crashed client). */
  readonly vanishedPeerKeepAliveMs: number;
  /** fdatasync the journal after every edit (survives power loss; costs a disk flush per edit). */
  readonly journalFsync: boolean;
  readonly reaperIntervalMs: number;
  readonly roomTtlMs: number;
  readonly roomSoftCap: number;
  readonly autosaveDebounceMs: number;
  readonly autosaveMaxDelayMs: number;
  /** Largest wire message sent or accepted (default: the wire contract's 256 MiB). */
  readonly maxMessageBytes?: number;
  /** How often the daemon checks that its socket path is still its own (0: never). */
  readonly socketCheckMs: number;
  /** A stall (the process stopped) this long makes the requests that waited meanwhile refused. */
  readonly stallRefusalMs: number;
  /** The web page's port on 127.0.0.1 (0: a free one). */
  readonly pagePort: number;
  /** Serve no web page. */
  readonly noPage: boolean;
  /** `open`: the notebook (a path or a notebook id) whose page to open; the index without it. */
  readonly target?: string;
  /** `page --rotate`: give the web page a new token (the only thing `page` does, and it must be asked). */
  readonly rotate: boolean;
}

export const runtimedUsage = `runtimed: the local notebook daemon of nteract-mcp (rooms, peers, autosave, Jupyter kernels).

Usage:
  runtimed start [--foreground] [--socket PATH] [--data-dir DIR] [--keep-alive-secs N] [options]
  runtimed status [--json] [--socket PATH] [--data-dir DIR]
  runtimed stop [--socket PATH] [--data-dir DIR]
  runtimed open [PATH|NOTEBOOK_ID] [--socket PATH] [--data-dir DIR]
                         Print an address that opens the daemon's web page (of that notebook, else
                         the list of notebooks) once, within an hour, and open the page in a browser
                         if a desktop session runs. Run it again for another address.
  runtimed page --rotate [--socket PATH] [--data-dir DIR]
                         Give the web page a new token: every page open so far, and every address
                         given so far, stops working ('runtimed open' gives new addresses).

start options:
  --foreground           Run in this process (logs on stderr). Without it the daemon detaches
                         and logs to runtimed.log beside the socket.
  --socket PATH          Socket path (default: $RUNTIMED_SOCKET_PATH, else
                         $XDG_RUNTIME_DIR/runt/runtimed.sock, else ~/.cache/runt/runtimed.sock).
  --data-dir DIR         Registry and persisted untitled notebooks (default ~/.local/share/runt).
  --keep-alive-secs N    Kernel lifetime after the last peer leaves (default 30).
  --vanished-keep-alive-secs N
                         Kernel lifetime after the last peer's connection dropped without
                         leaving, e.g. a crashed client that will be restarted (default 180).
  --journal-fsync        fdatasync the edit journal after every edit (survives power loss too;
                         without it an acknowledged edit survives a daemon crash).
  --no-kernels           Never start kernels; rooms report their runtime as unavailable.
  --page-port N          The web page's port on 127.0.0.1 (default: a free one).
  --no-page              Serve no web page.
  --python PATH          Use this interpreter (it must have ipykernel) instead of searching.
  --kernelspec-dir DIR   Look for kernelspecs only in DIR (default: the Jupyter data dirs).
  --log-file PATH        Where a detached daemon logs.
  --max-message-mib N    Largest message on the wire, e.g. a notebook with its outputs
                         (default 256; sent as 1 MiB frames). A bigger answer is refused with an error.

tuning (milliseconds unless said; mostly for tests):
  --keep-alive-ms N  --vanished-keep-alive-ms N  --reaper-interval-ms N (300000)  --room-ttl-ms N (86400000)
  --room-soft-cap N (32 rooms)  --autosave-debounce-ms N (1000)  --autosave-max-ms N (5000)
  --socket-check-ms N (1000; 0 never): how often the daemon checks that its socket path is still
                     its own; when it was removed or replaced the daemon saves and exits.
  --stall-refusal-ms N (20000): a daemon whose process was stopped (SIGSTOP) or stalled this long
                     applies none of the requests that waited meanwhile (their senders have given up).

Other: -h/--help, -V/--version. 'status' exits 0 when the daemon answers, 3 when no daemon runs,
and 1 when a daemon process holds the lock but does not answer on its socket ('stop' stops it).
'open' and 'page --rotate' exit 3 when no daemon runs and 1 when it serves no web page.
`;

const numeric: Readonly<Record<string, { key: keyof RuntimedOptions; scale: number; max: number }>> = {
  '--keep-alive-secs': { key: 'keepAliveMs', scale: 1000, max: 604_800 },
  '--keep-alive-ms': { key: 'keepAliveMs', scale: 1, max: 604_800_000 },
  '--vanished-keep-alive-secs': { key: 'vanishedPeerKeepAliveMs', scale: 1000, max: 604_800 },
  '--vanished-keep-alive-ms': { key: 'vanishedPeerKeepAliveMs', scale: 1, max: 604_800_000 },
  '--reaper-interval-ms': { key: 'reaperIntervalMs', scale: 1, max: 86_400_000 },
  '--room-ttl-ms': { key: 'roomTtlMs', scale: 1, max: 31_536_000_000 },
  '--room-soft-cap': { key: 'roomSoftCap', scale: 1, max: 100_000 },
  '--autosave-debounce-ms': { key: 'autosaveDebounceMs', scale: 1, max: 3_600_000 },
  '--autosave-max-ms': { key: 'autosaveMaxDelayMs', scale: 1, max: 3_600_000 },
  '--max-message-mib': { key: 'maxMessageBytes', scale: 1024 * 1024, max: 512 },
  '--socket-check-ms': { key: 'socketCheckMs', scale: 1, max: 3_600_000 },
  '--stall-refusal-ms': { key: 'stallRefusalMs', scale: 1, max: 3_600_000 },
  '--page-port': { key: 'pagePort', scale: 1, max: 65_535 },
};

const textual: Readonly<Record<string, keyof RuntimedOptions>> = {
  '--socket': 'socketPath',
  '--data-dir': 'dataDir',
  '--log-file': 'logFile',
  '--python': 'python',
  '--kernelspec-dir': 'kernelspecDir',
};

/** Parses argv (without node and script). Throws `invalidOption` with a message naming the option. */
export function parseRuntimedOptions(argv: readonly string[]): RuntimedOptions {
  const options: Record<string, unknown> = {
    command: 'help',
    foreground: false,
    json: false,
    noKernels: false,
    noPage: false,
    rotate: false,
    pagePort: 0,
    keepAliveMs: 30_000,
    vanishedPeerKeepAliveMs: 180_000,
    journalFsync: false,
    reaperIntervalMs: 300_000,
    roomTtlMs: 86_400_000,
    roomSoftCap: 32,
    autosaveDebounceMs: 1000,
    autosaveMaxDelayMs: 5000,
    socketCheckMs: 1000,
    stallRefusalMs: 20_000,
  };
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help')
    return options as unknown as RuntimedOptions;
  if (command === '-V' || command === '--version')
    return { ...(options as unknown as RuntimedOptions), command: 'version' };
  if (command !== 'start' && command !== 'status' && command !== 'stop' && command !== 'open' && command !== 'page') {
    throw new DaemonError(
      'invalidOption',
      `Unknown command '${command}'. Use start, status, stop, open or page (runtimed --help).`,
    );
  }
  options.command = command;
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index] as string;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const takeValue = (): string => {
      const value = inline ?? rest[++index];
      if (value === undefined || value === '') throw new DaemonError('invalidOption', `${flag} needs a value`);
      return value;
    };
    if (flag === '--foreground' && command === 'start') options.foreground = true;
    else if (flag === '--no-kernels' && command === 'start') options.noKernels = true;
    else if (flag === '--no-page' && command === 'start') options.noPage = true;
    else if (command === 'open' && !arg.startsWith('-') && options.target === undefined) options.target = arg;
    else if (flag === '--journal-fsync' && command === 'start') options.journalFsync = true;
    else if (flag === '--json' && command === 'status') options.json = true;
    else if (flag === '--rotate' && command === 'page') options.rotate = true;
    else if (flag === '--socket' || flag === '--data-dir' || (command === 'start' && flag in textual))
      options[textual[flag] as string] = takeValue();
    else if (command === 'start' && flag in numeric) {
      const spec = numeric[flag] as (typeof numeric)[string];
      const text = takeValue();
      const value = Number(text);
      if (!/^\d+$/.test(text) || value > spec.max) {
        throw new DaemonError('invalidOption', `${flag} must be a whole number from 0 to ${spec.max}, got '${text}'`);
      }
      options[spec.key] = value * spec.scale;
    } else if (flag === '-h' || flag === '--help')
      return { ...(options as unknown as RuntimedOptions), command: 'help' };
    else throw new DaemonError('invalidOption', `Unknown option '${arg}' for 'runtimed ${command}' (runtimed --help).`);
  }
  if (command === 'page' && !options.rotate) {
    throw new DaemonError(
      'invalidOption',
      "'runtimed page' needs --rotate: 'runtimed page --rotate' gives the web page a new token ('runtimed open' prints an address that opens the page).",
    );
  }
  if (options.maxMessageBytes === 0) throw new DaemonError('invalidOption', '--max-message-mib must be at least 1');
  if ((options.roomSoftCap as number) < 1) throw new DaemonError('invalidOption', '--room-soft-cap must be at least 1');
  if ((options.reaperIntervalMs as number) < 1)
    throw new DaemonError('invalidOption', '--reaper-interval-ms must be at least 1');
  return options as unknown as RuntimedOptions;
}
