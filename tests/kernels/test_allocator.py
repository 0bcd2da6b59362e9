"""graphflow.kernels.cpu.allocator: glibc's thresholds are set when the CPU kernels load (unless
GRAPHFLOW_KEEP_MALLOC=1), so a freed multi-megabyte array's memory serves the next one of its size."""

import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from graphflow.kernels.cpu import allocator

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="glibc only")
def test_thresholds_are_set_when_the_kernels_load():
    assert allocator.applied == (os.environ.get("GRAPHFLOW_KEEP_MALLOC", "") in ("", "0"))


@pytest.mark.skipif(not GLIBC or not allocator.applied, reason="glibc with the thresholds set")
def test_freed_arrays_are_reused_without_page_faults():
    import resource

    def step():
        keep = np.ones(1 << 20, np.float32)  # 4 MB alive while the next one is made, as in a step
        big = np.empty(3 << 20, np.float32)
        big.fill(1.0)                         # first write to each page
        del big, keep

    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        step()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 100  # measured 0; without the settings ~1000 (fresh pages each time)


@pytest.mark.skipif(not GLIBC, reason="glibc only")
def test_the_environment_variable_keeps_malloc_settings():
    code = "import graphflow.kernels.cpu.allocator as a; print(a.applied)"
    env = dict(os.environ, GRAPHFLOW_KEEP_MALLOC="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert out.stdout.strip() == "False"
