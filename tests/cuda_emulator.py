"""Run graphflow's CUDA kernels on the CPU, for tests on machines without a GPU.

The `.cu` sources (and the code generator's output) are compiled by the host C++ compiler against a
small emulation header: `__global__`/`__device__` vanish, `__shared__` becomes a function-static
(blocks run one after another), each thread of a block is a fiber (ucontext) of one OS thread that
yields at barriers, `__syncthreads()` is a block barrier and `__shfl_xor_sync` exchanges values
through per-warp slots between two warp barriers; `atomicAdd` is a plain read-modify-write (fibers
never interleave inside it). A generated `gf_emu_launch_<kernel>` entry point unpacks the same
argument buffer PyCUDA would pass (struct-packed by the prepared-call format) into the kernel's
parameters and runs the grid.

`EmulatedRuntime` implements the interface of `graphflow.kernels.cuda.device.CudaRuntime` with numpy
buffers as device memory, so the real launchers drive the real kernels and results can be compared
with the CPU kernels. What this cannot show: GPU timing, the hardware memory model, and the last-bit
differences of GPU math libraries.
"""

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import struct
import subprocess
import tempfile
import threading

import numpy as np

CXX = shutil.which("g++") or shutil.which("clang++")

HEADER = r"""
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <ucontext.h>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

using std::isfinite;

// Each CUDA thread of a block is a fiber (ucontext) of one OS thread; blocks run one after another.
// A fiber waiting at a barrier yields to the scheduler, which resumes the fibers round-robin.
struct gf_emu_dim3 { unsigned int x = 1, y = 1, z = 1; };
static gf_emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

struct gf_emu_fiber {
    ucontext_t ctx;
    std::unique_ptr<char[]> stack;  // uninitialized: only the pages a fiber touches are committed
    gf_emu_dim3 tid, bid;
    bool done = false;
};
static std::vector<gf_emu_fiber> gf_emu_fibers;
static const size_t gf_emu_stack_bytes = 256 * 1024;
static ucontext_t gf_emu_scheduler;
static unsigned gf_emu_current = 0;
static void (*gf_emu_body)(unsigned) = nullptr;

static inline void gf_emu_yield() {
    gf_emu_fiber &f = gf_emu_fibers[gf_emu_current];
    f.tid = threadIdx;
    f.bid = blockIdx;
    swapcontext(&f.ctx, &gf_emu_scheduler);
    threadIdx = f.tid;
    blockIdx = f.bid;
}

struct gf_emu_barrier {
    unsigned n = 0, count = 0;
    unsigned long long gen = 0;
    void arrive_and_wait() {
        const unsigned long long g = gen;
        if (++count == n) {
            count = 0;
            ++gen;
            return;
        }
        while (gen == g) gf_emu_yield();
    }
};
static gf_emu_barrier gf_emu_block_barrier;
static gf_emu_barrier gf_emu_warp_barriers[32];
static unsigned long long gf_emu_warp_slots[32][32];

inline void __syncthreads() { gf_emu_block_barrier.arrive_and_wait(); }

inline unsigned gf_emu_linear_tid() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

template <typename T> inline T __shfl_xor_sync(unsigned, T v, int offset) {
    const unsigned t = gf_emu_linear_tid(), w = t / 32, lane = t % 32;
    std::memcpy(&gf_emu_warp_slots[w][lane], &v, sizeof(T));
    gf_emu_warp_barriers[w].arrive_and_wait();
    T r;
    std::memcpy(&r, &gf_emu_warp_slots[w][lane ^ (unsigned)offset], sizeof(T));
    gf_emu_warp_barriers[w].arrive_and_wait();
    return r;
}

inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }

template <typename T> inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }

static void gf_emu_fiber_main(int index) {
    gf_emu_body((unsigned)index);
    gf_emu_fibers[index].done = true;
    gf_emu_yield();
}

template <typename... A>
void gf_emu_launch(void (*kernel)(A...), gf_emu_dim3 grid, gf_emu_dim3 block, const char *buf) {
    static std::tuple<std::remove_cv_t<A>...> args;
    size_t off = 0;
    std::apply([&](auto &...a) {
        ((off = (off + alignof(std::remove_reference_t<decltype(a)>) - 1)
                / alignof(std::remove_reference_t<decltype(a)>)
                * alignof(std::remove_reference_t<decltype(a)>),
          std::memcpy(&a, buf + off, sizeof(a)), off += sizeof(a)), ...);
    }, args);
    static void (*k)(A...);
    k = kernel;
    gridDim = grid;
    blockDim = block;
    const unsigned n = block.x * block.y * block.z;
    gf_emu_block_barrier = gf_emu_barrier{n, 0, 0};
    for (unsigned w = 0; w * 32 < n; ++w)
        gf_emu_warp_barriers[w] = gf_emu_barrier{std::min(32u, n - w * 32), 0, 0};
    gf_emu_body = [](unsigned t) {
        threadIdx = {t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)};
        for (unsigned bz = 0; bz < gridDim.z; ++bz)
            for (unsigned by = 0; by < gridDim.y; ++by)
                for (unsigned bx = 0; bx < gridDim.x; ++bx) {
                    blockIdx = {bx, by, bz};
                    std::apply(k, args);
                    gf_emu_block_barrier.arrive_and_wait();  // the block's shared memory is reused
                }
    };
    if (gf_emu_fibers.size() < n) gf_emu_fibers.resize(n);
    for (unsigned t = 0; t < n; ++t) {
        gf_emu_fiber &f = gf_emu_fibers[t];
        if (!f.stack) f.stack.reset(new char[gf_emu_stack_bytes]);
        f.done = false;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack.get();
        f.ctx.uc_stack.ss_size = gf_emu_stack_bytes;
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, (void (*)())gf_emu_fiber_main, 1, (int)t);
    }
    unsigned running = n;
    while (running) {
        running = 0;
        for (unsigned t = 0; t < n; ++t) {
            gf_emu_fiber &f = gf_emu_fibers[t];
            if (f.done) continue;
            gf_emu_current = t;
            swapcontext(&gf_emu_scheduler, &f.ctx);
            if (!f.done) ++running;
        }
    }
}
"""

_ENTRY = re.compile(r'extern "C" __global__ void\s+(\w+)\s*\(')
_PREPROCESSED_ENTRY = re.compile(r'extern "C"\s+void\s+(\w+)\s*\(')
_lock = threading.Lock()
_libraries = {}


def _cache_dir():
    path = os.path.join(tempfile.gettempdir(), f"graphflow-cuda-emu-{os.getuid()}")
    os.makedirs(path, exist_ok=True)
    return path


def kernel_names(text):
    """Names of the kernels a CUDA source defines (macro-generated ones included)."""
    proc = subprocess.run([CXX, "-std=c++20", "-E", "-P", "-x", "c++", "-"], input=HEADER + text,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"preprocessing failed:\n{proc.stderr[-2000:]}")
    return sorted(n for n in set(_PREPROCESSED_ENTRY.findall(proc.stdout))
                  if n.startswith("gf_") and not n.startswith("gf_emu_"))


def _compile(source, key, flags=()):
    so = os.path.join(_cache_dir(), f"{key}.so")
    if not os.path.exists(so):
        cpp = os.path.join(_cache_dir(), f"{key}.cpp")
        with open(cpp, "w", encoding="utf-8") as f:
            f.write(source)
        tmp = so + f".{os.getpid()}.tmp"
        cmd = [CXX, "-std=c++20", "-O1", "-fPIC", "-shared", "-w", *flags, "-o", tmp, cpp]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"emulation build failed ({' '.join(cmd)}):\n{proc.stderr[-4000:]}")
        os.replace(tmp, so)
    return ctypes.CDLL(so)


def _launchers(names):
    return "\n".join(
        f'extern "C" void gf_emu_launch_{n}(unsigned gx, unsigned gy, unsigned gz, unsigned bx, '
        f"unsigned by, unsigned bz, const char *buf) "
        f"{{ gf_emu_launch({n}, {{gx, gy, gz}}, {{bx, by, bz}}, buf); }}" for n in sorted(names))


def _precompiled_header(prelude):
    """A precompiled header of the emulation header + `prelude` (the generated kernels' headers),
    so that each generated kernel compiles in a fraction of the time."""
    key = hashlib.sha1((HEADER + prelude + (CXX or "")).encode()).hexdigest()[:20]
    path = os.path.join(_cache_dir(), f"pch-{key}.hpp")
    if not os.path.exists(path + ".gch"):
        with open(path, "w", encoding="utf-8") as f:
            f.write(HEADER + prelude)
        tmp = path + f".{os.getpid()}.gch"
        cmd = [CXX, "-std=c++20", "-O1", "-fPIC", "-w", "-x", "c++-header", "-o", tmp, path]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"precompiled header failed:\n{proc.stderr[-4000:]}")
        os.replace(tmp, path + ".gch")
    return path


def build_generated(prelude, kernel_text, name):
    """A library for one generated kernel (`kernel_text` follows the shared `prelude`)."""
    header = _precompiled_header(prelude)
    source = f'#include "{header}"\n{kernel_text}\n{_launchers([name])}\n'
    key = hashlib.sha1((source + HEADER + prelude + (CXX or "")).encode()).hexdigest()[:20]
    with _lock:
        lib = _libraries.get(key)
        if lib is None:
            lib = _libraries[key] = _compile(source, key)
        return lib


def build(text, names):
    """A ctypes library running the kernels `names` of CUDA source `text` on the CPU (cached)."""
    source = HEADER + text + "\n" + _launchers(names) + "\n"
    key = hashlib.sha1((source + (CXX or "")).encode()).hexdigest()[:20]
    with _lock:
        lib = _libraries.get(key)
        if lib is None:
            lib = _libraries[key] = _compile(source, key)
        return lib


class EmulatedArray:
    """Device memory of the emulation: a numpy buffer whose address is the 'device pointer'."""

    def __init__(self, shape, dtype, buffer=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.host = np.empty(self.shape, self.dtype) if buffer is None else buffer
        self.size = self.host.size
        self.nbytes = self.host.nbytes
        self.gpudata = self.host.ctypes.data if self.size else None


class EmulatedFunction:
    def __init__(self, lib, name, fmt):
        self._launch = getattr(lib, f"gf_emu_launch_{name}")
        self._launch.restype = None
        self.name = name
        self.fmt = "@" + fmt

    def prepared_call(self, grid, block, *args, shared_size=0):
        buf = struct.pack(self.fmt, *[int(a) if isinstance(a, np.integer) else a for a in args])
        self._launch(*(ctypes.c_uint(int(v)) for v in tuple(grid) + tuple(block)),
                     ctypes.c_char_p(buf))


class EmulatedRuntime:
    """The CudaRuntime interface over the CPU emulation (numpy buffers as device memory)."""

    array_type = EmulatedArray
    sm_count = 1  # few blocks: grid-stride loops cover the rest
    device_index = 0
    description = "CPU emulation of the CUDA kernels"

    def __init__(self, generated_texts=()):
        from graphflow.kernels.cuda import codegen, sources
        self._sources = sources
        self._libs = {}
        self._functions = {}
        header = sources.expand(codegen.HEADER)
        bodies = {}
        for text in generated_texts:
            bodies.update({n: text[len(header):] for n in _ENTRY.findall(text)})
        self._generated_lib = build(header + "\n".join(bodies.values()), bodies) if bodies else None
        self._generated = set(bodies)
        self.launches = []

    def _source_lib(self, source_name):
        lib = self._libs.get(source_name)
        if lib is None:
            text = self._sources.load(source_name)
            lib = self._libs[source_name] = build(text, kernel_names(text))
        return lib

    def kernel(self, source_name, name, fmt):
        key = (source_name, name)
        fn = self._functions.get(key)
        if fn is None:
            fn = self._functions[key] = EmulatedFunction(self._source_lib(source_name), name, fmt)
        self.launches.append(name)
        return fn

    def function(self, text, name, fmt):
        if name not in self._generated:
            from graphflow.kernels.cuda import codegen
            header = self._sources.expand(codegen.HEADER)
            lib = build_generated(header, text[len(header):], name)
        else:
            lib = self._generated_lib
        self.launches.append(name)
        return EmulatedFunction(lib, name, fmt)

    def is_device_array(self, value):
        return isinstance(value, EmulatedArray)

    def empty(self, shape, dtype):
        return EmulatedArray(shape, dtype)

    def to_device(self, value):
        host = np.array(value, order="C", copy=True)
        return EmulatedArray(host.shape, host.dtype, host)

    def to_host(self, array):
        return np.array(array.host, copy=True)

    def copy(self, array):
        return EmulatedArray(array.shape, array.dtype, np.array(array.host, copy=True))

    def fill(self, array, value):
        from graphflow.kernels.cuda import launch
        return launch.fill(self, array, value)

    def reshape(self, array, shape):
        return EmulatedArray(shape, array.dtype, array.host.reshape(tuple(int(d) for d in shape)))

    def grid_for(self, n, block=256, per_thread=1):
        blocks = (int(n) + block * per_thread - 1) // (block * per_thread)
        return (max(1, min(blocks, self.sm_count * 4)), 1, 1)

    @contextlib.contextmanager
    def active(self):
        yield self

    def wrap_run(self, fn):
        return fn
