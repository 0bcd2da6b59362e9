"""numpy kernels of the candidate samplers (LogUniformCandidateSampler, UniformCandidateSampler):
draws from the op's per-session generator, TF's expected-count formulas."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.random_kernels import generator


def _log_uniform(range_max):
    log_range = np.log(range_max + 1.0)

    def draw(gen, count):
        values = np.floor(np.exp(gen.random(count) * log_range)).astype(np.int64) - 1
        return values % range_max

    def probability(classes):
        classes = classes.astype(np.float64)
        return np.log((classes + 2.0) / (classes + 1.0)) / log_range
    return draw, probability


def _uniform(range_max):
    def draw(gen, count):
        return gen.integers(0, range_max, size=count, dtype=np.int64)

    def probability(classes):
        return np.full(classes.shape, 1.0 / range_max)
    return draw, probability


def _expected_count(p, num_sampled, num_tries):
    if num_tries == num_sampled:
        return p * num_sampled
    return -np.expm1(num_tries * np.log1p(-p))


def _sampler_kernel(distribution):
    def build(node):
        gen = generator(node)
        num_sampled, unique = node.attrs["num_sampled"], node.attrs["unique"]
        draw, probability = distribution(node.attrs["range_max"])

        def candidate_sampler(true_classes):
            if unique:
                chosen, seen, num_tries = [], set(), 0
                while len(chosen) < num_sampled:
                    for value in draw(gen, num_sampled - len(chosen)).tolist():
                        num_tries += 1
                        if value not in seen:
                            seen.add(value)
                            chosen.append(value)
                            if len(chosen) == num_sampled:
                                break
                sampled = np.asarray(chosen, dtype=np.int64)
            else:
                sampled, num_tries = draw(gen, num_sampled), num_sampled
            true_count = _expected_count(probability(true_classes), num_sampled, num_tries)
            sampled_count = _expected_count(probability(sampled), num_sampled, num_tries)
            return (sampled, true_count.astype(np.float32), sampled_count.astype(np.float32))
        return candidate_sampler
    return build


cpu_kernel("LogUniformCandidateSampler")(_sampler_kernel(_log_uniform))
cpu_kernel("UniformCandidateSampler")(_sampler_kernel(_uniform))
