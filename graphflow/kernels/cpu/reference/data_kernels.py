"""CPU kernels of the iterator ops (`graphflow.ops.data_ops`).

A session keeps one `IteratorResource` per iterator name (`SessionState.resource`). `MakeIterator`
closes the resource's current Python iterator (stopping its background threads) and starts a new
one from the dataset with the captured tensors' values; `IteratorGetNext` takes the next element
under the resource's lock, so concurrent runs each get a different element. Iterators are not
transactional (as in TF1): an element taken by a run that later fails is consumed.
"""

import threading

import numpy as np

from graphflow.framework.errors import FailedPreconditionError, OutOfRangeError
from graphflow.kernels.cpu import cpu_kernel
from graphflow.ops.data_ops import lookup_dataset, parse_iterator_handle


class IteratorResource:
    """One named iterator of a session: the running Python iterator, or None before it starts."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = None

    def restart(self, source, capture_values):
        with self.lock:
            self._close_running()
            self.running = source.start(capture_values)

    def next(self, node, one_shot=None):
        with self.lock:
            if self.running is None:
                one_shot = one_shot if one_shot is not None else node.attrs.get("one_shot")
                if not one_shot:
                    raise FailedPreconditionError(
                        None, None, f"GetNext() failed because the iterator has not been "
                        f"initialized ('{node.name}'): run the iterator's initializer first "
                        "(sess.run(iterator.initializer))")
                self.running = lookup_dataset(one_shot, node.name).start(())
            try:
                return next(self.running)
            except StopIteration:
                raise OutOfRangeError(None, None, f"End of sequence (op '{node.name}')") from None

    def _close_running(self):
        running, self.running = self.running, None
        if running is not None:
            running.close()

    def close(self):
        with self.lock:
            self._close_running()


def _resource(node):
    return node.state.resource(("iterator", node.attrs["iterator"]), IteratorResource)


@cpu_kernel("MakeIterator")
def _make_iterator(node):
    source = lookup_dataset(node.attrs["dataset"], node.name)
    resource = _resource(node)

    def make_iterator(*capture_values):
        resource.restart(source, capture_values)
    return make_iterator


@cpu_kernel("IteratorGetNext")
def _iterator_get_next(node):
    if len(node.in_dtypes) == 1:  # a feedable iterator: the handle names the iterator to read
        def iterator_get_next_from_handle(handle):
            name, token = parse_iterator_handle(np.asarray(handle).item(), node.name)
            resource = node.state.resource(("iterator", name), IteratorResource)
            values = resource.next(node, one_shot=token)
            return values[0] if len(values) == 1 else tuple(values)
        return iterator_get_next_from_handle
    resource = _resource(node)
    if len(node.out_dtypes) == 1:
        def iterator_get_next():
            return resource.next(node)[0]
    else:
        def iterator_get_next():
            return tuple(resource.next(node))
    return iterator_get_next
