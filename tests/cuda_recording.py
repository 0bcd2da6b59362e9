"""A recording stand-in for the CUDA runtime: launches are checked, nothing is computed.

`RecordingRuntime` offers the interface of `graphflow.kernels.cuda.device.CudaRuntime` with device
arrays that are only shapes, dtypes and addresses. Every kernel launch is checked against the
kernel's parameter list (from nvcc's PTX for package sources, from the signature for generated
kernels): argument count, size and kind, grid and block limits, no null pointers. tests/
test_cuda_kernels.py drives the real launchers through it on machines without a GPU.
"""

import contextlib
import itertools
import re

import numpy as np

from graphflow.engine import placement
from graphflow.kernels import cuda as cuda_table
from tests.test_cuda_compile import NVCC, format_sizes, ptx_entries


class MockArray:
    """Stands for a device array: shape, dtype and an address; no data (unless uploaded)."""

    _next = itertools.count(1)

    def __init__(self, shape, dtype, host=None, address=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape)) if self.shape else 1
        self.nbytes = self.size * self.dtype.itemsize
        self.host = host
        if self.size == 0:
            self.gpudata = None  # like PyCUDA: an empty array owns no memory
        else:
            self.gpudata = address if address is not None else (next(self._next) << 32)


_SIG = re.compile(r'extern "C" __global__ void (\w+)\(\s*(.*?)\)\s*\{', re.S)


def _generated_param_sizes(text, name):
    for found, params in _SIG.findall(text):
        if found == name:
            sizes = []
            for p in params.split(","):
                p = p.strip()
                sizes.append(72 if "gf_shape" in p else 64 if "gf_strides" in p else 8)
            return sizes
    raise AssertionError(f"generated source has no kernel {name}")


class MockFunction:
    def __init__(self, rt, name, fmt, param_sizes):
        self.rt, self.name, self.fmt = rt, name, fmt
        self.sizes = format_sizes(fmt)
        if param_sizes is not None:
            assert self.sizes == param_sizes, (
                f"{name}: launcher format {fmt} ({self.sizes}) != kernel parameters {param_sizes}")

    def prepared_call(self, grid, block, *args, shared_size=0):
        name = self.name
        assert len(grid) == 3 and len(block) == 3, f"{name}: grid {grid}, block {block}"
        assert 1 <= grid[0] < 2**31 and 1 <= grid[1] <= 65535 and 1 <= grid[2] <= 65535, \
            f"{name}: grid {grid} out of range"
        assert 1 <= block[0] * block[1] * block[2] <= 1024, f"{name}: block {block}"
        assert len(args) == len(self.sizes), f"{name}: {len(args)} args for format {self.fmt}"
        codes = re.findall(r"\d*[a-zA-Z]", self.fmt)
        for i, (code, arg) in enumerate(zip(codes, args)):
            if code.endswith("s"):
                assert isinstance(arg, bytes) and len(arg) == int(code[:-1]), \
                    f"{name}: argument {i} must be {code[:-1]} bytes"
            elif code == "P":
                assert arg is not None and int(arg) > 0, f"{name}: argument {i} is a null pointer"
            elif code == "d":
                assert isinstance(arg, (float, np.floating)), f"{name}: argument {i} not a double"
            else:
                assert isinstance(arg, (int, np.integer)) and not isinstance(arg, bool), \
                    f"{name}: argument {i} ({type(arg).__name__}) is not an integer"
        self.rt.launches.append(name)


GENERATED = {}  # every generated kernel the recording runs asked for: name -> source text


class RecordingRuntime:
    """The interface of `graphflow.kernels.cuda.device.CudaRuntime`, recording launches."""

    array_type = MockArray
    sm_count = 132
    device_index = 0
    description = "recording runtime (no device)"

    def __init__(self):
        self.launches = []
        self.generated = {}

    def kernel(self, source_name, name, fmt):
        sizes = ptx_entries(source_name).get(name, "missing") if NVCC else None
        assert sizes != "missing", f"{source_name} has no kernel {name}"
        return MockFunction(self, name, fmt, sizes)

    def function(self, text, name, fmt):
        self.generated[name] = text
        GENERATED[name] = text
        return MockFunction(self, name, fmt, _generated_param_sizes(text, name))

    def is_device_array(self, value):
        return isinstance(value, MockArray)

    def empty(self, shape, dtype):
        return MockArray(shape, dtype)

    def to_device(self, value):
        host = np.asarray(value, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        return MockArray(host.shape, host.dtype, host=host)

    def to_host(self, array):
        if array.host is not None:
            return np.array(array.host, copy=True)
        return np.zeros(array.shape, array.dtype)

    def copy(self, array):
        return MockArray(array.shape, array.dtype, host=array.host)

    def fill(self, array, value):
        from graphflow.kernels.cuda import launch
        launch.fill(self, array, value)
        array.host = np.full(array.shape, value, array.dtype)
        return array

    def reshape(self, array, shape):
        shape = tuple(int(d) for d in shape)
        assert int(np.prod(shape)) == array.size, f"reshape {array.shape} -> {shape}"
        host = None if array.host is None else array.host.reshape(shape)
        return MockArray(shape, array.dtype, host=host, address=array.gpudata)

    def grid_for(self, n, block=256, per_thread=1):
        blocks = (int(n) + block * per_thread - 1) // (block * per_thread)
        return (max(1, min(blocks, self.sm_count * 32)), 1, 1)

    @contextlib.contextmanager
    def active(self):
        yield self

    def wrap_run(self, fn):
        return fn


class RecordingBackend(placement.CudaBackend):
    def __init__(self, rt):
        super().__init__("/gpu:0", rt, cuda_table)
