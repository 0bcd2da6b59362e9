"""graphflow's CUDA kernels on a GPU, against the card and against cuBLAS / PyTorch in the same run.

    python benchmarks/bench_cuda.py [--quick] [--json out.json]

1. A fused elementwise chain over 64M float32 values (two inputs, one output): the kernel the
   fusion pass + code generator produce, in GB/s against the card's theoretical bandwidth and
   against a device-to-device copy (the practical ceiling), plus the same chain as a session step.
2. SGEMM 4096 x 4096 x 4096 (float32): graphflow's tiled kernel against cuBLAS (through PyTorch or
   CuPy, whichever is installed; TF32 tensor cores off so both do true float32 math), in TFLOP/s.
3. One Adam training step of a 784-512-512-10 ReLU MLP (batch 256, softmax cross-entropy), loss
   fetched every step: a graphflow session on the GPU against PyTorch eager on the same GPU.
4. The same for bench_vs_tf1's CIFAR-shaped CNN (batch 64), against PyTorch eager on cuDNN.
Kernel times use CUDA events (median of many launches after a warmup); step times use wall clock.
Without a usable CUDA device the script exits with status 2 and says why.
"""

import argparse
import json
import statistics
import sys

import numpy as np
from common import median_ms as _wall_ms

import graphflow as tf
from graphflow.kernels import cuda
from graphflow.ops import elementwise_program


def _events_ms(fn, repeat, warmup=3):
    import pycuda.driver as drv
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start, end = drv.Event(), drv.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.time_till(end))
    return statistics.median(times)



def theoretical_bandwidth(rt):
    """GB/s from the memory clock and bus width, or None when the driver does not report them."""
    import pycuda.driver as drv
    try:
        clock_khz = rt.device.get_attribute(drv.device_attribute.MEMORY_CLOCK_RATE)
        bus_bits = rt.device.get_attribute(drv.device_attribute.GLOBAL_MEMORY_BUS_WIDTH)
    except (AttributeError, drv.Error):
        return None
    return 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9


# ------------------------------------------------------------------ 1. fused elementwise chain
def bench_elementwise(rt, n, repeat):
    from graphflow.kernels.cuda.elementwise import kernel_for
    # relu(x * 1.5 + z) * sigmoid(z) - x * 0.5; operands 0, 1 are x, z, then instruction k is 2 + k
    f32 = "float32"
    program = {"version": elementwise_program.VERSION, "inputs": [f32, f32],
               "instructions": [["Const", [], {"value": 1.5}, f32],   # 2
                                ["Mul", [0, 2], {}, f32],              # 3: x * 1.5
                                ["Add", [3, 1], {}, f32],              # 4: + z
                                ["Relu", [4], {}, f32],                # 5
                                ["Sigmoid", [1], {}, f32],             # 6
                                ["Mul", [5, 6], {}, f32],              # 7
                                ["Const", [], {"value": 0.5}, f32],   # 8
                                ["Mul", [0, 8], {}, f32],              # 9: x * 0.5
                                ["Sub", [7, 9], {}, f32]],             # 10
               "output": 10}
    rng = np.random.default_rng(0)
    with rt.active():
        x = rt.to_device(rng.standard_normal(n, dtype=np.float32))
        z = rt.to_device(rng.standard_normal(n, dtype=np.float32))
        kernel = kernel_for(program)
        out = kernel(x, z)[0]
        xs, zs = rt.to_host(x)[:1000], rt.to_host(z)[:1000]
        want = np.maximum(xs * 1.5 + zs, 0) / (1 + np.exp(-zs)) - 0.5 * xs
        np.testing.assert_allclose(rt.to_host(out)[:1000], want, rtol=1e-5, atol=1e-6)
        del out
        fused_ms = _events_ms(lambda: kernel(x, z), repeat)
        copy_ms = _events_ms(lambda: rt.copy(x), repeat)
    moved = 3 * n * 4  # two reads and one write
    peak = theoretical_bandwidth(rt)
    result = {"elements": n, "fused_ms": fused_ms, "fused_GBps": moved / fused_ms / 1e6,
              "copy_GBps": 2 * n * 4 / copy_ms / 1e6, "theoretical_GBps": peak}
    if peak:
        result["fraction_of_peak"] = result["fused_GBps"] / peak
    result["fraction_of_copy"] = result["fused_GBps"] / result["copy_GBps"]

    # the same chain as a session step on device-resident variables (plus a sum to fetch)
    tf.reset_default_graph()
    vx = tf.Variable(np.zeros(n, np.float32))
    vz = tf.Variable(np.zeros(n, np.float32))
    chain = tf.nn.relu(vx * 1.5 + vz) * tf.sigmoid(vz) - vx * 0.5
    total = tf.reduce_sum(chain)
    with tf.Session(device="/gpu:0") as sess:
        sess.run(tf.global_variables_initializer())
        meta = type("Meta", (), {"plan": None})()
        sess.run(total, run_metadata=meta)
        result["session_step_ms"] = _wall_ms(lambda: sess.run(total), max(5, repeat // 4))
        result["session_gpu_ops"] = sorted({op.type for op, d in meta.plan.placement.device_of.items()
                                            if d.startswith("/gpu")})
    return result


# ------------------------------------------------------------------ 2. SGEMM vs cuBLAS
def _cublas_sgemm(n, repeat):
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        torch.matmul(a, b)
        torch.cuda.synchronize()
        times = []
        for _ in range(repeat):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            torch.matmul(a, b)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        return "cuBLAS (PyTorch, TF32 off)", statistics.median(times)
    except ImportError:
        pass
    try:
        import cupy
        a = cupy.random.standard_normal((n, n), dtype=cupy.float32)
        b = cupy.random.standard_normal((n, n), dtype=cupy.float32)
        cupy.matmul(a, b)
        times = []
        for _ in range(repeat):
            s, e = cupy.cuda.Event(), cupy.cuda.Event()
            s.record()
            cupy.matmul(a, b)
            e.record()
            e.synchronize()
            times.append(cupy.cuda.get_elapsed_time(s, e))
        return "cuBLAS (CuPy)", statistics.median(times)
    except ImportError:
        return None, None


def bench_sgemm(rt, n, repeat):
    from graphflow.kernels.cuda.matmul import gemm
    rng = np.random.default_rng(1)
    a_host = rng.standard_normal((n, n), dtype=np.float32)
    b_host = rng.standard_normal((n, n), dtype=np.float32)
    with rt.active():
        a, b = rt.to_device(a_host), rt.to_device(b_host)
        c = rt.empty((n, n), np.float32)

        def run():
            gemm(rt, np.float32, int(a.gpudata), int(b.gpudata), int(c.gpudata), n, n, n)
        run()
        rows = rng.integers(0, n, 8)
        np.testing.assert_allclose(rt.to_host(c)[rows], a_host[rows] @ b_host, rtol=2e-3, atol=2e-2)
        ours_ms = _events_ms(run, repeat)
    flops = 2 * n ** 3
    result = {"n": n, "graphflow_ms": ours_ms, "graphflow_TFLOPs": flops / ours_ms / 1e9}
    name, ref_ms = _cublas_sgemm(n, repeat)
    if name is None:
        result["cublas"] = "not measured: install torch or cupy for the cuBLAS comparison"
    else:
        result.update({"reference": name, "cublas_ms": ref_ms,
                       "cublas_TFLOPs": flops / ref_ms / 1e9, "fraction_of_cublas": ref_ms / ours_ms})
    return result


# ------------------------------------------------------------------ 3. MLP Adam step vs PyTorch
def _mlp_data(batch):
    rng = np.random.default_rng(2)
    return rng.standard_normal((batch, 784)).astype(np.float32), rng.integers(0, 10, batch)


def _train_step_comparison(loss, train, x, y, xs, ys, torch_model, torch_xs, repeat):
    """One training step (host batch in, loss out) of a graphflow session on /gpu:0 and of
    `torch_model()` (a PyTorch module, built only when torch is installed) with Adam in PyTorch
    eager, TF32 off: {graphflow_ms, graphflow_fallbacks, pytorch_eager_ms, graphflow_vs_pytorch}
    (or a note in "pytorch" when torch is missing)."""
    result = {"batch": len(xs)}
    with tf.Session(device="/gpu:0") as sess:
        sess.run(tf.global_variables_initializer())
        step = sess.make_callable([loss, train], [x, y])
        meta = type("Meta", (), {"plan": None})()
        sess.run([loss, train], {x: xs, y: ys}, run_metadata=meta)
        result["graphflow_ms"] = _wall_ms(lambda: step(xs, ys), repeat)
        result["graphflow_fallbacks"] = [op.type for op, _, _ in meta.plan.placement.fallbacks]
        result["graphflow_loss_after"] = float(step(xs, ys)[0])
    try:
        import torch
    except ImportError:
        result["pytorch"] = "not measured: install torch for the PyTorch eager comparison"
        return result
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    model = torch_model().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = torch.nn.CrossEntropyLoss()

    def torch_step(x_host, y_host):  # host batch in, loss out, like the graphflow step
        xb, yb = torch.from_numpy(x_host).to(dev), torch.from_numpy(y_host).to(dev)
        opt.zero_grad(set_to_none=True)
        out = lossf(model(xb), yb)
        out.backward()
        opt.step()
        return out.item()
    result["pytorch_eager_ms"] = _wall_ms(lambda: torch_step(torch_xs, ys), repeat)
    result["graphflow_vs_pytorch"] = result["pytorch_eager_ms"] / result["graphflow_ms"]
    return result


def _classifier_loss(logits, y):
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return loss, tf.train.AdamOptimizer(1e-3).minimize(loss)


def bench_mlp(batch, repeat):
    xs, ys = _mlp_data(batch)
    tf.reset_default_graph()
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.dense(x, 512, activation=tf.nn.relu)
    h = tf.layers.dense(h, 512, activation=tf.nn.relu)
    loss, train = _classifier_loss(tf.layers.dense(h, 10), y)

    def torch_model():
        import torch
        nn = torch.nn
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                             nn.Linear(512, 10))
    return _train_step_comparison(loss, train, x, y, xs, ys, torch_model, xs, repeat)


def bench_cnn(batch, repeat):
    """The CIFAR-shaped CNN of bench_vs_tf1 (32x32x3, conv3x3x32 x2, pool, conv3x3x64, pool, dense 512,
    dense 10, Adam): one training step, host batch in, loss out."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, 32, 32, 3)).astype(np.float32)
    ys = rng.integers(0, 10, batch).astype(np.int64)
    tf.reset_default_graph()
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 32, 32, 3])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.conv2d(x, 32, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.conv2d(h, 32, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dense(tf.layers.flatten(h), 512, activation=tf.nn.relu)
    loss, train = _classifier_loss(tf.layers.dense(h, 10), y)

    def torch_model():
        import torch
        nn = torch.nn
        return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1),
                             nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 8 * 8, 512), nn.ReLU(),
                             nn.Linear(512, 10))
    xs_nchw = np.ascontiguousarray(xs.transpose(0, 3, 1, 2))  # PyTorch's layout, cuDNN's kernels
    return _train_step_comparison(loss, train, x, y, xs, ys, torch_model, xs_nchw, repeat)


def _step_line(title, r):
    line = f"{title}: graphflow {r['graphflow_ms']:.3f} ms"
    if "pytorch_eager_ms" in r:
        line += (f", PyTorch eager {r['pytorch_eager_ms']:.3f} ms "
                 f"(graphflow {r['graphflow_vs_pytorch']:.2f}x PyTorch's speed)")
    else:
        line += f"; {r['pytorch']}"
    if r["graphflow_fallbacks"]:
        line += f"; ops on the CPU: {sorted(set(r['graphflow_fallbacks']))}"
    return line


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    ok, reason = cuda.availability()
    if not ok:
        print(f"bench_cuda: no CUDA device available: {reason}", file=sys.stderr)
        return 2
    rt = cuda.runtime()
    n_elem = (1 << 22) if args.quick else (64 << 20)
    repeat = 10 if args.quick else 50
    results = {"device": rt.description}
    print(f"device: {rt.description}")
    results["elementwise"] = r = bench_elementwise(rt, n_elem, repeat)
    peak = f"{r['theoretical_GBps']:.0f} GB/s" if r["theoretical_GBps"] else "not reported"
    print(f"fused elementwise chain, {n_elem / 2**20:.0f}M float32: {r['fused_ms']:.3f} ms, "
          f"{r['fused_GBps']:.0f} GB/s (card peak {peak}, device copy {r['copy_GBps']:.0f} GB/s, "
          f"{100 * r['fraction_of_copy']:.0f}% of copy); session step with sum "
          f"{r['session_step_ms']:.3f} ms")
    n = 1024 if args.quick else 4096
    results["sgemm"] = r = bench_sgemm(rt, n, repeat)
    line = f"SGEMM {n}^3: graphflow {r['graphflow_TFLOPs']:.2f} TFLOP/s ({r['graphflow_ms']:.3f} ms)"
    if "cublas_ms" in r:
        line += (f", {r['reference']} {r['cublas_TFLOPs']:.2f} TFLOP/s: "
                 f"{100 * r['fraction_of_cublas']:.0f}% of cuBLAS")
    else:
        line += f"; {r['cublas']}"
    print(line)
    results["mlp_adam"] = r = bench_mlp(256, repeat)
    print(_step_line("784-512-512-10 Adam step, batch 256", r))
    results["cifar_cnn"] = r = bench_cnn(64, repeat)
    print(_step_line("CIFAR-shaped CNN Adam step, batch 64 (PyTorch on cuDNN)", r))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
