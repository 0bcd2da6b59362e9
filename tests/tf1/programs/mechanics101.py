"""TF1's "Mechanics 101" MNIST program as the tutorial wrote it (name scopes, summaries, Saver,
in_top_k evaluation), on synthetic digits."""
import math, os, tempfile, time
import numpy as np
import graphflow as tf

NUM_CLASSES = 10
IMAGE_PIXELS = 784
FLAGS = None

def inference(images, hidden1_units, hidden2_units):
  with tf.name_scope('hidden1'):
    weights = tf.Variable(tf.truncated_normal([IMAGE_PIXELS, hidden1_units], stddev=1.0 / math.sqrt(float(IMAGE_PIXELS))), name='weights')
    biases = tf.Variable(tf.zeros([hidden1_units]), name='biases')
    hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
  with tf.name_scope('hidden2'):
    weights = tf.Variable(tf.truncated_normal([hidden1_units, hidden2_units], stddev=1.0 / math.sqrt(float(hidden1_units))), name='weights')
    biases = tf.Variable(tf.zeros([hidden2_units]), name='biases')
    hidden2 = tf.nn.relu(tf.matmul(hidden1, weights) + biases)
  with tf.name_scope('softmax_linear'):
    weights = tf.Variable(tf.truncated_normal([hidden2_units, NUM_CLASSES], stddev=1.0 / math.sqrt(float(hidden2_units))), name='weights')
    biases = tf.Variable(tf.zeros([NUM_CLASSES]), name='biases')
    logits = tf.matmul(hidden2, weights) + biases
  return logits

def loss(logits, labels):
  labels = tf.to_int64(labels)
  return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)

def training(loss, learning_rate):
  tf.summary.scalar('loss', loss)
  optimizer = tf.train.GradientDescentOptimizer(learning_rate)
  global_step = tf.Variable(0, name='global_step', trainable=False)
  train_op = optimizer.minimize(loss, global_step=global_step)
  return train_op

def evaluation(logits, labels):
  correct = tf.nn.in_top_k(logits, labels, 1)
  return tf.reduce_sum(tf.cast(correct, tf.int32))

rng = np.random.RandomState(0)
centers = rng.randn(10, IMAGE_PIXELS)
def fake(n):
    y = rng.randint(0, 10, n)
    return (centers[y] + 0.5 * rng.randn(n, IMAGE_PIXELS)).astype(np.float32), y.astype(np.int32)
train_x, train_y = fake(2000); test_x, test_y = fake(500)

log_dir = tempfile.mkdtemp()
with tf.Graph().as_default():
    images_placeholder = tf.placeholder(tf.float32, shape=(100, IMAGE_PIXELS))
    labels_placeholder = tf.placeholder(tf.int32, shape=(100))
    logits = inference(images_placeholder, 128, 32)
    loss_ = loss(logits, labels_placeholder)
    train_op = training(loss_, 0.01)
    eval_correct = evaluation(logits, labels_placeholder)
    summary = tf.summary.merge_all()
    init = tf.global_variables_initializer()
    saver = tf.train.Saver()
    sess = tf.Session()
    summary_writer = tf.summary.FileWriter(log_dir, sess.graph)
    sess.run(init)
    for step in range(400):
        start_time = time.time()
        i = (step * 100) % 2000
        feed_dict = {images_placeholder: train_x[i:i+100], labels_placeholder: train_y[i:i+100]}
        _, loss_value = sess.run([train_op, loss_], feed_dict=feed_dict)
        duration = time.time() - start_time
        if step % 100 == 0:
            print('Step %d: loss = %.2f (%.3f sec)' % (step, loss_value, duration))
            summary_str = sess.run(summary, feed_dict=feed_dict)
            summary_writer.add_summary(summary_str, step)
            summary_writer.flush()
        if (step + 1) % 200 == 0:
            checkpoint_file = os.path.join(log_dir, 'model.ckpt')
            saver.save(sess, checkpoint_file, global_step=step)
            true_count = 0
            for j in range(5):
                true_count += sess.run(eval_correct, feed_dict={images_placeholder: test_x[j*100:(j+1)*100], labels_placeholder: test_y[j*100:(j+1)*100]})
            print('  Num examples: %d  Num correct: %d  Precision @ 1: %0.04f' % (500, true_count, float(true_count) / 500))
assert float(true_count) / 500 > 0.9, true_count
