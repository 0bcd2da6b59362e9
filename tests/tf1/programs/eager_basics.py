"""TF 1.x's "Eager execution basics" tutorial as it was written: tensors print their values,
numpy interoperates, Python control flow works on tensors, datasets iterate with `for`."""
import numpy as np
import graphflow as tf

tf.enable_eager_execution()
tfe = tf.contrib.eager
assert tf.executing_eagerly()

print(tf.add(1, 2))
print(tf.add([1, 2], [3, 4]))
print(tf.square(5))
print(tf.reduce_sum([1, 2, 3]))
print(tf.encode_base64("hello world") if hasattr(tf, "encode_base64") else "")
print(tf.square(2) + tf.square(3))
x = tf.matmul([[1]], [[2, 3]])
print(x.shape, x.dtype)
assert x.shape.as_list() == [1, 2] and x.dtype == tf.int32

ndarray = np.ones([3, 3])
tensor = tf.multiply(ndarray, 42)
print(tensor)
print(np.add(tensor, 1))
print(tensor.numpy())
assert (np.add(tensor, 1) == 43).all() and tensor.numpy().dtype == np.float64

def fizzbuzz(max_num):
  counter = tf.constant(0)
  max_num = tf.convert_to_tensor(max_num)
  out = []
  for num in range(1, max_num.numpy() + 1):
    num = tf.constant(num)
    if int(num % 3) == 0 and int(num % 5) == 0:
      out.append('FizzBuzz')
    elif int(num % 3) == 0:
      out.append('Fizz')
    elif int(num % 5) == 0:
      out.append('Buzz')
    else:
      out.append(str(num.numpy()))
    counter += 1
  return out, counter

words, count = fizzbuzz(15)
print(' '.join(words))
assert words[-1] == 'FizzBuzz' and words[2] == 'Fizz' and int(count) == 15

ds_tensors = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5, 6])
ds_tensors = ds_tensors.map(tf.square).shuffle(2, seed=1).batch(2)
seen = []
for x in ds_tensors:
  print(x)
  seen.extend(x.numpy().tolist())
assert sorted(seen) == [1, 4, 9, 16, 25, 36]

print("tfe.num_gpus():", tfe.num_gpus())
w = tfe.Variable([[1.0]])
with tf.GradientTape() as tape:
  loss = w * w
grad = tape.gradient(loss, w)
print(grad)
assert grad.numpy().tolist() == [[2.0]]
