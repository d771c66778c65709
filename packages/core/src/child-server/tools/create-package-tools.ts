import * as z from 'zod';
import type { CellOutput, NotebookHandle } from '../../ports/notebook-handle.js';
import { accessWhenReady } from '../access-when-ready.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { executionRecordOf } from '../executions/execution-store.js';
import { lostStateJson } from '../executions/kernel-history.js';
import type { InspectionLanguage } from '../inspection/kernel-inspection-program.js';
import { type PackageRequest, packageProgram } from '../inspection/package-programs.js';
import {
  checkPackageSpecs,
  installFingerprint,
  maxInstallSpecs,
  type PackageSpec,
} from '../inspection/package-specs.js';
import {
  type InstallReport,
  outputTail,
  type PackageAnswer,
  type PackageEnvironment,
  packageChanges,
  parsePackageAnswer,
  unchanged,
} from '../inspection/parse-package-answer.js';
import {
  type ConfirmationQuestion,
  defineChildTool,
  jsonResult,
  type RegisteredChildTool,
  type ToolCallContext,
} from './child-tool-registry.js';
import { inspectionLanguage } from './create-inspection-tools.js';
import { ToolError } from './to-tool-failure.js';
import { given, toolParameters } from './tool-parameters.js';

/** The variable the person sets in the MCP client's config for nteract-mcp to allow installs without being asked. */
export const allowInstallsVariable = 'NTERACT_MCP_ALLOW_INSTALLS';

/** Packages one `list_packages` answer lists unless `count` says otherwise, and the most it may ask. */
export const defaultPackagesCount = 100;
const maxPackagesCount = 500;

/** How long reading the kernel's environment waits behind code the kernel runs. */
const probeWaitMs = 20_000;
/** How long an install is followed before the call answers that it still runs. */
const installWaitMs = 15 * 60_000;
/** How often a running install's outputs are read (and streamed as progress). */
const installPollMs = 250;
/** Progress says an install still runs after this long without output. */
const installKeepAliveMs = 4000;

/**
 * `list_packages` and `install_packages`: what the kernel's own interpreter has, and an install
 * into that interpreter only (Python: its `sys.executable` with pip, or uv in a uv-managed venv;
 * R: its first library), read and run as scratch runs in the kernel (no cell, no history, no
 * execution count), for local and hosted kernels alike. An install needs the person's yes every
 * time (a required confirmation with a fingerprint over the specs, the interpreter and its prefix)
 * unless the person set {@link allowInstallsVariable}; a system-managed Python (PEP 668) is refused
 * before anyone is asked. The answer says what changed, by the package lists before and after.
 */
export function createPackageTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  /** Runs a package program as a scratch run and reads its answer; a busy kernel is an error saying so. */
  const probe = async (
    handle: NotebookHandle,
    language: InspectionLanguage,
    request: PackageRequest,
  ): Promise<PackageAnswer> => {
    if (!handle.runScratch) {
      throw new ToolError(
        `Notebook ${handle.notebookId} cannot run code without a cell (its backend does not offer scratch runs), so its packages cannot be read here.`,
      );
    }
    const program = packageProgram(language, request);
    const run = await handle.runScratch(program.source, { timeoutMs: probeWaitMs });
    if (run.kernelNotice !== undefined) {
      deps.kernelHistory.ran(handle.notebookId, undefined, run.kernelNotice, language === 'python');
    }
    if (run.status === 'timeout') {
      throw new ToolError(
        `The kernel of notebook ${handle.notebookId} did not read its packages within ${probeWaitMs / 1000} s: it is running other code (get_results shows it, interrupt_kernel stops it). Nothing was changed; call again once it is idle.`,
      );
    }
    return parsePackageAnswer(run.outputs, program.marker, "Reading the kernel's packages").answer;
  };

  const installQuestion = async (args: unknown, handle: NotebookHandle): Promise<ConfirmationQuestion | undefined> => {
    // Whatever keeps this from being asked (a bad spec, a kernel that cannot tell, a refused
    // environment, the person's standing yes) the handler finds again and answers.
    if (deps.allowInstalls) return undefined;
    const { packages, restart: restartGiven } = (args ?? {}) as { packages?: unknown; restart?: unknown };
    // As the schema reads it: `"true"` is true.
    const restart =
      restartGiven === true || (typeof restartGiven === 'string' && restartGiven.trim().toLowerCase() === 'true');
    if (!Array.isArray(packages) || !packages.every((spec) => typeof spec === 'string')) return undefined;
    try {
      const language = await inspectionLanguage(deps, handle);
      const specs = checkPackageSpecs(language, packages as string[]);
      const { environment } = await probe(handle, language, { kind: 'list', filter: '', start: 0, count: 0 });
      if (refusalOf(environment, handle) !== undefined) return undefined;
      const fingerprint = installFingerprint(specs, environment.interpreter, environment.prefix, restart);
      return {
        title: 'Install packages',
        message: questionText(handle, language, specs, environment, restart, fingerprint),
        unasked: noElicitationText,
        refusal: noElicitationText,
        fingerprint,
      };
    } catch (error) {
      deps.logger.debug('install_packages: the question could not be made; the handler answers', { error });
      return undefined;
    }
  };

  const listPackages = defineChildTool({
    name: 'list_packages',
    session: 'runtime',
    description: `List the packages the active notebook's kernel can import, read in its own interpreter without changing anything the person sees (no cell, no output, no execution count): Python (importlib.metadata: name and version, the one imported first when a name is installed twice) or R (installed.packages(): name, version, library). Also names the environment: Python's interpreter (sys.executable), prefix and kind (venv, uv-managed venv, conda or system) and whether it is externally managed (PEP 668: install_packages refuses it); R's home and library paths. filter keeps names containing it (case-insensitive); ${defaultPackagesCount} per answer by default (count, at most ${maxPackagesCount}), paged with start.`,
    inputSchema: z.object({
      filter: toolParameters.optionalString('Only packages whose name contains this (case-insensitive).'),
      start: toolParameters.optionalIndex('Index of the first package, in name order (default 0).'),
      count: toolParameters.optionalIndex(
        `How many packages (default ${defaultPackagesCount}, at most ${maxPackagesCount}).`,
      ),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, context) => {
      const filter = (given(args.filter) ?? '').trim();
      // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
      if (filter.length > 200 || /[\u0000-\u001f\u007f]/.test(filter)) {
        throw new ToolError('filter must be at most 200 characters, without control characters.');
      }
      const start = given(args.start) ?? 0;
      const count = given(args.count) ?? defaultPackagesCount;
      if (count < 1 || count > maxPackagesCount) {
        throw new ToolError(`count must be between 1 and ${maxPackagesCount} (give start to read on).`);
      }
      const access = await accessWhenReady(deps, 'runtime', context);
      const { handle } = access;
      const language = await inspectionLanguage(deps, handle);
      const answer = await probe(handle, language, { kind: 'list', filter, start, count });
      access.ensureCurrent();
      const listed = answer.packages ?? [];
      const total = answer.total ?? listed.length;
      const next = start + listed.length;
      return jsonResult({
        notebook_id: handle.notebookId,
        language,
        environment: environmentJson(answer.environment),
        ...(filter === '' ? {} : { filter }),
        total,
        start,
        packages: listed,
        ...(next < total
          ? {
              truncated: {
                next_start: next,
                note: `${total - next} more package(s): list_packages(start=${next}${filter === '' ? '' : `, filter=${JSON.stringify(filter)}`}).`,
              },
            }
          : {}),
      });
    },
  });

  const installPackages = defineChildTool({
    name: 'install_packages',
    session: 'runtime',
    confirm: { question: installQuestion },
    description: `Install packages into the active notebook's kernel's own environment, never another: Python with its interpreter's pip (sys.executable -m pip install), or uv in a uv-managed venv; R into its first library (R CMD INSTALL for a local file, else install.packages). The person is asked every time, shown the exact packages and the environment (interpreter, prefix); a client that cannot ask the person is refused (the person, not the agent, can allow installs without asking in their MCP client's config). A system-managed Python (PEP 668, e.g. Debian's /usr/bin/python3) is refused: use a kernel from a virtual environment. Each package is a requirement (name, optional [extras] and version clauses such as pandas>=2,<3; R: a package name) or the absolute path of a local package file (.whl, .tar.gz); no options. Streams the installer's output as progress; answers what was added and changed (the package lists before and after), the end of the installer's output, and whether a restart is needed (a changed package was already imported; restart=true restarts the kernel then, losing its variables).`,
    inputSchema: z.object({
      packages: z
        .array(z.string())
        .min(1)
        .max(maxInstallSpecs)
        .describe('The packages: requirement names with optional version clauses, or absolute paths of package files.'),
      restart: toolParameters.optionalBoolean(
        'Restart the kernel after the install when a changed package was already imported (its variables are lost; default false: the answer says a restart is needed).',
      ),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args, context) => {
      const restart = given(args.restart) === true;
      const access = await accessWhenReady(deps, 'runtime', context);
      const { handle } = access;
      const language = await inspectionLanguage(deps, handle);
      const specs = checkPackageSpecs(language, args.packages);
      // Right before installing: the kernel may have restarted into another interpreter since the question.
      const { environment } = await probe(handle, language, { kind: 'list', filter: '', start: 0, count: 0 });
      const refusal = refusalOf(environment, handle);
      if (refusal !== undefined) throw new ToolError(refusal);
      const fingerprint = installFingerprint(specs, environment.interpreter, environment.prefix, restart);
      const consent = consentOf(deps, context, fingerprint, environment);
      const program = packageProgram(language, {
        kind: 'install',
        specs: specs.map((spec) => spec.given),
        interpreter: environment.interpreter,
        prefix: environment.prefix,
      });
      const run = await runStreamed(deps, handle, program.source, context);
      if (run.status === 'timeout') {
        return jsonResult({
          notebook_id: handle.notebookId,
          status: 'unknown',
          note: `The install still runs after ${installWaitMs / 60_000} min; what it changes is not known yet.${run.executionId === undefined ? '' : ` get_results(execution_id="${run.executionId}") shows its output;`} list_packages shows the packages once it ended.`,
        });
      }
      const notice = run.kernelNotice === undefined ? {} : noticeJson(deps, handle, language, run.kernelNotice);
      let parsed: ReturnType<typeof parsePackageAnswer>;
      try {
        parsed = parsePackageAnswer(run.outputs, program.marker, 'Installing packages');
      } catch (error) {
        // The installer may have run part way (interrupted, the kernel lost): what it changed is not known.
        if (!(error instanceof ToolError)) throw error;
        return jsonResult({
          notebook_id: handle.notebookId,
          status: 'unknown',
          note: `${error.message} What the install changed is not known: list_packages shows the packages now.`,
          output_tail: outputTail(streamText(run.outputs)).tail,
          ...notice,
        });
      }
      const { answer, printed } = parsed;
      const report = answer.install;
      if (report === undefined || !report.ran) throw new ToolError(notRunText(report, environment, handle));
      const changes = packageChanges(report.before ?? {}, report.after ?? {});
      const tail = outputTail(printed);
      const same = unchanged(changes);
      const ok = report.exit_code === 0;
      const header = {
        notebook_id: handle.notebookId,
        language,
        packages: specs.map((spec) => spec.given),
        environment: environmentJson(environment),
        consent,
        command: report.command,
      };
      if (!ok && same) {
        throw new ToolError(
          `Not installed: the installer failed (exit code ${String(report.exit_code)}); the environment is as it was (its package list is the same before and after). The end of its output:\n${tail.tail}`,
        );
      }
      const loaded = report.loaded ?? [];
      let restarted: Record<string, unknown> = {};
      if (loaded.length > 0 && restart) {
        await handle.restartKernel();
        const lost = deps.kernelHistory.replaced(handle.notebookId, 'install_packages', language === 'python', false);
        restarted = { restarted: true, ...lostStateJson(lost) };
      } else if (loaded.length > 0) {
        restarted = {
          restart_needed: {
            packages: loaded.map((entry) => entry.package),
            note: `Imported in the kernel before the install (${loaded.map((entry) => entry.modules.join(', ')).join('; ')}): the kernel goes on using the old code until it restarts. restart_kernel restarts it (its variables are lost; its answer lists them as lost_state).`,
          },
        };
      }
      access.ensureCurrent();
      return jsonResult({
        ...header,
        status: ok ? 'installed' : 'failed',
        ...(ok
          ? {}
          : {
              note: `The installer failed (exit code ${String(report.exit_code)}) after changing the environment: the changes below were made and stay.`,
            }),
        changes,
        ...(ok && same ? { note: 'Nothing changed: every package was already installed as asked.' } : {}),
        ...restarted,
        output_tail: tail.tail,
        ...(tail.omitted_lines > 0 ? { output_lines_omitted: tail.omitted_lines } : {}),
        ...notice,
      });
    },
  });

  return [listPackages, installPackages];
}

const noElicitationText = `Not installed, nothing ran: installing packages needs the person's yes each time, and this client cannot ask them (it declares no elicitation). The person can allow installs without being asked by setting ${allowInstallsVariable}=1 in the environment of nteract-mcp in their MCP client's config (then restarting the client); it is not a tool argument, and the agent cannot set it.`;

/** How the install was allowed, as the answer says it; a tool error when it was not (nothing runs). */
function consentOf(
  deps: ChildServerDependencies,
  context: ToolCallContext,
  fingerprint: string,
  environment: PackageEnvironment,
): string {
  const confirmed = context.confirmed;
  if (confirmed !== undefined) {
    if (confirmed.fingerprint !== fingerprint) {
      throw new ToolError(
        `Not installed, nothing ran: the kernel's environment is no longer the one the person said yes to (it now runs ${environment.interpreter}, prefix ${environment.prefix}). Call install_packages again to ask the person about this one.`,
      );
    }
    return `the person said yes (fingerprint ${fingerprint.slice(0, 16)})`;
  }
  if (deps.allowInstalls) {
    return `installed without asking: the person allows installs without being asked (${allowInstallsVariable}=1 in the MCP client's config)`;
  }
  throw new ToolError(
    "Not installed, nothing ran: the person was not asked (the kernel's environment could not be read for the question). Call install_packages again.",
  );
}

/** Why an install into `environment` is refused before anyone is asked, if it is. */
function refusalOf(environment: PackageEnvironment, handle: NotebookHandle): string | undefined {
  if (environment.externally_managed) {
    return `Not installed, nothing ran: the kernel of notebook ${handle.notebookId} runs ${environment.interpreter}, a Python the system manages (PEP 668: ${environment.externally_managed_file ?? 'EXTERNALLY-MANAGED'}). Installing into it would need pip's --break-system-packages, which nteract-mcp never passes. Use a kernel from a virtual environment: create one in the project (python3 -m venv --system-site-packages .venv, with ipykernel), then create_notebook again (a Python notebook runs in the project's .venv), and install there.`;
  }
  if (environment.writable === false) {
    return `Not installed, nothing ran: R's first library (${environment.prefix}) is not writable by the kernel. Make a writable library first in .libPaths() (e.g. set R_LIBS_USER to an existing directory in the client's environment) and start the kernel again.`;
  }
  if (environment.installer === null) {
    return `Not installed, nothing ran: the kernel's environment (${environment.prefix}) has no pip${environment.kind === 'uv-managed venv' ? ' and uv is not on its PATH' : ''}.`;
  }
  return undefined;
}

/** The person's question: the exact packages, the environment, and the fingerprint of both. */
function questionText(
  handle: NotebookHandle,
  language: InspectionLanguage,
  specs: readonly PackageSpec[],
  environment: PackageEnvironment,
  restart: boolean,
  fingerprint: string,
): string {
  const lines = [
    `The agent wants to install ${specs.length === 1 ? 'this package' : `these ${specs.length} packages`} into the ${language === 'python' ? 'Python' : 'R'} environment of the kernel of notebook ${handle.notebookId}:`,
    ...specs.map((spec) => `  • ${spec.given}`),
    `Interpreter: ${environment.interpreter}`,
    `${language === 'python' ? 'Prefix' : 'Library'}: ${environment.prefix} (${environment.kind}${environment.installer ? `, with ${environment.installer}` : ''})`,
    ...(restart ? ['Then the kernel restarts if a changed package was already imported: its variables are lost.'] : []),
    `Fingerprint: ${fingerprint.slice(0, 16)}`,
    'Install them?',
  ];
  return lines.join('\n');
}

/** Why an install program ran nothing, as the tool error says it. */
function notRunText(
  report: InstallReport | undefined,
  environment: PackageEnvironment,
  handle: NotebookHandle,
): string {
  const why = report?.why;
  if (why === 'environment_changed') {
    return `Not installed, nothing ran: the kernel of notebook ${handle.notebookId} no longer runs ${environment.interpreter} (prefix ${environment.prefix}); it restarted into another environment. Call install_packages again to ask about the one it runs now.`;
  }
  if (why === 'missing_files') {
    return `Not installed, nothing ran: no such file where the kernel runs: ${(report?.missing ?? []).join(', ')}.`;
  }
  return (
    refusalOf({ ...environment, ...(why === 'no_installer' ? { installer: null } : {}) }, handle) ??
    `Not installed, nothing ran (${why ?? 'the program said nothing of the install'}).`
  );
}

/** The environment as the answers show it. */
function environmentJson(environment: PackageEnvironment): Record<string, unknown> {
  const { interpreter, prefix, kind, version, externally_managed: managed, installer } = environment;
  return {
    interpreter,
    prefix,
    kind,
    ...(version === undefined ? {} : { version }),
    externally_managed: managed,
    ...(installer === undefined ? {} : { installer }),
    ...(environment.r_home === undefined ? {} : { r_home: environment.r_home }),
    ...(environment.lib_paths === undefined ? {} : { lib_paths: environment.lib_paths }),
  };
}

/** A finished (or, past the wait, still running) install run. */
interface StreamedRun {
  readonly status: 'ok' | 'error' | 'aborted' | 'timeout';
  readonly outputs: readonly CellOutput[];
  readonly executionId?: string;
  readonly kernelNotice?: string;
}

/** A kernel notice a run carried, as the answer tells it (recorded as run_code's is: what the lost kernel had). */
function noticeJson(
  deps: ChildServerDependencies,
  handle: NotebookHandle,
  language: InspectionLanguage,
  notice: string,
): Record<string, unknown> {
  const lost = deps.kernelHistory.ran(handle.notebookId, undefined, notice, language === 'python');
  return { kernel_notice: notice, ...lostStateJson(lost) };
}

/** The text of a run's stream outputs. */
function streamText(outputs: readonly CellOutput[]): string {
  return outputs
    .filter((output) => output.output_type === 'stream')
    .map((output) => (Array.isArray(output.text) ? output.text.join('') : String(output.text ?? '')))
    .join('');
}

/**
 * Runs `source` as a scratch run kept as an execution, reading it every {@link installPollMs}
 * and reporting each new line of its output as progress (and, while silent, that it still runs);
 * without `startScratch`, a plain scratch run (no streaming). The client's cancellation of the
 * call cancels the run.
 */
async function runStreamed(
  deps: ChildServerDependencies,
  handle: NotebookHandle,
  source: string,
  context: ToolCallContext,
): Promise<StreamedRun> {
  if (!handle.startScratch) {
    if (!handle.runScratch) throw new ToolError(`Notebook ${handle.notebookId} cannot run code without a cell.`);
    return handle.runScratch(source, { timeoutMs: installWaitMs });
  }
  const { clock } = deps;
  let state = await handle.startScratch(source);
  const executionId = state.executionId;
  const started = clock.now();
  let lastReport = started;
  let reported = 0;
  let seenChars = 0;
  const onCancel = () => void handle.cancelExecution?.(executionId).catch(() => undefined);
  context.cancelled.addEventListener('abort', onCancel, { once: true });
  try {
    while (state.status === 'queued' || state.status === 'running') {
      if (clock.now() - started > installWaitMs) return { status: 'timeout', outputs: state.outputs, executionId };
      await new Promise<void>((resolve) => clock.setTimer(installPollMs, resolve));
      state = await handle.getExecution(executionId);
      const printed = streamText(state.outputs);
      const fresh = printed
        .slice(seenChars)
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.includes('\u001e'));
      seenChars = printed.length;
      const now = clock.now();
      if (fresh.length > 0) {
        reported += 1;
        lastReport = now;
        context.reportProgress(reported, `install_packages: ${(fresh.at(-1) as string).slice(0, 200)}`);
      } else if (now - lastReport >= installKeepAliveMs) {
        reported += 1;
        lastReport = now;
        context.reportProgress(
          reported,
          `install_packages: still running after ${Math.round((now - started) / 1000)} s`,
        );
      }
    }
  } finally {
    context.cancelled.removeEventListener('abort', onCancel);
  }
  deps.executions.record(executionRecordOf(state, handle.notebookId));
  return {
    status: state.status,
    outputs: state.outputs,
    executionId,
    ...(state.kernelNotice === undefined ? {} : { kernelNotice: state.kernelNotice }),
  };
}
