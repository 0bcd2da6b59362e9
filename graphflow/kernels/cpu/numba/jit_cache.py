"""Compiled loops kept on disk, so that a second process loads them instead of compiling them again.

numba compiles a loop the first time it is called with a set of types: a few seconds over the loops
a convolutional network's step uses, paid again by every process. `njit` here is numba's, with
`cache=True` made safe for graphflow's loops:

  - loops defined in a source file are cached by numba beside it (`__pycache__`), or where that is
    not writable in numba's user-wide cache directory (`NUMBA_CACHE_DIR` when set, else
    `~/.cache/numba`, honouring XDG_CACHE_HOME); nowhere writable: compiled in memory, no error;
  - loops that close over other compiled functions (defined inside a `_compile()`) are keyed by those
    functions' code rather than by numba's pickle of them, which holds a per-process id (a key that
    never matched again and an index that grew by one entry each process);
  - a cache file that cannot be read or written (read-only directory, disk full, corrupted file) is
    a cache miss: the loop compiles in memory.

Loops generated per geometry at run time (`jit_conv.py`, `fused_jit.py`) are source text, which
numba cannot cache from `exec`. `load_source` writes such text to a module file in a cache
directory (`$NUMBA_CACHE_DIR/graphflow`, else `$XDG_CACHE_HOME/graphflow/jit` or
`~/.cache/graphflow/jit`), named by a hash of the text and of the graphflow modules it depends on,
written by a temporary file and a rename, and imports it from there: its functions are then
source-file functions numba caches. Nothing is created at import: only when a loop is first compiled.

GRAPHFLOW_JIT_CACHE=0 keeps every loop in memory (compiled again by each process);
GRAPHFLOW_NO_JIT=1 switches the compiled loops off altogether (`jit_updates.loops`).
"""

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

_lock = threading.Lock()
_digests = {}  # module file -> hash of its bytes
_cache_class = None


def enabled():
    """False with GRAPHFLOW_JIT_CACHE=0 (then loops are compiled in memory only)."""
    return os.environ.get("GRAPHFLOW_JIT_CACHE", "").strip().lower() not in ("0", "false", "no", "off")


def source_dir():
    """Where `load_source` writes generated modules."""
    numba_dir = os.environ.get("NUMBA_CACHE_DIR", "").strip()
    if numba_dir:
        return os.path.join(numba_dir, "graphflow")
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "graphflow", "jit")


def njit(*args, **options):
    """numba's `njit` (`njit(**options)(f)`, `njit(signature, **options)(f)` or `njit(f)`), with
    `cache=True` kept on disk as the module docstring says (and nowhere with cache=False)."""
    if len(args) == 1 and callable(args[0]) and not options:
        return njit()(args[0])
    signatures = args

    def decorate(function):
        from numba import njit as numba_njit

        cache = options.get("cache", False)
        dispatcher = numba_njit(**dict(options, cache=False))(function)
        if cache and enabled():
            try:
                dispatcher._cache = _tolerant_cache()(function)
            except Exception:  # no writable cache directory (RuntimeError), or a numba without it
                pass
        for signature in signatures:
            dispatcher.compile(signature)
        if signatures:
            dispatcher.disable_compile()
        return dispatcher
    return decorate


def load_source(source, namespace, name, depends=()):
    """The globals of a module that runs `source` with `namespace`'s names defined first (what
    `exec(source, namespace)` would leave in `namespace`): a module file in `source_dir()` (see the
    module docstring), or, where that cannot be written or read, `source` run by `exec` (the
    functions then compile in memory). `depends`: the graphflow modules (or their files) whose
    code the source's compiled functions call (their files' bytes go into the file's name, so an
    edit to them is a new module, not a stale cached loop); `name`: a short word for the file
    name."""
    if enabled():
        try:
            return _import(source, namespace, name, depends)
        except Exception:  # unwritable or unreadable directory: compiled in memory instead
            pass
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _import(source, namespace, name, depends):
    import numba

    stamp = " ".join([numba.__version__] + [_digest(m) for m in depends])
    text = f"# graphflow generated loop ({name}); depends: {stamp}\n{source}"
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    module_name = f"_graphflow_jit_{name}_{digest}"
    with _lock:
        module = sys.modules.get(module_name)
        if module is not None:
            return module.__dict__
        directory = source_dir()
        path = os.path.join(directory, f"{name}_{digest}.py")
        if not _holds(path, text):
            os.makedirs(directory, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f".{name}_", suffix=".tmp", dir=directory)
            try:
                with os.fdopen(handle, "w") as f:
                    f.write(text)
                os.replace(temporary, path)
            except BaseException:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
                raise
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        module.__dict__.update(namespace)
        sys.modules[module_name] = module  # numba finds a cached loop's module by its name
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        return module.__dict__


def _holds(path, text):
    try:
        with open(path) as f:
            return f.read() == text
    except OSError:
        return False


def _digest(module):
    path = module if isinstance(module, str) else module.__file__
    digest = _digests.get(path)
    if digest is None:
        with open(path, "rb") as f:
            digest = _digests[path] = hashlib.sha256(f.read()).hexdigest()[:16]
    return digest


def _fingerprint(value, depth=0):
    """What a closure variable contributes to a cache key: compiled functions and Python functions
    by their code (and their own closures), other values by numba's pickle of them."""
    from numba.core.serialize import dumps

    inner = getattr(value, "py_func", None)  # a numba dispatcher
    if inner is None and callable(value) and hasattr(value, "__code__"):
        inner = value
    if inner is not None and depth < 8:
        code = inner.__code__
        cells = tuple(_fingerprint(c.cell_contents, depth + 1) for c in (inner.__closure__ or ()))
        options = sorted((k, repr(v)) for k, v in getattr(value, "targetoptions", {}).items())
        return repr((inner.__module__, inner.__qualname__, _code_key(code), cells, options))
    try:
        return hashlib.sha256(dumps(value)).hexdigest()
    except Exception:
        return repr(value)


def _code_key(code):
    """A code object's bytecode, names and constants (nested code objects by their own key, not by
    their repr, which holds an address)."""
    consts = tuple(_code_key(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts)
    return (code.co_code, code.co_names, consts)


def _tolerant_cache():
    global _cache_class
    if _cache_class is None:
        from numba.core.caching import FunctionCache

        class TolerantCache(FunctionCache):
            """numba's FunctionCache: closures keyed by `_fingerprint`, I/O faults are misses."""

            def load_overload(self, sig, target_context):
                try:
                    return super().load_overload(sig, target_context)
                except Exception:
                    return None

            def save_overload(self, sig, data):
                try:
                    super().save_overload(sig, data)
                except Exception:
                    pass

            def _index_key(self, sig, codegen):
                function = self._py_func
                cells = tuple(_fingerprint(c.cell_contents) for c in (function.__closure__ or ()))
                digest = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
                return (sig, codegen.magic_tuple(),
                        (digest(function.__code__.co_code), digest(repr(cells).encode())))

        _cache_class = TolerantCache
    return _cache_class
