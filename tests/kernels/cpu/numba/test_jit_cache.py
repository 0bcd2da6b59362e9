"""jit_cache: compiled loops kept on disk, so a second process compiles nothing (checked by numba's
cache hit and miss counters, not by timing), and a cache that cannot be written is no error."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("numba")

# A source-file loop that closes over another compiled function (jit_updates' SGD loop), a loop
# generated at run time (jit_conv's, from its own source text) and a fused run's loop.
_CHILD = r"""
import json, sys
import numpy as np
from graphflow.kernels.cpu.numba import fused_jit, jit_cache, jit_conv, jit_updates
from graphflow.kernels.cpu.reference import conv_geometry

stats = {}
def record(name, fn):
    stats[name] = [sum(fn.stats.cache_hits.values()), sum(fn.stats.cache_misses.values())]

sgd = jit_updates.loops()["sgd"]
v = np.arange(64, dtype=np.float32)
out = np.empty_like(v)
sgd(v, v, np.float32(0.5), out, 0, 64)
assert np.array_equal(out, v - v * np.float32(0.5))
record("sgd", sgd)

x = np.random.default_rng(0).standard_normal((2, 6, 6, 1)).astype(np.float32)
f = np.random.default_rng(1).standard_normal((3, 3, 1, 4)).astype(np.float32)
geo = conv_geometry.Geometry(6, 6, 3, 3, 1, 1, 1, 1, "VALID")
loop = jit_conv.kernel(f.shape, geo, False)
y = np.empty((2, geo.oh, geo.ow, 4), np.float32)
loop(np.ascontiguousarray(x).reshape(-1), f.reshape(9, 4), np.zeros(4, np.float32), y.reshape(-1), 0, 2)
expected = sum(x[:, i:i + 4, j:j + 4, :] * f[i, j, 0] for i in range(3) for j in range(3))
assert np.allclose(y, expected, atol=1e-5)
record("conv", loop)

source = "def run(a, b):\n    for i in range(a.shape[0]):\n        b[i] = a[i] * 2.0 + 1.0\n"
namespace = jit_cache.load_source(source, {}, "test", ())
double = jit_cache.njit(nogil=True, cache=True)(namespace["run"])
a = np.arange(8.0)
b = np.empty_like(a)
double(a, b)
assert np.array_equal(b, a * 2.0 + 1.0)
record("generated", double)
stats["file"] = namespace.get("__file__")
print(json.dumps(stats))
"""


def _child(tmp_path, numba_dir, xdg):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(numba_dir), XDG_CACHE_HOME=str(xdg))
    env.pop("GRAPHFLOW_NO_JIT", None)
    env.pop("GRAPHFLOW_JIT_CACHE", None)
    root = str(pathlib.Path(__file__).resolve().parents[4])  # the repository
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                          timeout=600, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_second_process_loads_every_loop_from_the_cache(tmp_path):
    numba_dir, xdg = tmp_path / "numba", tmp_path / "xdg"
    first = _child(tmp_path, numba_dir, xdg)
    for name in ("sgd", "conv", "generated"):
        assert first[name] == [0, 1], (name, first)
    # the generated sources went under NUMBA_CACHE_DIR (it is set), named by a hash
    generated = os.listdir(numba_dir / "graphflow")
    assert any(n.startswith("conv_") and n.endswith(".py") for n in generated), generated
    assert first["file"].startswith(str(numba_dir / "graphflow"))
    assert any(n.endswith(".nbi") for _, _, files in os.walk(numba_dir) for n in files)
    assert not xdg.exists()  # nothing written elsewhere
    second = _child(tmp_path, numba_dir, xdg)
    for name in ("sgd", "conv", "generated"):
        assert second[name] == [1, 0], (name, second)  # loaded, nothing compiled
    # the cache index did not grow: the same keys hit, no new entries per process
    third = _child(tmp_path, numba_dir, xdg)
    assert third == second
    assert sorted(os.listdir(numba_dir / "graphflow")) == sorted(generated)


def test_unwritable_cache_directory_compiles_in_memory(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    # neither directory can be made (their parent is a file): the loops compile in memory
    stats = _child(tmp_path, blocker / "numba", blocker / "xdg")
    assert stats["generated"] == [0, 1] and stats["conv"] == [0, 1]
    assert stats["file"] is None  # run from its source text, not a module file


def test_xdg_cache_home_without_numba_cache_dir(tmp_path, monkeypatch):
    from graphflow.kernels.cpu.numba import jit_cache

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jit_cache.source_dir() == str(tmp_path / "xdg" / "graphflow" / "jit")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "nb"))
    assert jit_cache.source_dir() == str(tmp_path / "nb" / "graphflow")
