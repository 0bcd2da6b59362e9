"""TF1 programs over SparseTensors, each `program(tf, np) -> {name: array}`, written against the
TF1 API so that the same source runs under graphflow and under TensorFlow
(`tests/tf_reference.run_in_tensorflow`). Fetched SparseTensors come back as three arrays
(`name.indices`, `name.values`, `name.shape`; strings as fixed-width bytes, which np.savez
keeps without pickling); gradients are made dense with
`tf.convert_to_tensor` (TensorFlow gives IndexedSlices for gathers). TensorFlow's numbers are
recorded in data/tf_sparse_reference.json (written by data/make_tf_sparse_reference.py)."""


def index_program(tf, np):
    """sparse_reorder, sparse_retain, sparse.from_dense, sparse_merge, sparse.cross and
    sparse_placeholder feeds."""
    def flat(results):
        out = {}
        for name, value in results.items():
            if hasattr(value, "dense_shape"):
                out[name + ".indices"] = value.indices
                values = np.asarray(value.values)
                out[name + ".values"] = values.astype("S") if values.dtype == object else values
                out[name + ".shape"] = value.dense_shape
            else:
                out[name] = value
        return out

    values = tf.constant([1.5, -2.0, 3.0, 4.0], tf.float64)
    unsorted = tf.SparseTensor([[2, 1], [0, 3], [1, 0], [0, 1]], values, [3, 4])
    reordered = tf.sparse_reorder(unsorted)
    retained = tf.sparse_retain(reordered, [True, False, True, True])
    ph = tf.sparse_placeholder(tf.float32, shape=[None, 5], name="batch")
    free = tf.sparse.placeholder(tf.int64)
    fetches = {
        "reorder": reordered,
        "reorder_alias": tf.sparse.reorder(unsorted),
        "retain": retained,
        "retain_alias": tf.sparse.retain(unsorted, [False, True, True, False]),
        "from_dense": tf.sparse.from_dense(tf.constant([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]])),
        "from_dense_int": tf.sparse.from_dense(tf.constant([[[0, 7], [5, 0]]])),
        "grad_reorder": tf.gradients(
            tf.reduce_sum(reordered.values * tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)),
            values)[0],
        "grad_retain": tf.convert_to_tensor(tf.gradients(
            tf.reduce_sum(retained.values * retained.values), values)[0]),
        "fed_sum": tf.sparse_reduce_sum(ph, axis=1),
        "fed": ph,
        "fed_dense": tf.sparse_tensor_to_dense(free),
    }
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], tf.constant([3, 1, 2, 0], tf.int64),
                          [2, 2])
    more_ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]],
                               tf.constant([1, 0, 1, 1], tf.int64), [2, 2])
    weights = tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)
    by_id = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], weights, [2, 2])
    merged = tf.sparse_merge(ids, by_id, 5)
    fetches["merge"] = merged
    fetches["merge_sorted"] = tf.sparse.merge(ids, by_id, 5, already_sorted=True)
    fetches["merge_two"] = tf.sparse_merge([ids, more_ids], by_id, [5, 2])
    fetches["merge_dense"] = tf.sparse_tensor_to_dense(merged)
    words = tf.SparseTensor([[0, 0], [1, 0], [1, 1], [3, 0]], ["a", "b", "c", "z"], [4, 2])
    numbers = tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]],
                              tf.constant([4, 5, 6, 7], tf.int64), [4, 2])
    fetches["cross"] = tf.sparse.cross([words, numbers, tf.constant([["f"], ["g"], ["h"], ["i"]])])
    fetches["cross_swapped"] = tf.sparse.cross([numbers, words])
    fetches["cross_one"] = tf.sparse.cross([words])
    fetches["cross_dense_ints"] = tf.sparse.cross([tf.constant([[1, 2], [3, 4]], tf.int64),
                                                   tf.constant([["x"], ["y"]])], separator="-")
    fetches["grad_merge"] = tf.convert_to_tensor(tf.gradients(
        tf.reduce_sum(merged.values * tf.constant([1.0, -1.0, 2.0, 0.5], tf.float64)),
        weights)[0])
    feed = {ph: tf.SparseTensorValue([[0, 1], [0, 4], [2, 2]], [1.0, 2.0, 3.0], [3, 5]),
            free: (np.array([[0, 0], [1, 2]]), np.array([4, 9]), np.array([2, 3]))}
    with tf.Session() as sess:
        out = flat(sess.run(fetches, feed))
        out["fed_again"] = sess.run(tf.sparse.to_dense(ph), {
            ph: (np.array([[1, 3]]), np.array([5.0], np.float32), np.array([2, 5]))})
        return out


def math_program(tf, np):
    """sparse_tensor_dense_matmul (adjoints, gradients), sparse reductions, sparse_add,
    sparse_maximum/minimum, sparse_softmax."""
    def flat(results):
        out = {}
        for name, value in results.items():
            if hasattr(value, "dense_shape"):
                out[name + ".indices"] = value.indices
                out[name + ".values"] = value.values
                out[name + ".shape"] = value.dense_shape
            else:
                out[name] = value
        return out

    a_values = tf.constant([1.0, -2.0, 3.0, 0.5, 4.0], tf.float64)
    a = tf.SparseTensor([[0, 0], [0, 2], [1, 1], [2, 0], [2, 3]], a_values, [3, 4])
    b = tf.constant(np.arange(8, dtype=np.float64).reshape(4, 2) / 4 - 0.5)
    bt = tf.constant(np.arange(6, dtype=np.float64).reshape(3, 2) / 3 - 0.25)
    out = {}
    for name, (dense, adj_a, adj_b) in {
            "mm": (b, False, False), "mm_adj_b": (tf.transpose(b), False, True),
            "mm_adj_a": (bt, True, False), "mm_adj_ab": (tf.transpose(bt), True, True)}.items():
        product = tf.sparse_tensor_dense_matmul(a, dense, adjoint_a=adj_a, adjoint_b=adj_b)
        loss = tf.reduce_sum(product * product)
        grads = tf.gradients(loss, [a_values, dense])
        out[name] = product
        out[name + "_grad_values"] = tf.convert_to_tensor(grads[0])
        out[name + "_grad_b"] = tf.convert_to_tensor(grads[1])
    out["matmul_alias"] = tf.sparse.matmul(a, b)
    out["sparse_dense_matmul_alias"] = tf.sparse.sparse_dense_matmul(a, b)
    c_values = tf.constant([[1.0, -2.0, 3.0, 0.5, 4.0, -1.0]], tf.float64)[0]
    c = tf.SparseTensor([[0, 0, 1], [0, 2, 0], [1, 1, 1], [1, 1, 2], [2, 0, 0], [2, 2, 2]],
                        c_values, [3, 3, 3])
    out["sum_all"] = tf.sparse_reduce_sum(c)
    out["sum_all_keep"] = tf.sparse_reduce_sum(c, keepdims=True)
    out["sum_0"] = tf.sparse_reduce_sum(c, axis=0)
    out["sum_1_keep"] = tf.sparse_reduce_sum(c, axis=1, keepdims=True)
    out["sum_02"] = tf.sparse_reduce_sum(c, axis=[0, -1])
    out["sum_old_names"] = tf.sparse_reduce_sum(c, reduction_axes=2, keep_dims=True)
    out["sum_alias"] = tf.sparse.reduce_sum(c, 2)
    out["grad_sum_1"] = tf.convert_to_tensor(tf.gradients(
        tf.reduce_sum(tf.sparse_reduce_sum(c, axis=1) ** 2), c_values)[0])
    out["sum_sparse_1"] = tf.sparse_reduce_sum_sparse(c, axis=1)
    out["sum_sparse_2_keep"] = tf.sparse.reduce_sum_sparse(c, axis=2, keepdims=True)
    out["max_all"] = tf.sparse_reduce_max(c)
    out["max_2"] = tf.sparse_reduce_max(c, axis=2)
    out["max_01_keep"] = tf.sparse.reduce_max(c, axis=[0, 1], keepdims=True)
    out["max_sparse_0"] = tf.sparse_reduce_max_sparse(c, axis=0)
    out["max_sparse_alias"] = tf.sparse.reduce_max_sparse(c, axis=1)
    d_values = tf.constant([2.0, 1.0, -3.0, 0.25], tf.float64)
    d = tf.SparseTensor([[0, 0], [0, 1], [1, 1], [2, 3]], d_values, [3, 4])
    for name, threshold in {"add": None, "add_t05": 0.5, "add_t2": 2.0}.items():
        total = tf.sparse_add(a, d, threshold=threshold)
        out[name] = total
        out[name + "_grads"] = tf.concat([tf.convert_to_tensor(g) for g in tf.gradients(
            tf.reduce_sum(total.values * tf.cast(tf.range(tf.size(total.values)) + 1,
                                                 tf.float64)), [a_values, d_values])], 0)
    out["add_thresh_old"] = tf.sparse_add(a, d, thresh=1.5)
    out["add_alias"] = tf.sparse.add(d, a)
    dense = tf.constant(np.arange(12, dtype=np.float64).reshape(3, 4))
    out["add_dense"] = tf.sparse_add(a, dense)
    out["add_dense_first"] = tf.sparse_add(dense, d)
    out["add_dense_grad"] = tf.convert_to_tensor(tf.gradients(
        tf.reduce_sum(tf.sparse_add(a, dense) ** 2), a_values)[0])
    out["maximum"] = tf.sparse_maximum(a, d)
    out["minimum"] = tf.sparse.minimum(a, d)
    out["maximum_alias"] = tf.sparse.maximum(d, a)
    soft = tf.sparse_softmax(c)
    out["softmax"] = soft
    out["softmax_2d"] = tf.sparse.softmax(a)
    out["softmax_grad"] = tf.convert_to_tensor(tf.gradients(
        tf.reduce_sum(soft.values * tf.constant([1.0, 2.0, 3.0, -1.0, 0.5, 2.0], tf.float64)),
        c_values)[0])
    with tf.Session() as sess:
        return flat(sess.run(out))


def reshape_program(tf, np):
    """sparse_reshape, sparse_transpose, sparse_concat, sparse_slice, sparse_split,
    sparse_fill_empty_rows, sparse_to_indicator, sparse.expand_dims, sparse.eye,
    sparse.reset_shape."""
    def flat(results):
        out = {}
        for name, value in results.items():
            if hasattr(value, "dense_shape"):
                out[name + ".indices"] = value.indices
                out[name + ".values"] = value.values
                out[name + ".shape"] = value.dense_shape
            else:
                out[name] = value
        return out

    a_values = tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)
    a = tf.SparseTensor([[0, 0], [0, 2], [2, 1], [3, 3]], a_values, [4, 4])
    b = tf.SparseTensor([[0, 1], [1, 0], [2, 2]], tf.constant([5.0, 6.0, 7.0], tf.float64),
                        [3, 3])
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([3, 1, 3], tf.int64), [3, 2])
    out = {"reshape": tf.sparse_reshape(a, [-1, 8]),
           "reshape_3d": tf.sparse.reshape(a, [2, 2, 4]),
           "transpose": tf.sparse_transpose(a),
           "transpose_3d": tf.sparse.transpose(tf.sparse_reshape(a, [2, 2, 4]), [2, 0, 1]),
           "concat_1": tf.sparse_concat(1, [a, a]),
           "concat_0_expand": tf.sparse_concat(0, [a, b], expand_nonconcat_dim=True),
           "concat_1_expand": tf.sparse.concat(1, [a, b], expand_nonconcat_dim=True),
           "slice": tf.sparse_slice(a, [1, 1], [3, 5]),
           "slice_alias": tf.sparse.slice(a, [0, 0], [2, 3]),
           "to_indicator": tf.sparse_to_indicator(ids, 4),
           "indicator_alias": tf.sparse.to_indicator(ids, 5),
           "expand_0": tf.sparse.expand_dims(a, 0),
           "expand_last": tf.sparse.expand_dims(a),
           "eye": tf.sparse.eye(3, 4, dtype=tf.float64),
           "eye_square": tf.sparse.eye(2),
           "reset_shape": tf.sparse.reset_shape(a),
           "reset_shape_larger": tf.sparse.reset_shape(a, [5, 7])}
    for i, part in enumerate(tf.sparse_split(sp_input=a, num_split=3, axis=1)):
        out["split_%d" % i] = part
    for i, part in enumerate(tf.sparse.split(sp_input=a, num_split=2, axis=0)):
        out["split_alias_%d" % i] = part
    filled, empty = tf.sparse_fill_empty_rows(a, -1.0)
    out["fill"], out["fill_empty"] = filled, empty
    unsorted = tf.SparseTensor([[2, 1], [0, 0], [2, 0]], tf.constant([1.0, 2.0, 3.0]), [4, 2])
    out["fill_unsorted"], out["fill_unsorted_empty"] = tf.sparse.fill_empty_rows(unsorted, 9.0)
    weights = tf.constant(np.arange(1.0, 9.0))
    losses = {"slice": tf.sparse_slice(a, [1, 1], [3, 5]).values,
              "transpose": tf.sparse_transpose(a).values,
              "fill": filled.values}
    for name, v in losses.items():
        w = weights[:tf.size(v)]
        out["grad_" + name] = tf.convert_to_tensor(tf.gradients(tf.reduce_sum(v * v * w),
                                                                a_values)[0])
    with tf.Session() as sess:
        return flat(sess.run(out))


def segment_program(tf, np):
    """sparse_segment_sum / mean / sqrt_n (with and without num_segments) and gradients."""
    data = tf.constant(np.arange(10, dtype=np.float64).reshape(5, 2) / 2 - 1)
    indices = tf.constant([0, 3, 1, 4, 4])
    segments = tf.constant([0, 0, 2, 2, 3])
    out = {}
    for name, fn in {"sum": tf.sparse_segment_sum, "mean": tf.sparse_segment_mean,
                     "sqrt_n": tf.sparse_segment_sqrt_n}.items():
        plain = fn(data, indices, segments)
        counted = fn(data, indices, segments, num_segments=6)
        out[name] = plain
        out[name + "_num"] = counted
        out[name + "_grad"] = tf.convert_to_tensor(tf.gradients(
            tf.reduce_sum(plain * plain) + tf.reduce_sum(counted), data)[0])
    out["alias_sum"] = tf.sparse.segment_sum(data, indices, segments)
    out["alias_mean"] = tf.sparse.segment_mean(data, indices, segments)
    out["alias_sqrt_n"] = tf.sparse.segment_sqrt_n(data, indices, segments)
    with tf.Session() as sess:
        return sess.run(out)


def embedding_program(tf, np):
    """tf.nn.embedding_lookup_sparse and tf.nn.safe_embedding_lookup_sparse, every combiner,
    with and without weights, partitioned params, default_id, ids of rank 3, and the gradient
    reaching the params."""
    params = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2) * 0.5 - 1)
    where = [[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]]
    ids = tf.SparseTensor(where, tf.constant([1, 4, 2, 1, -1, 5], tf.int64), [4, 3])
    weights = tf.SparseTensor(where, [2.0, 0.5, 1.0, -1.0, 3.0, 2.0], [4, 3])
    valid = [[0, 0], [0, 1], [1, 0], [3, 0], [3, 2]]
    ids2 = tf.SparseTensor(valid, tf.constant([1, 4, 2, 1, 5], tf.int64), [4, 3])
    weights2 = tf.SparseTensor(valid, [2.0, 0.5, 1.0, 1.5, 2.0], [4, 3])
    ids3 = tf.SparseTensor([[0, 0, 0], [0, 1, 0], [1, 0, 1], [1, 1, 0]],
                           tf.constant([1, 4, -2, 3], tf.int64), [2, 2, 2])
    out = {}
    for c in ["sum", "mean", "sqrtn"]:
        out["plain_" + c] = tf.nn.embedding_lookup_sparse(params, ids2, None, combiner=c)
        out["weighted_" + c] = tf.nn.embedding_lookup_sparse(params, ids2, weights2, combiner=c)
        out["split_" + c] = tf.nn.embedding_lookup_sparse([params[:3], params[3:]], ids2,
                                                          weights2, combiner=c,
                                                          partition_strategy="div")
        out["safe_" + c] = tf.nn.safe_embedding_lookup_sparse(params, ids, weights, combiner=c)
        out["safe_default_" + c] = tf.nn.safe_embedding_lookup_sparse(
            [params[:3], params[3:]], ids, None, combiner=c, default_id=2)
        out["safe_rank3_" + c] = tf.nn.safe_embedding_lookup_sparse(params, ids3, None,
                                                                    combiner=c)
        loss = tf.reduce_sum(out["weighted_" + c] ** 2) + tf.reduce_sum(out["safe_" + c] ** 2)
        out["grad_" + c] = tf.convert_to_tensor(tf.gradients(loss, params)[0])
    out["default_combiner"] = tf.nn.embedding_lookup_sparse(params, ids2, None)
    out["max_norm"] = tf.nn.embedding_lookup_sparse(params, ids2, None, combiner="sum",
                                                    max_norm=1.0)
    with tf.Session() as sess:
        return sess.run(out)


PROGRAMS = {"index": index_program, "math": math_program, "reshape": reshape_program,
            "segment": segment_program, "embedding": embedding_program}
