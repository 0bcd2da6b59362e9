"""Train an MLP and a small CNN on scikit-learn's 8x8 handwritten digits with graphflow.

    python examples/train_digits.py                 # both models, default epochs
    python examples/train_digits.py --model cnn --epochs 30 --out /tmp/digits
    python examples/train_digits.py --quick         # a few epochs (used by the tests)
    GRAPHFLOW_EXAMPLES_EPOCHS=1 python examples/train_digits.py ...  # default epochs (docs test)
    python examples/train_digits.py --logdir logs   # also TensorBoard summaries: tensorboard --logdir logs
    mpirun -np 2 python examples/train_digits.py --distributed   # data-parallel over MPI processes

The data ships with scikit-learn (no download). A fixed stratified split keeps 360 images as the
held-out test set, never used for training or model choice. Each model is a TF1-style graph built
with tf.layers / tf.nn, trained with Adam on mini-batches that a tf.data pipeline feeds (shuffled
every epoch, randomly shifted for the CNN, batched, prefetched on a background thread; tqdm shows
the running loss and accuracy), evaluated once on the test set, then saved with its weights to one
graph file and reloaded (no model code needed) to check that the reloaded graph gives the same
test accuracy.
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits
from tqdm import tqdm

import graphflow as tf
from graphflow import horovod as hvd

SEED = 0
NUM_CLASSES = 10
DEFAULT_EPOCHS = {"mlp": 40, "cnn": 20}
QUICK_EPOCHS = {"mlp": 10, "cnn": 4}
AUGMENT = {"mlp": False, "cnn": True}  # shifted copies help the convolutional model only
LEARNING_RATE = 2e-3
DECAY_STEPS = 500  # the learning rate halves every 500 steps (about 11 epochs)


def load_data():
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1], flattened to 64 floats."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, random_state=SEED,
                                                        stratify=y)
    return x_train, y_train, x_test, y_test


def shift(image, label):
    """Augmentation (a tf.data map function): move the 8x8 image by up to one pixel in each
    direction, zero fill: pad to 10x10 and cut an 8x8 window at a random offset."""
    padded = tf.pad(tf.reshape(image, [8, 8]), [[1, 1], [1, 1]])
    offset = tf.random_uniform([2], 0, 3, dtype=tf.int32, seed=SEED)
    return tf.reshape(tf.slice(padded, offset, [8, 8]), [64]), label


def input_pipeline(x_train, y_train, batch_size, epochs, augment):
    """tf.data: reshuffled every epoch, shifted (CNN), batched, prefetched in the background."""
    dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    dataset = dataset.shuffle(len(x_train), seed=SEED)
    if augment:
        dataset = dataset.map(shift)
    return dataset.batch(batch_size).repeat(epochs).prefetch(2)


def mlp(x, training):
    h = tf.layers.dense(x, 256, activation=tf.nn.relu)
    h = tf.layers.dropout(h, rate=0.2, training=training)
    h = tf.layers.dense(h, 128, activation=tf.nn.relu)
    return tf.layers.dense(h, NUM_CLASSES)


def cnn(x, training):
    images = tf.reshape(x, [-1, 8, 8, 1])
    h = tf.layers.conv2d(images, 32, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.conv2d(h, 32, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)                                   # 4x4x32
    h = tf.layers.conv2d(h, 64, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)                                   # 2x2x64
    h = tf.layers.flatten(h)
    h = tf.layers.dense(h, 128, activation=tf.nn.relu)
    h = tf.layers.dropout(h, rate=0.3, training=training)
    return tf.layers.dense(h, NUM_CLASSES)


MODELS = {"mlp": mlp, "cnn": cnn}


def build(model, data, batch_size, epochs, distributed=False):
    """The graph: inputs (a tf.data iterator's batches, or fed values), probabilities, loss,
    accuracy and the Adam training op."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(SEED)
        dataset = input_pipeline(data[0], data[1], batch_size, epochs, AUGMENT[model])
        images, batch_labels = dataset.make_one_shot_iterator().get_next()
        # the model reads the pipeline's batches unless x is fed (test set, the saved model)
        x = tf.placeholder_with_default(images, [None, 64], name="x")
        labels = tf.placeholder_with_default(batch_labels, [None], name="labels")
        training = tf.placeholder_with_default(False, [], name="training")
        logits = MODELS[model](x, training)
        probs = tf.nn.softmax(logits, name="probs")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                             logits=logits))
        correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
        step = tf.train.get_or_create_global_step()
        learning_rate = tf.train.exponential_decay(LEARNING_RATE, step, DECAY_STEPS, 0.5)
        optimizer = tf.train.AdamOptimizer(learning_rate)
        if distributed:  # gradients averaged over the processes, each on its shard of the batch
            optimizer = hvd.DistributedOptimizer(optimizer)
        train_op = optimizer.minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
        # every process starts from rank 0's initial weights (run after init)
        sync = hvd.broadcast_global_variables(0) if distributed else tf.no_op()
        tf.summary.scalar("loss", loss)
        tf.summary.scalar("accuracy", correct / tf.cast(tf.shape(labels)[0], tf.float32))
        for var in tf.trainable_variables():  # one histogram per layer's kernel and bias
            tf.summary.histogram(var.op.name.replace("/", "_"), var)
        summaries = tf.summary.merge_all()
    return graph, dict(x=x, labels=labels, training=training, probs=probs, loss=loss,
                       correct=correct, train_op=train_op, init=init, sync=sync,
                       summaries=summaries)


def accuracy(probs, y):
    return float(np.mean(np.argmax(probs, axis=1) == y))


def train_model(model, data, epochs, batch_size, out_dir, quiet=False, logdir=None,
                distributed=False):
    x_train, y_train, x_test, y_test = data
    if distributed:  # each process trains on its shard with an equal share of the global batch
        rank, size = hvd.rank(), hvd.size()
        x_train, y_train = x_train[rank::size], y_train[rank::size]
        data = (x_train, y_train, x_test, y_test)
        batch_size = max(1, batch_size // size)
        quiet, logdir = quiet or rank > 0, logdir if rank == 0 else None
    graph, t = build(model, data, batch_size, epochs, distributed)
    steps_per_epoch = int(np.ceil(len(x_train) / batch_size))
    start = time.perf_counter()
    with tf.Session(graph=graph) as sess:
        sess.run(t["init"])
        sess.run(t["sync"])
        step = sess.make_callable([t["train_op"], t["loss"], t["correct"], t["labels"]],
                                  [t["training"]])
        writer = tf.summary.FileWriter(os.path.join(logdir, model), graph) if logdir else None
        bar = tqdm(total=epochs * steps_per_epoch, desc=f"{model:>3}", unit="step",
                   disable=quiet, file=sys.stdout, mininterval=0.25)
        for epoch in range(epochs):
            seen = total_loss = total_correct = 0
            for _ in range(steps_per_epoch):
                _, loss, correct, batch_labels = step(True)
                seen += len(batch_labels)
                total_loss += float(loss) * len(batch_labels)
                total_correct += float(correct)
                bar.update(1)
                bar.set_postfix(epoch=epoch + 1, loss=f"{total_loss / seen:.4f}",
                                acc=f"{total_correct / seen:.4f}", refresh=False)
            if writer:  # loss, accuracy and weight histograms on 256 training images per epoch
                feed = {t["x"]: x_train[:256], t["labels"]: y_train[:256]}
                writer.add_summary(sess.run(t["summaries"], feed), global_step=epoch + 1)
        bar.close()
        if writer:
            writer.close()
        train_seconds = time.perf_counter() - start
        test_acc = accuracy(sess.run(t["probs"], {t["x"]: x_test}), y_test)
        path = os.path.join(out_dir, f"digits_{model}.gfz")
        if not distributed or hvd.rank() == 0:
            tf.save(path, inputs={"x": t["x"]}, outputs={"probs": t["probs"]}, session=sess)
    if distributed and hvd.rank() > 0:
        return test_acc, test_acc  # rank 0 saves and reports
    with tf.load(path) as loaded:
        reloaded_acc = accuracy(loaded.run({"x": x_test})["probs"], y_test)
    print(f"{model}: test accuracy {test_acc:.4f} ({len(y_test)} held-out images), "
          f"trained {epochs} epochs in {train_seconds:.1f}s")
    print(f"{model}: saved to {path}; reloaded test accuracy {reloaded_acc:.4f}")
    return test_acc, reloaded_acc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=None,
                        help=f"epochs per model (default {DEFAULT_EPOCHS}, quick {QUICK_EPOCHS})")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", default=None, help="directory for the saved graph files "
                        "(default: a new temporary directory)")
    parser.add_argument("--quick", action="store_true", help="a few epochs only (for tests)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--logdir", default=None, help="write TensorBoard summaries under "
                        "LOGDIR/mlp and LOGDIR/cnn (view: tensorboard --logdir LOGDIR)")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1: these matrices are tiny, and extra threads "
                        "only add synchronization, badly so on a busy machine)")
    parser.add_argument("--distributed", action="store_true", help="data-parallel training in the "
                        "processes mpirun starts (the global batch stays --batch-size)")
    args = parser.parse_args(argv)
    args.epochs = args.epochs or int(os.environ.get("GRAPHFLOW_EXAMPLES_EPOCHS") or 0) or None
    if args.distributed:
        hvd.init()
        if hvd.rank() > 0:
            args.quiet = True
            sys.stdout = open(os.devnull, "w")  # rank 0 reports
    out_dir = args.out or tempfile.mkdtemp(prefix="graphflow_digits_")
    os.makedirs(out_dir, exist_ok=True)
    data = load_data()
    print(f"digits: {len(data[0])} training and {len(data[2])} test images of 8x8 pixels")
    models = ["mlp", "cnn"] if args.model == "both" else [args.model]
    start = time.perf_counter()
    results = {}
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        for model in models:
            epochs = args.epochs or (QUICK_EPOCHS if args.quick else DEFAULT_EPOCHS)[model]
            results[model] = train_model(model, data, epochs, args.batch_size, out_dir, args.quiet,
                                         args.logdir, args.distributed)
    print(f"total time {time.perf_counter() - start:.1f}s")
    sample = os.path.join(out_dir, "test_images.npy")
    np.save(sample, data[2][:5])
    print(f"labels of {sample}: {data[3][:5].tolist()}; run a saved model without this code:\n"
          f"  graphflow run {os.path.join(out_dir, f'digits_{models[0]}.gfz')} --input x={sample}")
    return results


if __name__ == "__main__":
    main()
