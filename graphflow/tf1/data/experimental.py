"""`tf.data.experimental`: the TF1-era transformations applied with `dataset.apply(...)`.

    dataset.apply(tf.data.experimental.shuffle_and_repeat(10000, seed=1))
    dataset.apply(tf.data.experimental.map_and_batch(parse, 32, drop_remainder=True))
    dataset.apply(tf.data.experimental.unbatch())

Each is the composition TF documents it to be equivalent to (`shuffle(...).repeat(...)`,
`map(...).batch(...)`, `flat_map(from_tensor_slices)`), so it has exactly those semantics.
"""

from graphflow.tf1.data.dataset import AUTOTUNE, Dataset


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """`shuffle(buffer_size, seed).repeat(count)`, reshuffled each epoch."""
    return lambda dataset: dataset.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """`map(map_func, num_parallel_calls).batch(batch_size, drop_remainder)`."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("map_and_batch: give num_parallel_batches or num_parallel_calls, not both")
    calls = num_parallel_calls
    if num_parallel_batches is not None:
        calls = num_parallel_batches * int(batch_size)
    return lambda dataset: dataset.map(map_func, num_parallel_calls=calls).batch(
        batch_size, drop_remainder=drop_remainder)


def unbatch():
    """Split each element's components along their first dimension into separate elements."""
    def apply(dataset):
        def slices(*components):
            return Dataset.from_tensor_slices(components[0] if len(components) == 1
                                              else components)
        if isinstance(dataset.element_spec, dict):
            return dataset.flat_map(Dataset.from_tensor_slices)
        return dataset.flat_map(slices)
    return apply


__all__ = ["AUTOTUNE", "shuffle_and_repeat", "map_and_batch", "unbatch"]
