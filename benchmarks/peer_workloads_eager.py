"""The workloads of `peer_workloads.py` in PyTorch (eager, `torch.nn` and `torch.optim`) and JAX
(`jax.jit` of the whole step: forward, `jax.grad` and the optimizer's update), same shapes, layers
and optimizers as the TF1-API versions. Tables `torch_builders` / `jax_builders`: key ->
`build(threads) -> step` (the long chain's entry takes the chain's length first).

PyTorch works in NCHW and JAX here in NHWC, each its own natural layout; a step returns only once
its results are computed (JAX: `block_until_ready`).
"""

import numpy as np
from peer_frameworks import jax_modules, torch_module

# the char-LSTM's vocabulary, hidden units, sequence length and batch (every framework's)
VOCAB, HIDDEN, SEQ, BATCH = 65, 128, 50, 32


def _torch_train(make, threads, lr=1e-3, opt="adam"):
    """A step of `make(torch, nn) -> (model, inputs, loss_fn)` with Adam (or SGD)."""
    torch = torch_module(threads)
    nn = torch.nn
    torch.manual_seed(0)
    model, inputs, loss_fn = make(torch, nn)
    optimizer = (torch.optim.Adam(model.parameters(), lr=lr) if opt == "adam"
                 else torch.optim.SGD(model.parameters(), lr=lr))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(*inputs))
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def torch_cs231n(threads):
    torch = torch_module(threads)
    x, y = torch.randn(64, 1000), torch.randn(64, 10)
    w1 = torch.randn(1000, 100, requires_grad=True)
    w2 = torch.randn(100, 10, requires_grad=True)

    def step():
        loss = ((torch.relu(x @ w1) @ w2 - y) ** 2).sum()
        loss.backward()
        with torch.no_grad():
            for w in (w1, w2):
                w -= 1e-6 * w.grad
                w.grad = None
        return loss.item()
    return step


def _labels(torch, n, classes=10):
    return torch.randint(0, classes, (n,))


def torch_mlp(threads):
    def make(torch, nn):
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        labels = _labels(torch, 256)
        return model, (torch.randn(256, 784),), lambda out: nn.functional.cross_entropy(out, labels)
    return _torch_train(make, threads)


def torch_mnist_cnn(threads):
    def make(torch, nn):
        model = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(14 * 14 * 16, 10))
        labels = _labels(torch, 64)
        return model, (torch.randn(64, 1, 28, 28),), lambda out: nn.functional.cross_entropy(out, labels)
    return _torch_train(make, threads)


def torch_cifar_cnn(threads):
    def make(torch, nn):
        model = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(8 * 8 * 64, 512), nn.ReLU(), nn.Linear(512, 10))
        labels = _labels(torch, 64)
        return model, (torch.randn(64, 3, 32, 32),), lambda out: nn.functional.cross_entropy(out, labels)
    return _torch_train(make, threads)


def torch_char_lstm(threads):
    def make(torch, nn):
        class CharLSTM(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(VOCAB, HIDDEN, batch_first=True)
                self.out = nn.Linear(HIDDEN, VOCAB)

            def forward(self, ids):
                hidden, _ = self.lstm(nn.functional.one_hot(ids, VOCAB).float())
                return self.out(hidden.reshape(-1, HIDDEN))

        ids = torch.randint(0, VOCAB, (BATCH, SEQ + 1))
        targets = ids[:, 1:].reshape(-1)
        return CharLSTM(), (ids[:, :-1],), lambda out: nn.functional.cross_entropy(out, targets)
    return _torch_train(make, threads, lr=0.002)


def torch_elementwise(size):
    def build(threads):
        torch = torch_module(threads)
        x = torch.randn(size)

        def step():
            with torch.no_grad():
                return torch.tanh(x * 2.0 + 1.0) * torch.sigmoid(x) - x * x
        return step
    return build


def torch_inference(batch):
    def build(threads):
        torch = torch_module(threads)
        nn = torch.nn
        model = nn.Sequential(
            nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(7 * 7 * 64, 1024), nn.ReLU(), nn.Linear(1024, 10), nn.Softmax(dim=1)).eval()
        x = torch.randn(batch, 1, 28, 28)

        def step():
            with torch.inference_mode():
                return model(x)
        return step
    return build


def torch_trivial(ops):
    def build(threads):
        torch = torch_module(threads)
        x = torch.ones(4)

        def step():
            with torch.no_grad():
                h = x
                for _ in range(ops):
                    h = h + 1.0
                return h
        return step
    return build


def torch_long_chain(links):
    def build(threads):
        torch = torch_module(threads)
        x0 = torch.randn(64)

        def step():
            x = x0.clone().requires_grad_(True)
            h = x
            for _ in range(links):
                h = torch.tanh(h * 1.01 + 0.01)
            loss = h.sum()
            loss.backward()
            return loss.item()
        return step
    return build


torch_builders = {
    "cs231n": torch_cs231n, "mlp": torch_mlp, "mnist_cnn": torch_mnist_cnn,
    "cifar_cnn": torch_cifar_cnn, "char_lstm": torch_char_lstm,
    "elementwise_1m": torch_elementwise(1 << 20), "elementwise_16m": torch_elementwise(1 << 24),
    "infer_1": torch_inference(1), "infer_256": torch_inference(256),
    "trivial_1": torch_trivial(1), "trivial_10": torch_trivial(10),
    "trivial_100": torch_trivial(100), "long_chain": torch_long_chain,
}


# ------------------------------------------------------------------------------------------ JAX
def _adam(jax, jnp, lr, b1=0.9, b2=0.999, eps=1e-8):
    """(init, update) of Adam as TF1 computes it, over a pytree of parameters."""
    tree = jax.tree_util

    def init(params):
        zeros = tree.tree_map(jnp.zeros_like, params)
        return zeros, zeros, jnp.zeros((), jnp.float32)

    def update(grads, state, params):
        m, v, t = state
        t = t + 1
        m = tree.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = tree.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
        rate = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        params = tree.tree_map(lambda p, m_, v_: p - rate * m_ / (jnp.sqrt(v_) + eps), params, m, v)
        return params, (m, v, t)
    return init, update


def _jax_train(make, lr=1e-3, opt="adam"):
    """A jitted step of `make(jax, jnp, key) -> (params, loss(params, *data), data)`."""
    jax, jnp = jax_modules()
    params, loss_fn, data = make(jax, jnp, jax.random.PRNGKey(0))
    if opt == "adam":
        init, update = _adam(jax, jnp, lr)
    else:
        def init(params):
            return ()

        def update(grads, state, params):
            return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), state

    @jax.jit
    def train(params, state, *data):
        loss, grads = jax.value_and_grad(loss_fn)(params, *data)
        params, state = update(grads, state, params)
        return params, state, loss

    box = [params, init(params)]

    def step():
        box[0], box[1], loss = train(box[0], box[1], *data)
        return loss.block_until_ready()
    return step


def _he(jax, key, shape, fan_in):
    return jax.random.normal(key, shape) * np.sqrt(2 / fan_in)


def _xent(jax, jnp, logits, labels):
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))


def _jax_conv(jax, x, w, b):
    out = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(out + b)


def _jax_pool(jax, x):
    return jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def _jax_dense_params(jax, jnp, keys, sizes):
    return [(_he(jax, k, (a, b), a), jnp.zeros(b)) for k, (a, b) in zip(keys, sizes)]


def _jax_conv_params(jax, jnp, keys, specs):
    return [(_he(jax, k, (s, s, c_in, c_out), s * s * c_in), jnp.zeros(c_out))
            for k, (s, c_in, c_out) in zip(keys, specs)]


def jax_cs231n(threads):
    def make(jax, jnp, key):
        k = jax.random.split(key, 4)
        params = [jax.random.normal(k[0], (1000, 100)), jax.random.normal(k[1], (100, 10))]
        x, y = jax.random.normal(k[2], (64, 1000)), jax.random.normal(k[3], (64, 10))

        def loss(p, x, y):
            return jnp.sum((jax.nn.relu(x @ p[0]) @ p[1] - y) ** 2)
        return params, loss, (x, y)
    return _jax_train(make, lr=1e-6, opt="sgd")


def _jax_mlp_forward(jax, params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i < len(params) - 1:
            x = jax.nn.relu(x)
    return x


def jax_mlp(threads):
    def make(jax, jnp, key):
        k = jax.random.split(key, 5)
        params = _jax_dense_params(jax, jnp, k[:3], [(784, 512), (512, 512), (512, 10)])
        x = jax.random.normal(k[3], (256, 784))
        y = jax.nn.one_hot(jax.random.randint(k[4], (256,), 0, 10), 10)
        return params, lambda p, x, y: _xent(jax, jnp, _jax_mlp_forward(jax, p, x), y), (x, y)
    return _jax_train(make)


def jax_mnist_cnn(threads):
    def make(jax, jnp, key):
        k = jax.random.split(key, 4)
        params = (_jax_conv_params(jax, jnp, k[:1], [(5, 1, 16)]),
                  _jax_dense_params(jax, jnp, k[1:2], [(14 * 14 * 16, 10)]))
        x = jax.random.normal(k[2], (64, 28, 28, 1))
        y = jax.nn.one_hot(jax.random.randint(k[3], (64,), 0, 10), 10)

        def loss(p, x, y):
            h = _jax_pool(jax, _jax_conv(jax, x, *p[0][0]))
            return _xent(jax, jnp, _jax_mlp_forward(jax, p[1], h.reshape(64, -1)), y)
        return params, loss, (x, y)
    return _jax_train(make)


def jax_cifar_cnn(threads):
    def make(jax, jnp, key):
        k = jax.random.split(key, 7)
        params = (_jax_conv_params(jax, jnp, k[:3], [(3, 3, 32), (3, 32, 32), (3, 32, 64)]),
                  _jax_dense_params(jax, jnp, k[3:5], [(8 * 8 * 64, 512), (512, 10)]))
        x = jax.random.normal(k[5], (64, 32, 32, 3))
        y = jax.nn.one_hot(jax.random.randint(k[6], (64,), 0, 10), 10)

        def loss(p, x, y):
            c = p[0]
            h = _jax_pool(jax, _jax_conv(jax, _jax_conv(jax, x, *c[0]), *c[1]))
            h = _jax_pool(jax, _jax_conv(jax, h, *c[2]))
            return _xent(jax, jnp, _jax_mlp_forward(jax, p[1], h.reshape(64, -1)), y)
        return params, loss, (x, y)
    return _jax_train(make)


def jax_char_lstm(threads):
    def make(jax, jnp, key):
        k = jax.random.split(key, 4)
        params = {"kernel": jax.random.normal(k[0], (VOCAB + HIDDEN, 4 * HIDDEN)) * 0.05,
                  "bias": jnp.zeros(4 * HIDDEN),
                  "w": jax.random.normal(k[1], (HIDDEN, VOCAB)) * 0.1, "b": jnp.zeros(VOCAB)}
        ids = jax.random.randint(k[2], (BATCH, SEQ + 1), 0, VOCAB)

        def loss(p, inputs, targets):
            def cell(carry, x):  # TF1's BasicLSTMCell: gates i, j, f, o; forget bias 1
                c, h = carry
                i, j, f, o = jnp.split(jnp.concatenate([x, h], 1) @ p["kernel"] + p["bias"], 4, 1)
                c = c * jax.nn.sigmoid(f + 1.0) + jax.nn.sigmoid(i) * jnp.tanh(j)
                h = jnp.tanh(c) * jax.nn.sigmoid(o)
                return (c, h), h

            xs = jnp.swapaxes(jax.nn.one_hot(inputs, VOCAB), 0, 1)
            zeros = jnp.zeros((BATCH, HIDDEN))
            _, hs = jax.lax.scan(cell, (zeros, zeros), xs)
            logits = jnp.swapaxes(hs, 0, 1).reshape(-1, HIDDEN) @ p["w"] + p["b"]
            return _xent(jax, jnp, logits, jax.nn.one_hot(targets.reshape(-1), VOCAB))
        return params, loss, (ids[:, :-1], ids[:, 1:])
    return _jax_train(make, lr=0.002)


def _jax_jitted(fn, *args):
    jax, _ = jax_modules()
    jitted = jax.jit(fn)
    return lambda: jitted(*args).block_until_ready()


def jax_elementwise(size):
    def build(threads):
        jax, jnp = jax_modules()
        x = jax.random.normal(jax.random.PRNGKey(0), (size,))
        return _jax_jitted(lambda x: jnp.tanh(x * 2.0 + 1.0) * jax.nn.sigmoid(x) - x * x, x)
    return build


def jax_inference(batch):
    def build(threads):
        jax, jnp = jax_modules()
        k = jax.random.split(jax.random.PRNGKey(0), 5)
        convs = _jax_conv_params(jax, jnp, k[:2], [(5, 1, 32), (5, 32, 64)])
        dense = _jax_dense_params(jax, jnp, k[2:4], [(7 * 7 * 64, 1024), (1024, 10)])
        x = jax.random.normal(k[4], (batch, 28, 28, 1))

        def forward(x):
            h = _jax_pool(jax, _jax_conv(jax, x, *convs[0]))
            h = _jax_pool(jax, _jax_conv(jax, h, *convs[1]))
            return jax.nn.softmax(_jax_mlp_forward(jax, dense, h.reshape(x.shape[0], -1)))
        return _jax_jitted(forward, x)
    return build


def jax_trivial(ops):
    def build(threads):
        jax, jnp = jax_modules()

        def chain(x):
            for _ in range(ops):
                x = x + 1.0
            return x
        return _jax_jitted(chain, jnp.ones(4))
    return build


def jax_long_chain(links):
    def build(threads):
        jax, jnp = jax_modules()

        def loss(x):
            for _ in range(links):
                x = jnp.tanh(x * 1.01 + 0.01)
            return jnp.sum(x)
        step = jax.jit(jax.value_and_grad(loss))
        x = jax.random.normal(jax.random.PRNGKey(0), (64,))
        return lambda: step(x)[1].block_until_ready()
    return build


jax_builders = {
    "cs231n": jax_cs231n, "mlp": jax_mlp, "mnist_cnn": jax_mnist_cnn,
    "cifar_cnn": jax_cifar_cnn, "char_lstm": jax_char_lstm,
    "elementwise_1m": jax_elementwise(1 << 20), "elementwise_16m": jax_elementwise(1 << 24),
    "infer_1": jax_inference(1), "infer_256": jax_inference(256),
    "trivial_1": jax_trivial(1), "trivial_10": jax_trivial(10),
    "trivial_100": jax_trivial(100), "long_chain": jax_long_chain,
}
