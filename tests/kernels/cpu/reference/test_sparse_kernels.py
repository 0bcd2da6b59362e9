"""The SparseTensorDenseMatMul kernel adds each row's entries in their order, as TF1's loop: its
rounds (every row's p-th entry at once) give the same bits as numpy's sequential add.at, for
rows of few entries and, past the rounds' limit, for long rows; and it names bad indices."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu.reference import sparse_kernels


@pytest.mark.parametrize("nnz, rows", [(20000, 3000), (3000, 2), (1, 4), (0, 3)])
def test_rounds_add_in_the_entries_order(nnz, rows):
    rng = np.random.RandomState(nnz)
    row_ids = rng.randint(0, rows, nnz)
    inner = rng.randint(0, 50, nnz)
    scale = rng.randn(nnz).astype(np.float32)
    dense = rng.randn(50, 6).astype(np.float32)
    want = np.zeros((rows, 6), np.float32)
    np.add.at(want, row_ids, dense[inner] * scale[:, None])
    got = np.zeros((rows, 6), np.float32)
    sparse_kernels._add_rows_in_order(got, row_ids, inner, dense, scale)
    np.testing.assert_array_equal(got, want)


def test_out_of_range_index_is_named():
    indices = tf.placeholder(tf.int64, [None, 2])
    product = tf.sparse_tensor_dense_matmul(tf.SparseTensor(indices, [1.0, 2.0], [2, 3]),
                                            np.ones((3, 2), np.float32))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"a_indices\[1\] = \[1, 3\]: its column 3 is out of bounds"):
            sess.run(product, {indices: [[0, 0], [1, 3]]})
