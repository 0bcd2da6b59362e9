"""Cases for Einsum: matmul, batched matmul with a broadcast ellipsis, transposes, reductions,
outer products, three operands, implicit output; references are numpy's einsum with explicit
equations (the kernel uses it too, so these check the equation handling and the shape rule,
while tests/ops/test_einsum_ops.py compares with TensorFlow)."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand


def _case(equation, *shapes, name=None, reference_equation=None):
    arrays = [rand(*s, seed=k) for k, s in enumerate(shapes)]
    ref_eq = reference_equation or equation
    return OpCase("Einsum", lambda *xs: tf.einsum(equation, *xs), arrays,
                  lambda *xs: np.einsum(ref_eq, *xs), name=name or f"Einsum[{equation}]")


CASES = [
    _case("ij,jk->ik", (2, 3), (3, 4)),
    _case("ij,jk", (2, 3), (3, 4), name="Einsum[implicit ij,jk]", reference_equation="ij,jk->ik"),
    _case("bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
    _case("...ij,...jk->...ik", (2, 1, 2, 3), (3, 3, 2), name="Einsum[broadcast ellipsis]"),
    _case("i...j,j->...i", (2, 3, 4), (4,), name="Einsum[middle ellipsis]"),
    _case("ij->ji", (2, 3)),
    _case("ijk->j", (2, 3, 2), name="Einsum[sum two axes]"),
    _case("i,j->ij", (3,), (2,)),
    _case("ij,ij->", (2, 3), (2, 3)),
    _case("ab,bc,cd->ad", (2, 3), (3, 2), (2, 2)),
    _case("bhqd,bhkd->bhqk", (1, 2, 3, 2), (1, 2, 2, 2), name="Einsum[attention scores]"),
    _case("ij,k->i", (2, 3), (2,), name="Einsum[operand summed away]"),
]
