"""`gc_paused()`: pause Python's cyclic garbage collector while many long-lived objects are built.

Building a large graph (the backward pass of a 100k-op graph, a loaded or saved graph document)
allocates many objects and almost no garbage; collections triggered by allocation alone would rescan
the whole graph again and again (about a third of the time on a 100k-op graph)."""

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
