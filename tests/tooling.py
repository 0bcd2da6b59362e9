"""External programs some tests need (Graphviz's `dot`, `nvcc`, a C++ compiler).

On a developer's machine a missing program skips those tests with the reason. CI installs them and
sets GRAPHFLOW_REQUIRE_TOOLS (e.g. "dot,nvcc,g++"): a required program never skips, so its tests
run — and fail loudly if the program is missing after all. `required("onednn")` does the same for
the optional oneDNN library (the onednn-cpu-gomp wheel, which the test extra installs).
`run_on_threads` is the tests' one way of calling something from several threads at once;
`raised_within` calls something that must not block (a read of a FIFO) with a time limit.
`sampled` gives the default run's share of a fuzzer's mutants (the `fuzz_share` fixture).
"""

import os
import shutil
import threading
import time
import tracemalloc

import pytest


def required(name):
    return name in os.environ.get("GRAPHFLOW_REQUIRE_TOOLS", "").replace(" ", "").split(",")


def needs_program(name, purpose):
    """A skipif marker: skip when `name` is not on PATH, unless CI requires it."""
    missing = shutil.which(name) is None
    return pytest.mark.skipif(missing and not required(name),
                              reason=f"`{name}` is not on PATH ({purpose}); CI provides it")


def skip_unless_program(name, purpose, found):
    """Inside a test or fixture: skip when `found` is falsy, unless CI requires `name`."""
    if not found and not required(name):
        pytest.skip(f"`{name}` is not available ({purpose}); CI provides it")


def sampled(items, share):
    """Every (1/share)-th of `items`, from the first on (all of them when share is 1): a fuzzer's
    mutants in the default run, whose `fuzz_share` is 1/16 (CI, with the tests marked slow: 1)."""
    step = max(1, round(1 / share))
    for i, item in enumerate(items):
        if i % step == 0:
            yield item


def run_on_threads(work, count):
    """Call `work(k)` for k in range(count), each on a thread of its own, all started before any
    is joined; the exceptions they raised (an empty list when none did)."""
    errors = []

    def guarded(k):
        try:
            work(k)
        except Exception as exc:  # noqa: BLE001  (returned to the test)
            errors.append(exc)
    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def raised_within(seconds, fn, *args):
    """The exception `fn(*args)` raised (None if it returned), run on a daemon thread; the test
    fails if the call has not ended within `seconds` (a read blocked on a FIFO, say), instead of
    hanging the test run."""
    outcome = []

    def call():
        try:
            fn(*args)
            outcome.append(None)
        except Exception as exc:  # noqa: BLE001  (returned to the test)
            outcome.append(exc)
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} did not return within {seconds} s (blocked)")
    return outcome[0]


class Bounds:
    """The time and traced peak memory of handling one fuzzed file: `bounds = Bounds()` starts
    both, `bounds.stop()` (in a `finally`) ends them, `bounds.verdict(result, seconds,
    max_bytes)` is `result`, or what went over ("took 3.1 s", "used 80 MiB")."""

    def __init__(self):
        tracemalloc.start()
        self.start = time.monotonic()
        self.peak = self.elapsed = None

    def stop(self):
        self.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        self.elapsed = time.monotonic() - self.start

    def verdict(self, result, seconds, max_bytes):
        if self.elapsed > seconds:
            return f"took {self.elapsed:.1f} s"
        if self.peak > max_bytes:
            return f"used {self.peak / 2**20:.0f} MiB"
        return result
