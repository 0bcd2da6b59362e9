"""The fenced code blocks of a Markdown page, and how tests/test_docs.py runs the shell ones.

A block's info string is its language, then optional markers, space-separated:

    ```bash needs=dot,mpirun      a program the block runs: the block is skipped (with that reason)
                                  where one is not on PATH, unless GRAPHFLOW_REQUIRE_TOOLS names it
    ```bash serves=6006           its last command is a server that runs until stopped: the block
                                  passes once something listens on that port, then it is stopped
    ```bash slow                  runs only where the tests marked slow run (GRAPHFLOW_RUN_SLOW=1)
    ```bash skip=installs         never run: `installs` (makes a virtualenv, installs packages),
                                  `downloads` (needs the network), `gpu-machine` (an NVIDIA GPU and
                                  what `docs/cuda.md` prepares for it)

Markdown renderers show the language only, so readers never see the markers.
"""

import dataclasses
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SHELLS = ("bash", "shell", "sh")
PYTHONS = ("python", "py", "python3")
SKIP_REASONS = {
    "installs": "makes a virtualenv or installs packages",
    "downloads": "needs the network",
    "gpu-machine": "needs an NVIDIA GPU and the PyCUDA build docs/cuda.md prepares",
}
_FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)((?:[ \t]+[^`\s]+)*)\s*$")
_CLOSE = re.compile(r"^\s*```\s*$")


@dataclasses.dataclass
class Block:
    line: int  # the Markdown line of the block's first code line
    lang: str
    code: str
    needs: tuple = ()
    serves: int = None
    slow: bool = False
    skip: str = None


def _markers(words, where):
    found = {}
    for word in words:
        key, _, value = word.partition("=")
        if key == "needs" and value:
            found["needs"] = tuple(value.split(","))
        elif key == "serves" and value.isdigit():
            found["serves"] = int(value)
        elif word == "slow":
            found["slow"] = True
        elif key == "skip" and value in SKIP_REASONS:
            found["skip"] = value
        else:
            raise ValueError(f"{where}: unknown code block marker {word!r} (see tests/doc_blocks.py)")
    return found


def code_blocks(text, where="<markdown>"):
    """[Block] of a Markdown text's fenced blocks, in order (the markers parsed, as documented)."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, extra = m.group(1), m.group(2).lower(), m.group(3).split()
        start = i + 1
        i += 1
        while i < len(lines) and not _CLOSE.match(lines[i]):
            i += 1
        if i == len(lines):
            raise ValueError(f"{where}: unclosed code block starting at line {start}")
        body = [line[len(indent):] if line.startswith(indent) else line for line in lines[start:i]]
        markers = _markers(extra, f"{where}:{start}") if lang in SHELLS + PYTHONS else {}
        blocks.append(Block(start + 1, lang, "\n".join(body) + "\n", **markers))
        i += 1
    return blocks


def python_blocks(text):
    """[(first line number, code)] of the ```python fenced blocks of a Markdown text."""
    return [(b.line, b.code) for b in code_blocks(text) if b.lang in PYTHONS]


def shell_environment(bin_dir, root):
    """The environment of a page's shell blocks: `python` and `graphflow` (a launcher written into
    `bin_dir`) are this interpreter and this checkout's graphflow, whatever the PATH says."""
    os.makedirs(bin_dir, exist_ok=True)
    launcher = os.path.join(bin_dir, "graphflow")
    with open(launcher, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" -c '
                '"import sys; from graphflow.tools.cli import main; sys.exit(main())" "$@"\n')
    os.chmod(launcher, 0o755)
    env = dict(os.environ)
    python_dir = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join([bin_dir, python_dir, env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    env["GRAPHFLOW_EXAMPLES_EPOCHS"] = "1"  # the examples train one epoch per model
    return env


def _script(block):
    # Padded so that $LINENO is the Markdown line; the trap names the command that failed.
    return ("set -eo pipefail; trap 'echo \"[docs] failed at line $LINENO: $BASH_COMMAND\" >&2' ERR"
            + "\n" * (block.line - 1) + block.code)


def _listening(port):
    try:
        with socket.create_connection(("localhost", port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_shell(block, cwd, env, timeout):
    """Run a shell block with bash in `cwd`; None when it passed, else what went wrong (the output's
    tail). A `serves` block passes when its port listens (then its processes are stopped)."""
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(["bash", "-c", _script(block)], cwd=cwd, env=env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                                start_new_session=True)
        deadline = time.monotonic() + timeout
        problem = None
        try:
            while True:
                if block.serves and _listening(block.serves):
                    break
                rc = proc.poll()
                if rc is not None:
                    if block.serves:
                        problem = f"exited ({rc}) instead of serving on port {block.serves}"
                    elif rc:
                        problem = f"exited with status {rc}"
                    break
                if time.monotonic() > deadline:
                    problem = f"still running after {timeout} s"
                    break
                time.sleep(0.2)
        finally:
            _stop(proc)
        if problem is None:
            return None
        log.seek(0)
        return f"{problem}; its output ends:\n{log.read()[-3000:]}"


class PortLock:
    """Holds `port` for one server block at a time on this machine (xdist workers, other runs)."""

    def __init__(self, port):
        self.port = port
        self.path = os.path.join(tempfile.gettempdir(), f"graphflow-docs-port-{port}.lock")

    def __enter__(self):
        import fcntl
        self.file = open(self.path, "w")
        fcntl.flock(self.file, fcntl.LOCK_EX)
        return not _listening(self.port)  # False: another program holds the port

    def __exit__(self, *exc):
        self.file.close()


def missing_programs(block, required):
    """The programs a block needs that are not on PATH (those CI requires are never missing: they
    run and fail loudly)."""
    return [name for name in block.needs if shutil.which(name) is None and not required(name)]
