"""TF1 programs written the way tutorials and papers wrote them (tests/tf1/programs/), each run as
a script with `import graphflow as tf` in a fresh process: each must run unchanged to its end and
pass the checks it makes of its own results (accuracy reached, losses falling, values restored)."""

import os
import subprocess
import sys

import pytest

import graphflow

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")


@pytest.mark.parametrize("program", sorted(p for p in os.listdir(PROGRAMS) if p.endswith(".py")))
def test_program_runs_as_written(program):
    root = os.path.dirname(os.path.dirname(graphflow.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, os.path.join(PROGRAMS, program)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
