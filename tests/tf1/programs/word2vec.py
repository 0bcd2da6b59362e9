"""TF1's word2vec_basic as the tutorial wrote it (skip-gram batches, embedding_lookup, nce_loss,
normalized embeddings and cosine similarity), on a tiny corpus."""
import collections, math, random
import numpy as np
import graphflow as tf
tf.set_random_seed(1234)
random.seed(0)
words = ("the quick brown fox jumps over the lazy dog and the dog sleeps while the fox runs " * 50).split()
vocabulary_size = 20
count = [['UNK', -1]]
count.extend(collections.Counter(words).most_common(vocabulary_size - 1))
dictionary = {w: i for i, (w, _) in enumerate(count)}
data = [dictionary.get(w, 0) for w in words]
data_index = 0
def generate_batch(batch_size, num_skips, skip_window):
  global data_index
  batch = np.ndarray(shape=(batch_size), dtype=np.int32)
  labels = np.ndarray(shape=(batch_size, 1), dtype=np.int32)
  span = 2 * skip_window + 1
  buffer = collections.deque(maxlen=span)
  for _ in range(span):
    buffer.append(data[data_index]); data_index = (data_index + 1) % len(data)
  for i in range(batch_size // num_skips):
    context_words = [w for w in range(span) if w != skip_window]
    words_to_use = random.sample(context_words, num_skips)
    for j, context_word in enumerate(words_to_use):
      batch[i * num_skips + j] = buffer[skip_window]
      labels[i * num_skips + j, 0] = buffer[context_word]
    buffer.append(data[data_index]); data_index = (data_index + 1) % len(data)
  return batch, labels
batch_size, embedding_size, skip_window, num_skips, num_sampled = 32, 16, 1, 2, 8
valid_examples = np.array([1, 2, 3])
graph = tf.Graph()
with graph.as_default():
  train_inputs = tf.placeholder(tf.int32, shape=[batch_size])
  train_labels = tf.placeholder(tf.int32, shape=[batch_size, 1])
  valid_dataset = tf.constant(valid_examples, dtype=tf.int32)
  with tf.device('/cpu:0'):
    embeddings = tf.Variable(tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0))
    embed = tf.nn.embedding_lookup(embeddings, train_inputs)
    nce_weights = tf.Variable(tf.truncated_normal([vocabulary_size, embedding_size], stddev=1.0 / math.sqrt(embedding_size)))
    nce_biases = tf.Variable(tf.zeros([vocabulary_size]))
  loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=train_labels, inputs=embed, num_sampled=num_sampled, num_classes=vocabulary_size))
  optimizer = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
  norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
  normalized_embeddings = embeddings / norm
  valid_embeddings = tf.nn.embedding_lookup(normalized_embeddings, valid_dataset)
  similarity = tf.matmul(valid_embeddings, normalized_embeddings, transpose_b=True)
  init = tf.global_variables_initializer()
with tf.Session(graph=graph) as session:
  init.run()
  average_loss = 0
  averages = []
  for step in range(1001):
    batch_inputs, batch_labels = generate_batch(batch_size, num_skips, skip_window)
    _, loss_val = session.run([optimizer, loss], feed_dict={train_inputs: batch_inputs, train_labels: batch_labels})
    average_loss += loss_val
    if step % 500 == 0:
      if step > 0: average_loss /= 500
      print('Average loss at step ', step, ': ', average_loss); averages.append(average_loss)
      average_loss = 0
  sim = similarity.eval()
  final_embeddings = normalized_embeddings.eval()
  print(sim.shape, final_embeddings.shape)
  assert averages[-1] < averages[0] / 2 and sim.shape == (3, 20), averages
