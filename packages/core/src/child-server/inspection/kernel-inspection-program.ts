import { randomUUID } from 'node:crypto';

/** The kernel languages whose namespace core can list. */
export type InspectionLanguage = 'python' | 'r';

/** What one inspection asks the kernel: a page of the listing, or one variable in detail. */
export type InspectionRequest =
  | {
      readonly kind: 'list';
      /** `substring` (case-insensitive) or `glob` (`*`, `?`, `[…]`, case-insensitive); empty: every name. */
      readonly filterMode: 'substring' | 'glob';
      readonly filter: string;
      readonly start: number;
      readonly count: number;
    }
  | { readonly kind: 'inspect'; readonly name: string; readonly rows: number };

/** The sizes one entry of an answer is held to, by the program in the kernel (and again by core). */
export interface InspectionLimits {
  readonly reprChars: number;
  /** Rows of a data frame shown. */
  readonly rows: number;
  readonly columns: number;
  readonly cellChars: number;
  /** The first items of a list, dict, set or vector shown (0: none). */
  readonly items: number;
}

/** The sizes of an entry of `list_variables`. */
export const listingLimits: InspectionLimits = { reprChars: 120, rows: 3, columns: 20, cellChars: 40, items: 0 };

/** The sizes of `inspect_variable`'s answer (its `rows` come from the request). */
export const detailLimits: Omit<InspectionLimits, 'rows'> = { reprChars: 2000, columns: 50, cellChars: 80, items: 20 };

/** How many names a miss sends back, for the similar names. */
export const missNamesLimit = 5000;

/** The scratch source to run, and the marker its answer line starts with. */
export interface InspectionProgram {
  readonly source: string;
  readonly marker: string;
}

/**
 * The language of a kernel by its kernelspec name, when the name says it (`python3`, `ir`…);
 * `undefined` otherwise (ask the kernel list). An unnamed kernel is Python, as elsewhere in core.
 */
export function inspectionLanguageOf(kernelName: string | undefined): InspectionLanguage | undefined {
  if (kernelName === undefined || /python|^py|ipykernel/i.test(kernelName)) return 'python';
  if (/^(ir|r)$|^ir[-_]|irkernel|^r[-_]/i.test(kernelName)) return 'r';
  return undefined;
}

/** The language a kernelspec's `language` field names, if core can inspect it. */
export function inspectionLanguageOfSpec(language: string): InspectionLanguage | undefined {
  const word = language.trim().toLowerCase();
  if (word === 'python' || word === 'python3') return 'python';
  if (word === 'r') return 'r';
  return undefined;
}

/**
 * The scratch source that answers `request` in a `language` kernel: one line of JSON on stdout,
 * after a marker unique to this run. It leaves nothing in the user's namespace (Python: the
 * program runs in a dictionary of its own through `exec`; R: inside `local()`, invisibly), and
 * catches its own errors (a failing `repr` is that entry's error, not the listing's).
 */
export function inspectionProgram(
  language: InspectionLanguage,
  request: InspectionRequest,
  limits: InspectionLimits,
): InspectionProgram {
  const marker = `\u001enteract-inspect-${randomUUID().slice(0, 8)}:`;
  const settings = {
    kind: request.kind,
    filter_mode: request.kind === 'list' ? request.filterMode : 'substring',
    filter: request.kind === 'list' ? request.filter : '',
    start: request.kind === 'list' ? request.start : 0,
    count: request.kind === 'list' ? request.count : 0,
    name: request.kind === 'inspect' ? request.name : '',
    repr_chars: limits.reprChars,
    rows: limits.rows,
    columns: limits.columns,
    cell_chars: limits.cellChars,
    items: limits.items,
    miss_names: missNamesLimit,
    marker,
  };
  if (language === 'python') {
    const call = `__import__('builtins').exec(${JSON.stringify(pythonProgram)}, {'settings_json': ${JSON.stringify(JSON.stringify(settings))}})`;
    return { source: call, marker };
  }
  const values = Object.entries(settings).map(([key, value]) =>
    typeof value === 'number' ? `${key} = ${value}L` : `${key} = ${rString(value)}`,
  );
  return { source: `invisible(local({\nsettings <- list(${values.join(', ')})\n${rProgram}\n}))`, marker };
}

/** `text` as an R string literal: quotes and backslashes escaped, everything outside printable ASCII as `\u{…}`. */
export function rString(text: string): string {
  let literal = '"';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === '"' || char === '\\') literal += `\\${char}`;
    else if (code >= 0x20 && code < 0x7f) literal += char;
    else if (code <= 0xffff) literal += `\\u{${code.toString(16)}}`;
    else literal += `\\U{${code.toString(16)}}`;
  }
  return `${literal}"`;
}

/**
 * The Python side. Hidden names: those starting with `_`, IPython's own (`user_ns_hidden`: `In`,
 * `Out`, `get_ipython`, `exit`, `quit`…, while they hold what IPython put there), modules, and
 * IPython's objects. Reprs are built bounded (a list's first items, a string's first characters)
 * and cut; no dict is sorted, no repr of a huge container is built whole.
 */
const pythonProgram = String.raw`
import json, sys, types
settings = json.loads(settings_json)
missing = object()

def cut(text, limit):
    text = str(text)
    return text if len(text) <= limit else text[:max(limit - 1, 0)] + '\u2026'

def short(value, limit, depth=0):
    try:
        kind = type(value)
        if isinstance(value, (str, bytes, bytearray)):
            text = repr(value[:limit + 1])
        elif kind in (list, tuple, set, frozenset, dict) and depth < 2:
            parts, size = [], 0
            pairs = value.items() if kind is dict else value
            for index, item in enumerate(pairs):
                if index >= 10 or size > limit:
                    parts.append('...')
                    break
                if kind is dict:
                    piece = short(item[0], limit, depth + 1) + ': ' + short(item[1], limit, depth + 1)
                else:
                    piece = short(item, limit, depth + 1)
                parts.append(piece)
                size += len(piece) + 2
            inner = ', '.join(parts)
            if kind is list:
                text = '[' + inner + ']'
            elif kind is tuple:
                text = '(' + inner + (',)' if len(parts) == 1 else ')')
            elif kind is dict:
                text = '{' + inner + '}'
            elif not parts:
                text = kind.__name__ + '()'
            else:
                text = ('{' + inner + '}') if kind is set else 'frozenset({' + inner + '})'
        elif kind in (list, tuple, set, frozenset, dict):
            text = kind.__name__ + '(...)'
        elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
            import inspect
            try:
                text = value.__name__ + str(inspect.signature(value))
            except (TypeError, ValueError):
                text = repr(value)
        else:
            text = repr(value)
    except Exception as error:
        text = '<repr failed: %s>' % type(error).__name__
    return cut(text, limit)

def cell_text(value):
    # A frame's cell as the frame shows it: strings, numbers, dates and pandas/numpy scalars by str(), the rest by its bounded repr.
    plain = isinstance(value, (str, int, float, complex)) or (type(value).__module__ or '').split('.')[0] in ('pandas', 'numpy', 'datetime', 'decimal')
    return cut(value, settings['cell_chars']) if plain else short(value, settings['cell_chars'])

def is_pandas(value, name):
    kind = type(value)
    module = kind.__module__ or ''
    return kind.__name__ == name and (module == 'pandas' or module.startswith('pandas.'))

def describe(name, value, detail):
    entry = {'name': name, 'type': type(value).__name__}
    try:
        entry['repr'] = short(value, settings['repr_chars'])
        if isinstance(value, type):
            return entry
        shape = getattr(value, 'shape', None)
        if isinstance(shape, tuple) and all(isinstance(size, int) for size in shape):
            entry['shape'] = list(shape)
        elif hasattr(type(value), '__len__'):
            try:
                entry['length'] = int(len(value))
            except Exception:
                pass
        dtype = getattr(value, 'dtype', None)
        if dtype is not None and not callable(dtype):
            entry['dtype'] = cut(dtype, 60)
        if is_pandas(value, 'DataFrame'):
            columns = settings['columns']
            head = value.iloc[:settings['rows'], :columns]
            entry['columns'] = [{'name': cut(column, 80), 'dtype': cut(dtype, 40)} for column, dtype in zip(head.columns, head.dtypes)]
            entry['columns_total'] = int(value.shape[1])
            entry['index'] = [cell_text(label) for label in head.index]
            entry['rows'] = [[cell_text(cell) for cell in row] for row in head.itertuples(index=False, name=None)]
        elif is_pandas(value, 'Series'):
            head = value.iloc[:settings['rows']]
            entry['index'] = [cell_text(label) for label in head.index]
            entry['items'] = [cell_text(cell) for cell in head]
        elif settings['items'] > 0 and type(value) in (list, tuple, set, frozenset, dict):
            items = []
            pairs = value.items() if type(value) is dict else value
            for index, item in enumerate(pairs):
                if index >= settings['items']:
                    break
                if type(value) is dict:
                    items.append({'key': short(item[0], settings['cell_chars']), 'value': short(item[1], settings['cell_chars'] * 2)})
                else:
                    items.append(short(item, settings['cell_chars'] * 2))
            entry['items'] = items
        if detail:
            if is_pandas(value, 'DataFrame') or is_pandas(value, 'Series'):
                entry['size_bytes'] = int(value.memory_usage(index=True, deep=False).sum() if is_pandas(value, 'DataFrame') else value.memory_usage(index=True, deep=False))
                entry['size_note'] = 'pandas memory_usage(deep=False): without the objects object columns point to'
            else:
                entry['size_bytes'] = int(sys.getsizeof(value))
                entry['size_note'] = 'sys.getsizeof: the object itself, not what it refers to'
    except Exception as error:
        entry['error'] = cut('%s: %s' % (type(error).__name__, error), 200)
    entry.setdefault('repr', '')
    return entry

def memory():
    try:
        import psutil
        return {'rss_bytes': int(psutil.Process().memory_info().rss), 'source': 'psutil (resident set size)'}
    except Exception:
        pass
    try:
        import os
        with open('/proc/self/statm') as statm:
            pages = int(statm.read().split()[1])
        return {'rss_bytes': pages * os.sysconf('SC_PAGE_SIZE'), 'source': '/proc/self/statm (resident set size)'}
    except Exception:
        pass
    try:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return {'peak_rss_bytes': int(peak if sys.platform == 'darwin' else peak * 1024), 'source': 'resource.getrusage (peak resident set size)'}
    except Exception:
        return None

def main():
    shell = None
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except Exception:
        pass
    namespace = shell.user_ns if shell is not None else sys.modules['__main__'].__dict__
    hidden = getattr(shell, 'user_ns_hidden', None) or {}
    def visible(name, value):
        if not isinstance(name, str) or name.startswith('_'):
            return False
        if hidden.get(name, missing) is value or isinstance(value, types.ModuleType):
            return False
        return not type(value).__module__.startswith('IPython.')
    names = sorted(name for name in list(namespace) if visible(name, namespace.get(name, missing)))
    count = getattr(shell, 'execution_count', None)
    answer = {'language': 'python', 'memory': memory(), 'execution_count': count - 1 if isinstance(count, int) and count > 0 else None}
    if settings['kind'] == 'inspect':
        name = settings['name']
        if name not in namespace:
            answer.update(missing=True, names=names[:settings['miss_names']], names_total=len(names))
        else:
            answer['entry'] = describe(name, namespace[name], True)
        return answer
    wanted = settings['filter'].lower()
    if wanted:
        if settings['filter_mode'] == 'glob':
            import fnmatch
            names = [name for name in names if fnmatch.fnmatchcase(name.lower(), wanted)]
        else:
            names = [name for name in names if wanted in name.lower()]
    page = names[settings['start']:settings['start'] + settings['count']]
    answer.update(total=len(names), entries=[describe(name, namespace[name], False) for name in page if name in namespace])
    return answer

try:
    answer = main()
except BaseException as error:
    answer = {'error': '%s: %s' % (type(error).__name__, error)}
sys.stdout.write(settings['marker'] + json.dumps(answer, default=str) + '\n')
sys.stdout.flush()
`;

/**
 * The R side (IRkernel runs cells in the global environment): `ls()` hides names starting with a
 * dot; `str()` gives the short repr; memory is what `gc()` says R holds. Answers through jsonlite,
 * which IRkernel itself depends on.
 */
const rProgram = String.raw`
emit <- function(value) {
  cat(settings$marker, jsonlite::toJSON(value, auto_unbox = TRUE, null = "null", na = "string", digits = NA, force = TRUE), "\n", sep = "")
}
cut <- function(text, limit) {
  text <- paste(as.character(text), collapse = "\n")
  if (is.na(text)) return("NA")
  if (nchar(text, type = "chars", allowNA = TRUE) > limit) paste0(substr(text, 1, limit - 1), "\u2026") else text
}
short <- function(value, limit) {
  tryCatch({
    lines <- utils::capture.output(utils::str(value, max.level = 1, vec.len = 3, list.len = 5, give.attr = FALSE, nchar.max = max(limit, 20)))
    cut(paste(trimws(lines), collapse = "\n"), limit)
  }, error = function(e) paste0("<str failed: ", conditionMessage(e), ">"))
}
describe <- function(env, name, detail) {
  value <- get(name, envir = env, inherits = FALSE)
  entry <- list(name = name, type = cut(class(value)[1], 80), repr = short(value, settings$repr_chars))
  tryCatch({
    dims <- dim(value)
    if (!is.null(dims)) entry$shape <- as.list(as.integer(dims)) else if (is.vector(value) || is.list(value)) entry$length <- length(value)
    if (is.data.frame(value)) {
      columns <- seq_len(min(ncol(value), settings$columns))
      entry$columns <- lapply(columns, function(i) list(name = cut(names(value)[i], 80), dtype = cut(class(value[[i]])[1], 40)))
      entry$columns_total <- ncol(value)
      head <- as.data.frame(utils::head(value[, columns, drop = FALSE], settings$rows))
      cells <- as.matrix(format(head))
      entry$index <- as.list(vapply(rownames(head), cut, "", limit = settings$cell_chars, USE.NAMES = FALSE))
      entry$rows <- lapply(seq_len(nrow(head)), function(r) as.list(unname(vapply(cells[r, columns], cut, "", limit = settings$cell_chars))))
    } else if (settings$items > 0 && is.list(value)) {
      keys <- names(value)
      entry$items <- lapply(seq_len(min(length(value), settings$items)), function(i) list(key = if (is.null(keys) || !nzchar(keys[i])) as.character(i) else cut(keys[i], settings$cell_chars), value = short(value[[i]], settings$cell_chars * 2)))
    } else if (settings$items > 0 && is.atomic(value) && is.null(dims)) {
      entry$items <- as.list(unname(vapply(format(utils::head(value, settings$items)), cut, "", limit = settings$cell_chars * 2)))
    }
    if (detail) {
      entry$size_bytes <- as.numeric(utils::object.size(value))
      entry$size_note <- "object.size: the object with what it holds (shared parts counted once each time)"
    }
  }, error = function(e) entry$error <<- cut(conditionMessage(e), 200))
  entry
}
tryCatch({
  env <- globalenv()
  names <- sort(ls(envir = env), method = "radix")
  gcs <- gc(verbose = FALSE)
  answer <- list(language = "r", memory = list(used_bytes = round(sum(gcs[, 2]) * 1024 * 1024), source = "gc() (memory R holds)"), execution_count = NULL)
  if (settings$kind == "inspect") {
    if (!exists(settings$name, envir = env, inherits = FALSE)) {
      answer$missing <- TRUE
      answer$names <- as.list(utils::head(names, settings$miss_names))
      answer$names_total <- length(names)
    } else {
      answer$entry <- describe(env, settings$name, TRUE)
    }
  } else {
    if (nzchar(settings$filter)) {
      keep <- if (settings$filter_mode == "glob") grepl(utils::glob2rx(settings$filter), names, ignore.case = TRUE) else grepl(tolower(settings$filter), tolower(names), fixed = TRUE)
      names <- names[keep]
    }
    page <- utils::head(utils::tail(names, max(length(names) - settings$start, 0)), settings$count)
    answer$total <- length(names)
    answer$entries <- lapply(page, function(name) describe(env, name, FALSE))
  }
  emit(answer)
}, error = function(e) emit(list(error = conditionMessage(e))))
`;
