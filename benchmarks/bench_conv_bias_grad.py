"""A convolution's filter and bias gradients as one Conv2DBackpropFilterBias (the fusion pass)
against Conv2DBackpropFilter followed by the bias gradient's Sum.

    python benchmarks/bench_conv_bias_grad.py               # kernels and both CNN steps
    python benchmarks/bench_conv_bias_grad.py --rounds 31 --steps cifar --no-kernels

1. Kernels on the layers of bench_vs_tf1's CNN rows (float32, NHWC, SAME, batch 64, the session's
   default threads): oneDNN's filter gradient then the Sum kernel over N, H, W (the unfused plan),
   the filter gradient with oneDNN's own diff-bias output (`dnnl_conv_grads.BIAS_BY_PRIMITIVE`), and with
   one BLAS ones @ dy per block of images right after the primitive (the default).
2. Training steps of bench_vs_tf1's small and CIFAR-shaped CNNs, one session planned with the
   gradient fusion and one without (`fusion.FUSE_CONV_GRADIENTS`), in one process, interleaved.

Times are medians of interleaved rounds, in milliseconds. Without the oneDNN library
(`onednn-cpu-gomp`, installed with graphflow on Linux x86-64) part 1 is skipped.
"""

import os
import sys

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_conv_fusion  # noqa: E402
import bench_conv_kernels  # noqa: E402

from graphflow.framework import config  # noqa: E402
from graphflow.kernels.cpu.onednn import dnnl_conv_grads
from graphflow.kernels.cpu.reference import math_kernels


def _by_primitive(flag, fn):
    def run():
        dnnl_conv_grads.BIAS_BY_PRIMITIVE = flag
        try:
            fn()
        finally:
            dnnl_conv_grads.BIAS_BY_PRIMITIVE = False
    return run


def _layer(x, g, geo, f_shape, threads):
    """(filter gradient then Sum, diff-bias primitive, BLAS per block) for one layer."""
    def unfused():
        dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f_shape, threads)
        math_kernels._sum_as_product(g, (0, 1, 2), False, np.float32)

    def fused():
        dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f_shape, threads, bias=True)
    return {"unfused": unfused, "primitive": _by_primitive(True, fused),
            "blas": _by_primitive(False, fused)}


def kernels(rounds):
    threads = config.default_intra_op_threads()
    threadpool_limits(limits=1, user_api="blas")  # BLAS on one thread, as inside a graphflow run
    print(f"kernels, {threads} threads (ms): filter gradient + Sum | diff-bias primitive | "
          "BLAS per block")
    rng = np.random.default_rng(0)
    for name, geo, x, f, g in bench_conv_kernels.layer_arrays(rng):
        t = bench_conv_fusion._medians(_layer(x, g, geo, f.shape, threads), rounds, 3)
        print(f"  {name:32s} {t['unfused']:7.3f} {t['primitive']:7.3f} {t['blas']:7.3f}")


def main(argv=None):
    bench_conv_fusion.main(argv, __doc__.splitlines()[0], kernels, "FUSE_CONV_GRADIENTS")


if __name__ == "__main__":
    main()
