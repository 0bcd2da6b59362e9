"""The CTC program tests/ops/test_ctc_ops.py runs in graphflow and TensorFlow compares: written
against the TF1 API (`tf`), it imports neither, so TensorFlow's interpreter runs the same source."""

def ctc_program(tf, np):
    """CTC loss, gradient and decoders on fixed logits [5 frames, 3 entries, 4 classes]."""
    logits = (np.sin(np.arange(60, dtype=np.float32) * 1.7) * 2.5).reshape(5, 3, 4)
    indices = np.array([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [2, 0], [2, 1]], np.int64)
    values = np.array([1, 1, 2, 0, 2, 2, 2], np.int32)
    lengths = np.array([5, 4, 3], np.int32)
    out = {}
    variants = {"std": {}, "collapse": {"preprocess_collapse_repeated": True},
                "nomerge": {"ctc_merge_repeated": False}}
    for key, kwargs in variants.items():
        with tf.Graph().as_default():
            x = tf.constant(logits)
            labels = tf.SparseTensor(indices, values, [3, 3])
            loss = tf.nn.ctc_loss(labels, x, lengths, **kwargs)
            grad = tf.gradients(loss, x)[0]
            with tf.Session() as sess:
                out[key + "_loss"], out[key + "_grad"] = sess.run([loss, grad])
    with tf.Graph().as_default():
        # entry 1's two labels outlast its one frame: ignored (zero loss and gradient)
        x = tf.constant(logits)
        labels = tf.SparseTensor(indices, values, [3, 3])
        loss = tf.nn.ctc_loss(labels, tf.transpose(x, [1, 0, 2]), [5, 1, 3], time_major=False,
                              ignore_longer_outputs_than_inputs=True)
        grad = tf.gradients(loss, x)[0]
        (greedy,), neg_sum = tf.nn.ctc_greedy_decoder(x, lengths)
        beams, log_p = tf.nn.ctc_beam_search_decoder(x, lengths, beam_width=4, top_paths=2)
        beams_raw, _ = tf.nn.ctc_beam_search_decoder(x, lengths, beam_width=4, top_paths=2,
                                                     merge_repeated=False)
        with tf.Session() as sess:
            r = sess.run([loss, grad, tf.sparse_tensor_to_dense(greedy, -1), neg_sum,
                          [tf.sparse_tensor_to_dense(b, -1) for b in beams], log_p,
                          [tf.sparse_tensor_to_dense(b, -1) for b in beams_raw]])
    out["ignore_loss"], out["ignore_grad"], out["greedy"], out["neg_sum"] = r[:4]
    out["beam0"], out["beam1"] = r[4]
    out["log_p"] = r[5]
    out["beam_raw0"], out["beam_raw1"] = r[6]
    return out
