"""`tf.contrib.factorization.KMeans`: TF1's k-means clustering graph.

    kmeans = KMeans(inputs=X, num_clusters=25, distance_metric="cosine", use_mini_batch=True)
    (all_scores, cluster_idx, scores, cluster_centers_initialized, cluster_centers_var,
     init_op, train_op) = kmeans.training_graph()

`init_op` chooses the initial centers from the fed inputs (RANDOM_INIT: rows drawn uniformly;
KMEANS_PLUS_PLUS_INIT: k-means++ with `kmeans_plus_plus_num_retries` extra candidates per center,
keeping the one that lowers the total distance most; or given centers, a tensor or array, or a
function f(inputs, num_clusters)) and sets `cluster_centers_initialized`; running it again keeps
the centers. `train_op` runs one Lloyd iteration (the centers become the means of their points)
or, with `use_mini_batch`, one mini-batch step: each center moves towards the mean of its batch
points with rate 1 / (points it has seen), as in TF. With "cosine" distance the inputs (and the
full-batch centers) are L2-normalized and distances are 1 - cosine similarity.

Everything is composed of ordinary ops (matmul, segment sums, multinomial sampling for k-means++,
unrolled over the Python int `num_clusters`), so no new op type is needed. Differences from TF:
the centers variable has the static shape [num_clusters, features] (so the feature dimension must
be known and initialization needs at least num_clusters rows in one run, where TF could fill the
centers over several runs), KMC2_INIT and mini_batch_steps_per_iteration > 1 are not provided.
"""

import math

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph, name_scope
from graphflow.ops import array_ops, logging_ops, math_ops, nn_ops, random_ops, shape_ops, state_ops
from graphflow.ops.core_ops import Tensor, convert_to_tensor, group

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
KMC2_INIT = "kmc2"
CLUSTERS_VAR_NAME = "clusters"


def _squared_distances(points, centers):
    """[n, k] squared euclidean distances, as TF computes them (|x|^2 - 2 x.c + |c|^2)."""
    return (math_ops.reduce_sum(math_ops.square(points), 1, keepdims=True)
            - 2.0 * math_ops.matmul(points, centers, transpose_b=True)
            + array_ops.transpose(math_ops.reduce_sum(math_ops.square(centers), 1,
                                                      keepdims=True)))


class KMeans:
    """TF1's KMeans: builds the clustering graph for `inputs` (a [n, features] tensor or a list
    of them) and `num_clusters` clusters."""

    def __init__(self, inputs, num_clusters, initial_clusters=RANDOM_INIT,
                 distance_metric=SQUARED_EUCLIDEAN_DISTANCE, use_mini_batch=False,
                 mini_batch_steps_per_iteration=1, random_seed=0,
                 kmeans_plus_plus_num_retries=2, kmc2_chain_length=200):
        if isinstance(initial_clusters, str) and initial_clusters not in (
                RANDOM_INIT, KMEANS_PLUS_PLUS_INIT, KMC2_INIT):
            raise ValueError(f"Unsupported initialization algorithm '{initial_clusters}'")
        if isinstance(initial_clusters, str) and initial_clusters == KMC2_INIT:
            raise NotImplementedError("KMeans: KMC2_INIT is not available in graphflow; use "
                                      "RANDOM_INIT or KMEANS_PLUS_PLUS_INIT")
        if distance_metric not in (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE):
            raise ValueError(f"Unsupported distance metric '{distance_metric}'")
        if int(mini_batch_steps_per_iteration) != 1:
            raise NotImplementedError("KMeans: mini_batch_steps_per_iteration > 1 is not "
                                      "available in graphflow")
        self._inputs = [convert_to_tensor(i) for i in
                        (inputs if isinstance(inputs, (list, tuple)) else [inputs])]
        for inp in self._inputs:
            if inp.shape.ndims != 2 or inp.shape.dims[1] is None:
                raise ValueError(f"KMeans: inputs must be [num_points, features] with a known "
                                 f"feature dimension, got {inp.name} of shape {inp.shape}")
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._use_mini_batch = use_mini_batch
        self._seed = random_seed
        self._retries = int(kmeans_plus_plus_num_retries)
        self._kmc2_chain_length = kmc2_chain_length

    # ------------------------------------------------------------------ distances
    def _cosine(self):
        return self._distance_metric == COSINE_DISTANCE

    def _clusters_l2_normalized(self):
        return self._cosine() and not self._use_mini_batch

    def _infer_graph(self, inputs, clusters):
        """(all_scores, scores, cluster_idx) lists, one entry per input."""
        all_scores, scores, indices = [], [], []
        for inp in inputs:
            if self._cosine():
                distance = 1.0 - math_ops.matmul(inp, clusters, transpose_b=True)
            else:
                distance = _squared_distances(inp, clusters)
            all_scores.append(distance)
            scores.append(math_ops.maximum(math_ops.reduce_min(distance, 1), 0.0))
            indices.append(math_ops.argmin(distance, 1, output_type=dtypes.int64))
        return all_scores, scores, indices

    # ------------------------------------------------------------------ initialization
    def _random(self, data, k):
        n = math_ops.cast(shape_ops.shape(data)[0], dtypes.int64)
        picked = random_ops.random_uniform([k], 0, n, dtype=dtypes.int64, seed=self._seed)
        return array_ops.gather(data, picked)

    def _kmeans_plus_plus(self, data, k):
        """k-means++ unrolled over the k centers: each new center is the best (lowest total
        distance) of 1 + retries candidates drawn with probability proportional to the squared
        distance to the nearest chosen center."""
        n = shape_ops.shape(data)[0]
        first = random_ops.random_uniform([1], 0, math_ops.cast(n, dtypes.int64),
                                          dtype=dtypes.int64, seed=self._seed)
        centers = [array_ops.gather(data, first)]
        nearest = shape_ops.reshape(_squared_distances(data, centers[0]), [-1])
        retries = self._retries if self._retries >= 0 else 2 + int(math.log(max(k, 2)))
        for i in range(1, k):
            logits = math_ops.log(math_ops.maximum(nearest, 1e-30))
            candidates = random_ops.multinomial(shape_ops.reshape(logits, [1, -1]), 1 + retries,
                                                seed=None if self._seed is None
                                                else self._seed + i,
                                                output_dtype=dtypes.int64)[0]
            points = array_ops.gather(data, candidates)
            with_candidate = math_ops.minimum(shape_ops.expand_dims(nearest, 1),
                                              _squared_distances(data, points))
            best = math_ops.argmin(math_ops.reduce_sum(with_candidate, 0), 0)
            centers.append(array_ops.gather(points, shape_ops.reshape(best, [1])))
            nearest = array_ops.gather(array_ops.transpose(with_candidate), best)
        return shape_ops.concat(centers, 0)

    def _initial_centers(self, inputs, k, features):
        data = shape_ops.concat(inputs, 0) if len(inputs) > 1 else inputs[0]
        if isinstance(self._initial_clusters, str) and self._initial_clusters == RANDOM_INIT:
            centers = self._random(data, k)
        elif isinstance(self._initial_clusters, str):  # KMEANS_PLUS_PLUS_INIT
            first = self._inputs[0]
            centers = self._kmeans_plus_plus(nn_ops.l2_normalize(first, 1) if self._cosine()
                                             else first, k)
        elif callable(self._initial_clusters):
            centers = convert_to_tensor(self._initial_clusters(self._inputs, k))
        else:
            centers = self._given
        centers = math_ops.cast(centers, data.dtype)
        enough = logging_ops.Assert(
            math_ops.greater_equal(shape_ops.shape(data)[0], k),
            [f"KMeans: initialization needs at least {k} input rows in one run, got",
             shape_ops.shape(data)[0]])
        with get_default_graph().control_dependencies([enough]):
            centers = shape_ops.reshape(centers, [k, features])
        return nn_ops.l2_normalize(centers, 1) if self._cosine() else centers

    # ------------------------------------------------------------------ training
    def _full_batch_training_op(self, inputs, k, cluster_idx, centers_var):
        sums = math_ops.add_n([array_ops.unsorted_segment_sum(inp, idx, k)
                               for inp, idx in zip(inputs, cluster_idx)])
        counts = math_ops.add_n([array_ops.unsorted_segment_sum(
            shape_ops.ones_like(idx, dtype=inp.dtype), idx, k)
            for inp, idx in zip(inputs, cluster_idx)])
        new_centers = sums / (shape_ops.expand_dims(counts, 1) + 1e-6)
        if self._clusters_l2_normalized():
            new_centers = nn_ops.l2_normalize(new_centers, 1)
        return state_ops.assign(centers_var, new_centers)

    def _mini_batch_training_op(self, inputs, k, cluster_idx, centers, centers_var,
                                total_counts):
        data = shape_ops.concat(inputs, 0) if len(inputs) > 1 else inputs[0]
        idx = shape_ops.concat(cluster_idx, 0) if len(inputs) > 1 else cluster_idx[0]
        count_updates = array_ops.unsorted_segment_sum(
            shape_ops.ones_like(idx, dtype=dtypes.int64), idx, k)
        batch_counts = shape_ops.expand_dims(math_ops.cast(count_updates, data.dtype), 1)
        moved = array_ops.unsorted_segment_sum(data, idx, k) - batch_counts * centers
        # the counts are read before their update (TF's graph leaves the two unordered, so
        # TF's result varies from run to run; with one inter-op thread it is this one)
        rate = 1.0 / math_ops.cast(total_counts + count_updates, data.dtype)
        update = moved * shape_ops.expand_dims(rate, 1)
        return group(state_ops.assign_add(total_counts, count_updates),
                     state_ops.assign_add(centers_var, update))

    def training_graph(self):
        """(all_scores, cluster_idx, scores, cluster_centers_initialized, cluster_centers_var,
        init_op, training_op); the first three are lists with one entry per input."""
        features = self._inputs[0].shape.dims[1]
        if isinstance(self._initial_clusters, str) or callable(self._initial_clusters):
            k = int(self._num_clusters)
        else:
            given = self._initial_clusters
            given = convert_to_tensor(np.asarray(given) if not isinstance(given, Tensor)
                                      else given)
            if given.shape.ndims != 2 or given.shape.dims[0] is None:
                raise ValueError(f"KMeans: initial_clusters must be [num_clusters, features] "
                                 f"with a known num_clusters, got shape {given.shape}")
            self._given, k = given, given.shape.dims[0]
        dtype = self._inputs[0].dtype
        centers_var = state_ops.Variable(np.zeros((k, features), dtype.as_numpy_dtype),
                                         name=CLUSTERS_VAR_NAME, dtype=dtype)
        initialized = state_ops.Variable(False, dtype=dtypes.bool_, name="initialized")
        total_counts = state_ops.Variable(np.ones([k], np.int64), name="Variable") \
            if self._use_mini_batch else None
        with name_scope(None, "kmeans_init"):
            chosen = self._initial_centers(self._inputs, k, features)
            keep = math_ops.cast(initialized, dtype)
            centers = keep * centers_var + (1.0 - keep) * chosen
            assigned = state_ops.assign(centers_var, centers)
            with get_default_graph().control_dependencies([assigned]):
                init_op = group(state_ops.assign(initialized, True), name="init_op")
        inputs = self._inputs
        centers = centers_var
        if self._cosine():
            inputs = [nn_ops.l2_normalize(inp, 1) for inp in inputs]
            if not self._clusters_l2_normalized():
                centers = nn_ops.l2_normalize(centers_var, 1)
        all_scores, scores, cluster_idx = self._infer_graph(inputs, centers)
        if self._use_mini_batch:
            training_op = self._mini_batch_training_op(inputs, k, cluster_idx, centers_var,
                                                       centers_var, total_counts)
        else:
            training_op = self._full_batch_training_op(inputs, k, cluster_idx, centers_var)
        return (all_scores, cluster_idx, scores, initialized, centers_var, init_op,
                training_op)


__all__ = ["KMeans", "SQUARED_EUCLIDEAN_DISTANCE", "COSINE_DISTANCE", "RANDOM_INIT",
           "KMEANS_PLUS_PLUS_INIT", "KMC2_INIT", "CLUSTERS_VAR_NAME"]
