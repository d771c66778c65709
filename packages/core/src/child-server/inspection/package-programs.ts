import { randomUUID } from 'node:crypto';
import type { InspectionLanguage } from './kernel-inspection-program.js';
import { rString } from './kernel-inspection-program.js';

/**
 * What one package program asks the kernel: its environment and a page of its packages, or an
 * install into that very environment (refused in the kernel, nothing run, when the interpreter or
 * its prefix is no longer the one the person said yes to).
 */
export type PackageRequest =
  | { readonly kind: 'list'; readonly filter: string; readonly start: number; readonly count: number }
  | {
      readonly kind: 'install';
      readonly specs: readonly string[];
      /** The interpreter and prefix the install is for (the question's): the program checks them first. */
      readonly interpreter: string;
      readonly prefix: string;
    };

/** The scratch source to run, and the marker its answer line starts with. */
export interface PackageProgram {
  readonly source: string;
  readonly marker: string;
}

/**
 * The scratch source that answers `request` in a `language` kernel: whatever the installer prints
 * (streamed as it prints it), then one line of JSON on stdout after a marker unique to this run.
 * It leaves nothing in the user's namespace (Python: `exec` in a dictionary of its own; R: inside
 * `local()`, invisibly) and catches its own errors. An install runs the kernel's own installer
 * only: Python `sys.executable -m pip install --no-input --disable-pip-version-check <specs>`, or
 * `uv pip install --python sys.executable <specs>` in a uv-managed environment where `uv` is
 * found; R into `.libPaths()[1]` (`R CMD INSTALL -l` for local files, else `install.packages`). The
 * package lists before and after are read in the same run.
 */
export function packageProgram(language: InspectionLanguage, request: PackageRequest): PackageProgram {
  const marker = `\u001enteract-packages-${randomUUID().slice(0, 8)}:`;
  const settings = {
    kind: request.kind,
    filter: request.kind === 'list' ? request.filter : '',
    start: request.kind === 'list' ? request.start : 0,
    count: request.kind === 'list' ? request.count : 0,
    specs: request.kind === 'install' ? [...request.specs] : [],
    interpreter: request.kind === 'install' ? request.interpreter : '',
    prefix: request.kind === 'install' ? request.prefix : '',
    marker,
  };
  if (language === 'python') {
    const call = `__import__('builtins').exec(${JSON.stringify(pythonPackages)}, {'settings_json': ${JSON.stringify(JSON.stringify(settings))}})`;
    return { source: call, marker };
  }
  const values = Object.entries(settings).map(([key, value]) => {
    if (typeof value === 'number') return `${key} = ${value}L`;
    if (Array.isArray(value)) return `${key} = c(${value.map(rString).join(', ')})`;
    return `${key} = ${rString(value)}`;
  });
  // `c()` of nothing is NULL: an empty spec list stays a character vector.
  const source = `invisible(local({\nsettings <- list(${values.join(', ')})\nif (is.null(settings$specs)) settings$specs <- character()\n${rPackages}\n}))`;
  return { source, marker };
}

/**
 * The Python side. Distributions by `importlib.metadata` in `sys.path` order (the first of a name
 * is the one imported), keyed by their normalized name (PEP 503). Externally managed (PEP 668): an
 * EXTERNALLY-MANAGED file in the stdlib directory of an interpreter that is not in a venv.
 */
const pythonPackages = String.raw`
import json, os, re, shutil, subprocess, sys, sysconfig
import importlib, importlib.util, importlib.metadata as metadata
settings = json.loads(settings_json)

def normalized(name):
    return re.sub(r'[-_.]+', '-', name).lower()

def packages():
    importlib.invalidate_caches()
    found = {}
    for dist in metadata.distributions():
        try:
            name = dist.metadata['Name']
        except Exception:
            name = None
        if not name:
            continue
        key = normalized(name)
        if key not in found:
            found[key] = {'name': name, 'version': dist.version or ''}
    return found

def environment():
    prefix = sys.prefix
    in_venv = prefix != getattr(sys, 'base_prefix', prefix)
    uv_managed = False
    config = os.path.join(prefix, 'pyvenv.cfg')
    if in_venv and os.path.isfile(config):
        with open(config, encoding='utf-8', errors='replace') as lines:
            uv_managed = any(line.split('=', 1)[0].strip() == 'uv' for line in lines if '=' in line)
    conda = os.path.isdir(os.path.join(prefix, 'conda-meta'))
    kind = 'uv-managed venv' if uv_managed else 'venv' if in_venv else 'conda' if conda else 'system'
    stdlib = sysconfig.get_path('stdlib') or ''
    marker_file = os.path.join(stdlib, 'EXTERNALLY-MANAGED')
    managed = (not in_venv) and os.path.isfile(marker_file)
    uv = shutil.which('uv') if uv_managed else None
    pip = importlib.util.find_spec('pip') is not None
    answer = {'interpreter': sys.executable, 'prefix': prefix, 'version': sys.version.split()[0], 'kind': kind,
              'externally_managed': managed, 'installer': 'uv' if uv else 'pip' if pip else None}
    if managed:
        answer['externally_managed_file'] = marker_file
    if uv:
        answer['uv'] = uv
    return answer

def imported(keys):
    tops = set(name.split('.')[0] for name in list(sys.modules))
    try:
        owners = metadata.packages_distributions()
    except Exception:
        owners = {}
    found = []
    for key in keys:
        modules = set(module for module, dists in owners.items() if key in set(normalized(d) for d in dists))
        modules.add(key.replace('-', '_'))
        hit = sorted(modules & tops)
        if hit:
            found.append({'package': key, 'modules': hit})
    return found

def install(env):
    if env['interpreter'] != settings['interpreter'] or env['prefix'] != settings['prefix']:
        return {'ran': False, 'why': 'environment_changed'}
    if env['externally_managed']:
        return {'ran': False, 'why': 'externally_managed'}
    missing = [spec for spec in settings['specs'] if spec.startswith('/') and not os.path.isfile(spec)]
    if missing:
        return {'ran': False, 'why': 'missing_files', 'missing': missing}
    if env['installer'] is None:
        return {'ran': False, 'why': 'no_installer'}
    if env['installer'] == 'uv':
        command = [env['uv'], 'pip', 'install', '--python', sys.executable] + settings['specs']
    else:
        command = [sys.executable, '-m', 'pip', 'install', '--no-input', '--disable-pip-version-check'] + settings['specs']
    before = packages()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=dict(os.environ, PIP_NO_INPUT='1'))
    for line in process.stdout:
        sys.stdout.write(line.decode('utf-8', 'replace'))
        sys.stdout.flush()
    code = process.wait()
    after = packages()
    changed = [key for key in after if before.get(key, {}).get('version') != after[key]['version']]
    plain = lambda found: dict((key, value['version']) for key, value in found.items())
    return {'ran': True, 'command': command, 'exit_code': code, 'before': plain(before), 'after': plain(after),
            'loaded': imported(changed)}

def main():
    env = environment()
    answer = {'language': 'python', 'environment': env}
    if settings['kind'] == 'install':
        answer['install'] = install(env)
        return answer
    listed = sorted(packages().items())
    wanted = settings['filter'].lower()
    if wanted:
        listed = [(key, value) for key, value in listed if wanted in key or wanted in value['name'].lower()]
    page = listed[settings['start']:settings['start'] + settings['count']]
    answer.update(total=len(listed), packages=[{'name': value['name'], 'version': value['version']} for key, value in page])
    return answer

try:
    answer = main()
except BaseException as error:
    answer = {'error': '%s: %s' % (type(error).__name__, error)}
sys.stdout.write('\n' + settings['marker'] + json.dumps(answer, default=str) + '\n')
sys.stdout.flush()
`;

/**
 * The R side. Packages by `installed.packages()` in `.libPaths()` order (the first of a name is
 * the one `library()` loads); installs into `.libPaths()[1]`. Local files: `R CMD INSTALL -l`
 * (what `install.packages(repos = NULL)` runs) read through a pipe, so its output reaches the
 * notebook as it prints (install.packages would write it to the kernel's own stdout, which no
 * notebook sees); named packages: `install.packages` from `getOption("repos")`, its output kept
 * in files (`keep_outputs`) and printed once it ends.
 */
const rPackages = String.raw`
emit <- function(value) {
  cat("\n", settings$marker, jsonlite::toJSON(value, auto_unbox = TRUE, null = "null", na = "string", digits = NA, force = TRUE), "\n", sep = "")
}
installed <- function() {
  found <- utils::installed.packages(noCache = TRUE, fields = character())
  found <- found[!duplicated(found[, "Package"]), , drop = FALSE]
  found[order(tolower(found[, "Package"]), method = "radix"), , drop = FALSE]
}
versions <- function(found) as.list(stats::setNames(found[, "Version"], found[, "Package"]))
environment <- function() {
  lib <- .libPaths()[1]
  list(interpreter = file.path(R.home("bin"), "R"), prefix = lib, r_home = R.home(), lib_paths = as.list(.libPaths()),
       version = R.version.string, kind = "R library", externally_managed = FALSE,
       writable = isTRUE(file.access(lib, 2) == 0), installer = "install.packages")
}
install <- function(env) {
  if (!identical(env$interpreter, settings$interpreter) || !identical(env$prefix, settings$prefix)) return(list(ran = FALSE, why = "environment_changed"))
  if (!env$writable) return(list(ran = FALSE, why = "not_writable"))
  local_files <- startsWith(settings$specs, "/")
  missing <- settings$specs[local_files & !file.exists(settings$specs)]
  if (length(missing) > 0) return(list(ran = FALSE, why = "missing_files", missing = as.list(missing)))
  before <- installed()
  warned <- character()
  code <- 0L
  if (all(local_files)) {
    # What install.packages(repos = NULL) runs, through a pipe: its output reaches the notebook as it prints.
    command <- paste(shQuote(file.path(R.home("bin"), "R")), "CMD INSTALL -l", shQuote(env$prefix), paste(shQuote(settings$specs), collapse = " "), "2>&1")
    con <- pipe(command, "r")
    repeat {
      line <- readLines(con, n = 1, warn = FALSE)
      if (length(line) == 0) break
      cat(line, "\n", sep = "")
      utils::flush.console()
    }
    status <- close(con)
    code <- if (is.null(status)) 0L else as.integer(status)
    shown <- c("R", "CMD", "INSTALL", "-l", env$prefix, settings$specs)
  } else {
    outputs <- tempfile("nteract-install-")
    dir.create(outputs)
    withCallingHandlers(
      tryCatch(
        utils::install.packages(settings$specs, lib = env$prefix, repos = getOption("repos"), keep_outputs = outputs, quiet = FALSE),
        error = function(e) warned <<- c(warned, conditionMessage(e))),
      warning = function(w) { warned <<- c(warned, conditionMessage(w)); invokeRestart("muffleWarning") },
      message = function(m) { cat(conditionMessage(m)); invokeRestart("muffleMessage") })
    for (file in list.files(outputs, full.names = TRUE)) cat(readLines(file, warn = FALSE), sep = "\n")
    unlink(outputs, recursive = TRUE)
    if (length(warned) > 0) { cat(warned, sep = "\n"); code <- 1L }
    shown <- c("install.packages", settings$specs)
  }
  after <- installed()
  old <- versions(before)
  new <- versions(after)
  changed <- names(new)[vapply(names(new), function(name) !identical(old[[name]], new[[name]]), TRUE)]
  loaded <- intersect(changed, loadedNamespaces())
  list(ran = TRUE, command = shown, exit_code = code,
       before = old, after = new, loaded = lapply(loaded, function(name) list(package = name, modules = list(name))))
}
tryCatch({
  env <- environment()
  answer <- list(language = "r", environment = env)
  if (settings$kind == "install") {
    answer$install <- install(env)
  } else {
    found <- installed()
    if (nzchar(settings$filter)) found <- found[grepl(tolower(settings$filter), tolower(found[, "Package"]), fixed = TRUE), , drop = FALSE]
    rows <- utils::head(utils::tail(seq_len(nrow(found)), max(nrow(found) - settings$start, 0)), settings$count)
    answer$total <- nrow(found)
    answer$packages <- lapply(rows, function(i) list(name = found[i, "Package"], version = found[i, "Version"], library = found[i, "LibPath"]))
  }
  emit(answer)
}, error = function(e) emit(list(error = conditionMessage(e))))
`;
