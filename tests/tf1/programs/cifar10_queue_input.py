"""The CIFAR-10 tutorial's input pipeline and training loop, as cifar10_input.py / cifar10_train.py
wrote them: records of a binary file read by tf.FixedLengthRecordReader from a
string_input_producer's queue, decoded with tf.decode_raw, transposed from depth-major, randomly
cropped and flipped, batched by tf.train.shuffle_batch on several threads started by
tf.train.start_queue_runners; a small convnet trains a few steps; then the coordinator stops and
joins the threads. The data are synthetic: class k's images are brighter in channel k % 3."""

import os
import tempfile

import numpy as np

import graphflow as tf

IMAGE_SIZE = 24
NUM_CLASSES = 3
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = 300


def write_data(data_dir):
    rng = np.random.RandomState(0)
    filenames = []
    for i in range(1, 3):
        labels = rng.randint(0, NUM_CLASSES, size=NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN // 2)
        images = rng.randint(0, 120, size=(len(labels), 3, 32, 32))
        for k, label in enumerate(labels):
            images[k, label % 3] += 120
        records = np.concatenate([labels[:, None], images.reshape(len(labels), -1)], axis=1)
        name = os.path.join(data_dir, 'data_batch_%d.bin' % i)
        records.astype(np.uint8).tofile(name)
        filenames.append(name)
    return filenames


def read_cifar10(filename_queue):
    class CIFAR10Record(object):
        pass
    result = CIFAR10Record()
    label_bytes = 1
    result.height = 32
    result.width = 32
    result.depth = 3
    image_bytes = result.height * result.width * result.depth
    record_bytes = label_bytes + image_bytes
    reader = tf.FixedLengthRecordReader(record_bytes=record_bytes)
    result.key, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    result.label = tf.cast(tf.strided_slice(record_bytes, [0], [label_bytes]), tf.int32)
    depth_major = tf.reshape(
        tf.strided_slice(record_bytes, [label_bytes], [label_bytes + image_bytes]),
        [result.depth, result.height, result.width])
    result.uint8image = tf.transpose(depth_major, [1, 2, 0])
    return result


def _generate_image_and_label_batch(image, label, min_queue_examples, batch_size, shuffle):
    num_preprocess_threads = 4
    if shuffle:
        images, label_batch = tf.train.shuffle_batch(
            [image, label],
            batch_size=batch_size,
            num_threads=num_preprocess_threads,
            capacity=min_queue_examples + 3 * batch_size,
            min_after_dequeue=min_queue_examples)
    else:
        images, label_batch = tf.train.batch(
            [image, label],
            batch_size=batch_size,
            num_threads=num_preprocess_threads,
            capacity=min_queue_examples + 3 * batch_size)
    tf.summary.image('images', images)
    return images, tf.reshape(label_batch, [batch_size])


def distorted_inputs(data_dir, batch_size):
    filenames = [os.path.join(data_dir, 'data_batch_%d.bin' % i) for i in range(1, 3)]
    for f in filenames:
        if not tf.gfile.Exists(f):
            raise ValueError('Failed to find file: ' + f)
    filename_queue = tf.train.string_input_producer(filenames)
    with tf.name_scope('data_augmentation'):
        read_input = read_cifar10(filename_queue)
        reshaped_image = tf.cast(read_input.uint8image, tf.float32)
        height = IMAGE_SIZE
        width = IMAGE_SIZE
        distorted_image = tf.random_crop(reshaped_image, [height, width, 3])
        distorted_image = tf.image.random_flip_left_right(distorted_image)
        distorted_image = tf.image.random_brightness(distorted_image, max_delta=63)
        distorted_image = tf.image.random_contrast(distorted_image, lower=0.2, upper=1.8)
        float_image = tf.image.per_image_standardization(distorted_image)
        float_image.set_shape([height, width, 3])
        read_input.label.set_shape([1])
        min_fraction_of_examples_in_queue = 0.4
        min_queue_examples = int(NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN *
                                 min_fraction_of_examples_in_queue)
    return _generate_image_and_label_batch(float_image, read_input.label,
                                           min_queue_examples, batch_size, shuffle=True)


def inference(images):
    with tf.variable_scope('conv1'):
        kernel = tf.get_variable('weights', [5, 5, 3, 16],
                                 initializer=tf.truncated_normal_initializer(stddev=5e-2))
        conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding='SAME')
        biases = tf.get_variable('biases', [16], initializer=tf.constant_initializer(0.0))
        conv1 = tf.nn.relu(tf.nn.bias_add(conv, biases))
    pool1 = tf.nn.max_pool(conv1, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding='SAME')
    with tf.variable_scope('softmax_linear'):
        reshape = tf.reshape(pool1, [images.get_shape().as_list()[0], -1])
        dim = reshape.get_shape()[1]
        weights = tf.get_variable('weights', [dim, NUM_CLASSES],
                                  initializer=tf.truncated_normal_initializer(stddev=1 / dim))
        biases = tf.get_variable('biases', [NUM_CLASSES], initializer=tf.constant_initializer(0.0))
        softmax_linear = tf.add(tf.matmul(reshape, weights), biases)
    return softmax_linear


def loss(logits, labels):
    labels = tf.cast(labels, tf.int64)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return tf.reduce_mean(cross_entropy, name='cross_entropy')


def main():
    data_dir = tempfile.mkdtemp()
    write_data(data_dir)
    tf.set_random_seed(1)
    images, labels = distorted_inputs(data_dir, batch_size=32)
    assert images.get_shape().as_list() == [32, IMAGE_SIZE, IMAGE_SIZE, 3]
    logits = inference(images)
    total_loss = loss(logits, labels)
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(total_loss)
    correct = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.cast(labels, tf.int64)),
                                     tf.float32))

    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    losses, accuracies = [], []
    try:
        for step in range(60):
            if coord.should_stop():
                break
            _, loss_value, accuracy = sess.run([train_op, total_loss, correct])
            assert not np.isnan(loss_value), 'Model diverged with loss = NaN'
            losses.append(loss_value)
            accuracies.append(accuracy)
            if step % 10 == 0:
                print('step %d, loss = %.3f, accuracy %.2f' % (step, loss_value, accuracy))
    finally:
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    sess.close()
    assert len(threads) >= 4 + 1
    assert np.mean(losses[-10:]) < np.mean(losses[:10]), (losses[:10], losses[-10:])
    assert np.mean(accuracies[-10:]) > 0.6, accuracies[-10:]
    print('final loss %.3f, accuracy %.2f' % (np.mean(losses[-10:]), np.mean(accuracies[-10:])))


if __name__ == '__main__':
    main()
