"""Input feeders: in-memory arrays delivered batch by batch through placeholders.

TF1's `numpy_input_fn` fills a queue from background threads that `MonitoredSession` starts.
graphflow's `numpy_input_fn` uses no queue or thread: it builds placeholders and registers an
`ArrayFeeder` in the graph collection `INPUT_FEEDERS`; monitored sessions (and so the Estimator)
add the feeder's next batch to every run and end the loop with `OutOfRangeError` when its epochs
are used up. The batches are the ones TF1's single-threaded FIFO queue gives: the example stream of
all epochs cut into `batch_size` pieces (a smaller last piece), shuffled per epoch when asked.
"""

import numpy as np

from graphflow.framework.errors import OutOfRangeError

INPUT_FEEDERS = "__input_feeders"  # "__": graphflow's own, never written to a MetaGraphDef


class ArrayFeeder:
    """Feeds rows of `arrays` (a dict placeholder -> numpy array, all with the same first
    dimension) `batch_size` at a time for `num_epochs` epochs (None: forever)."""

    def __init__(self, arrays, batch_size, num_epochs, shuffle, seed=None):
        sizes = {len(a) for a in arrays.values()}
        if len(sizes) != 1:
            raise ValueError(f"all input arrays must have the same length, got lengths {sorted(sizes)}")
        self._arrays = arrays
        self._size = sizes.pop()
        if self._size == 0:
            raise ValueError("the input arrays are empty")
        self._batch_size = int(batch_size)
        if self._batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self._num_epochs = num_epochs
        self._shuffle = bool(shuffle)
        self._seed = seed
        self.reset()

    def reset(self):
        """Start again from the first epoch (a new session starts a new input pass)."""
        self._rng = np.random.default_rng(self._seed)
        self._epoch = 0
        self._order = np.zeros(0, dtype=np.int64)
        self._position = 0

    def _take(self, count):
        pieces = []
        while count > 0:
            if self._position == len(self._order):
                if self._num_epochs is not None and self._epoch >= self._num_epochs:
                    break
                self._epoch += 1
                self._order = (self._rng.permutation(self._size) if self._shuffle
                               else np.arange(self._size))
                self._position = 0
            piece = self._order[self._position:self._position + count]
            self._position += len(piece)
            count -= len(piece)
            pieces.append(piece)
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)

    def feed_dict(self):
        """The next batch as a feed dict; `OutOfRangeError` once the epochs are exhausted."""
        rows = self._take(self._batch_size)
        if len(rows) == 0:
            raise OutOfRangeError(None, None, "End of input: the numpy input's epochs are exhausted "
                                  f"({self._num_epochs} epoch(s) of {self._size} examples)")
        return {placeholder: array[rows] for placeholder, array in self._arrays.items()}


def graph_feeders(graph):
    return list(graph.get_collection(INPUT_FEEDERS))


def feeds_of(feeders):
    """The merged next-batch feeds of `feeders` (raises OutOfRangeError when one is done)."""
    feeds = {}
    for feeder in feeders:
        feeds.update(feeder.feed_dict())
    return feeds
