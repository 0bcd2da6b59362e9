"""A TF1 input pipeline as written: feedable iterators (from_string_handle) switching training and\nvalidation data, an initializable iterator fed numpy arrays, MonitoredTrainingSession with\nStopAtStepHook and checkpoints, restore into a plain Session, streaming accuracy."""
import numpy as np, tempfile
import graphflow as tf
rng = np.random.RandomState(0)
x_train = rng.randn(500, 4).astype(np.float32); y_train = (x_train.sum(1) > 0).astype(np.int64)
x_val = rng.randn(100, 4).astype(np.float32); y_val = (x_val.sum(1) > 0).astype(np.int64)
features_placeholder = tf.placeholder(x_train.dtype, [None, 4])
labels_placeholder = tf.placeholder(y_train.dtype, [None])
train_ds = tf.data.Dataset.from_tensor_slices((features_placeholder, labels_placeholder)).shuffle(100).batch(32).repeat()
val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(50)
handle = tf.placeholder(tf.string, shape=[])
iterator = tf.data.Iterator.from_string_handle(handle, train_ds.output_types, train_ds.output_shapes)
features, labels = iterator.get_next()
train_iterator = train_ds.make_initializable_iterator()
val_iterator = val_ds.make_initializable_iterator()
logits = tf.layers.dense(tf.layers.dense(features, 16, tf.nn.relu), 2)
loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
acc, acc_update = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
ckpt_dir = tempfile.mkdtemp()
hooks = [tf.train.StopAtStepHook(last_step=300)]
with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir, hooks=hooks, save_checkpoint_steps=100) as sess:
    train_handle = sess.run(train_iterator.string_handle())
    val_handle = sess.run(val_iterator.string_handle())
    sess.run(train_iterator.initializer, {features_placeholder: x_train, labels_placeholder: y_train})
    while not sess.should_stop():
        sess.run(train_op, {handle: train_handle})
with tf.Session() as sess:
    tf.train.Saver().restore(sess, tf.train.latest_checkpoint(ckpt_dir))
    sess.run(tf.local_variables_initializer())
    sess.run(val_iterator.initializer)
    val_handle = sess.run(val_iterator.string_handle())
    while True:
        try:
            sess.run(acc_update, {handle: val_handle})
        except tf.errors.OutOfRangeError:
            break
    print("val accuracy", sess.run(acc), "step", sess.run(global_step))
    assert sess.run(acc) > 0.9 and sess.run(global_step) == 300
