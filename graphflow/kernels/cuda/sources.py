"""CUDA sources and the module cache.

`load(name)` reads a `.cu` file of this package with its `#include "x.cuh"` lines replaced by the
header text (each header once), so the text handed to the compiler is self-contained: PyCUDA's disk
cache then keys on the text alone and never runs the preprocessor to find out whether a cached binary
is still valid. The same text is what tests/test_cuda_compile.py compiles with `nvcc --ptx`.

`ModuleCache` compiles each distinct source once per process (keyed by its hash) through a
`compile(source) -> module` function; the runtime gives it PyCUDA's `SourceModule` with a persistent
`cache_dir`, so a second process loads the binary from disk instead of running nvcc again.
"""

import hashlib
import os
import re
import threading

SOURCE_DIR = os.path.dirname(os.path.abspath(__file__))
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_.]+)"\s*$', re.M)
_texts = {}
_texts_lock = threading.Lock()


def source_names():
    """The `.cu` files of this package (headers `.cuh` are pulled in by them)."""
    return sorted(n for n in os.listdir(SOURCE_DIR) if n.endswith(".cu"))


def _read(name):
    with open(os.path.join(SOURCE_DIR, name), encoding="utf-8") as f:
        return f.read()


def expand(text, seen=None):
    """`text` with every `#include "name"` of a package header replaced by the header's text."""
    seen = set() if seen is None else seen
    out = []
    pos = 0
    for m in _INCLUDE.finditer(text):
        out.append(text[pos:m.start()])
        header = m.group(1)
        if header not in seen:
            seen.add(header)
            body = _read(header).replace("#pragma once", "")
            out.append(f"// ---- {header}\n{expand(body, seen)}\n// ---- end {header}")
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def load(name):
    """The self-contained text of source `name` (cached)."""
    text = _texts.get(name)
    if text is None:
        with _texts_lock:
            text = _texts.get(name)
            if text is None:
                text = expand(_read(name))
                _texts[name] = text
    return text


def digest(text):
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class ModuleCache:
    """Compiled modules by source hash: each distinct source is compiled once per process."""

    def __init__(self, compile_fn):
        self._compile = compile_fn
        self._modules = {}
        self._lock = threading.Lock()
        self.compiles = 0

    def get(self, text):
        key = digest(text)
        module = self._modules.get(key)
        if module is None:
            with self._lock:
                module = self._modules.get(key)
                if module is None:
                    module = self._compile(text)
                    self.compiles += 1
                    self._modules[key] = module
        return module

    def function(self, text, name):
        return self.get(text).get_function(name)

    def __len__(self):
        return len(self._modules)


def default_cache_dir():
    """Where compiled binaries persist between processes: $GRAPHFLOW_CUDA_CACHE or
    ~/.cache/graphflow/cuda."""
    path = os.environ.get("GRAPHFLOW_CUDA_CACHE")
    if not path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "graphflow", "cuda")
    return path
