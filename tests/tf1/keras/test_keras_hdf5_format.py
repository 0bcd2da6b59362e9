"""Keras HDF5 files as hostile input: malformed configurations, attributes of the wrong kind,
weights of the wrong dtype or a huge declared shape, links to other files, unsupported layers
and keys; then a fuzz run over mutated files where the only outcomes are a load, a
GraphFormatError or a clear ValueError."""

import io
import json
import os
import random
import shutil

import h5py
import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import GraphFormatError
from graphflow.tf1.keras import hdf5_format
from tests.tooling import sampled

K = tf.keras
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tensorflow", "keras")
MLP = os.path.join(FIXTURES, "mlp.h5")


def _copy(tmp_path, name="m.h5", source=MLP):
    path = str(tmp_path / name)
    shutil.copyfile(source, path)
    return path


def _config(path):
    with h5py.File(path, "r") as f:
        return json.loads(f.attrs["model_config"])


def _set_config(path, config):
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = config if isinstance(config, (str, bytes)) else \
            json.dumps(config)


def _load(path):
    K.backend.clear_session()
    return K.models.load_model(path)


def test_unsupported_classes_and_keys_are_listed_together(tmp_path):
    path = _copy(tmp_path)
    config = _config(path)
    layers = config["config"]["layers"]
    layers[1]["class_name"] = "ConvLSTM2D"
    layers[3]["config"]["kernel_constraint"] = {"class_name": "MaxNorm", "config": {}}
    layers[3]["config"]["activation"] = "gelu"
    layers[3]["config"]["new_knob"] = 1
    _set_config(path, config)
    with pytest.raises(ValueError) as caught:
        _load(path)
    message = str(caught.value)
    for part in ("layer class ConvLSTM2D (layer 'dense')", "Dense 'dense_1': kernel_constraint",
                 "activation='gelu'", "key 'new_knob'"):
        assert part in message, message
    assert not isinstance(caught.value, GraphFormatError)


@pytest.mark.parametrize("edit,match", [
    (lambda c: c["config"]["layers"][1]["config"].update(units="16"), "units"),
    (lambda c: c["config"]["layers"][1]["config"].update(units=-3), "units"),
    (lambda c: c["config"]["layers"][1]["config"].update(use_bias=1), "use_bias"),
    (lambda c: c["config"]["layers"][2]["config"].update(rate=[0.5]), "rate"),
    (lambda c: c["config"].update(layers={"a": 1}), "should be a JSON list"),
    (lambda c: c["config"]["layers"][1].pop("config"), "should be a JSON object"),
    (lambda c: c["config"]["layers"][1]["config"].pop("name"), "no valid name"),
    (lambda c: c["config"]["layers"][0]["config"].update(batch_input_shape="x"), "InputLayer"),
    (lambda c: c["config"]["layers"][1]["config"].update(kernel_regularizer=[1]),
     "kernel_regularizer"),
])
def test_malformed_configs_are_graph_format_errors(tmp_path, edit, match):
    path = _copy(tmp_path)
    config = _config(path)
    edit(config)
    _set_config(path, config)
    with pytest.raises(GraphFormatError, match=match) as caught:
        _load(path)
    assert path in str(caught.value)


def test_bad_json_and_deep_nesting(tmp_path):
    path = _copy(tmp_path)
    _set_config(path, "{not json")
    with pytest.raises(GraphFormatError, match="model_config.*not valid JSON"):
        _load(path)
    _set_config(path, "[" * 100_000 + "]" * 100_000)
    with pytest.raises(GraphFormatError, match="nested deeper than 32"):
        _load(path)
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = np.arange(3)
    with pytest.raises(GraphFormatError, match="should be one string"):
        _load(path)


def test_functional_references_that_do_not_connect(tmp_path):
    path = _copy(tmp_path, source=os.path.join(FIXTURES, "functional.h5"))
    config = _config(path)
    layers = {entry["name"]: entry for entry in config["config"]["layers"]}
    layers["h"]["inbound_nodes"] = [[["skip", 0, 0, {}]]]          # a cycle h -> skip -> h
    _set_config(path, config)
    with pytest.raises(GraphFormatError, match="cycle"):
        _load(path)
    layers["h"]["inbound_nodes"] = [[["nowhere", 0, 0, {}]]]
    _set_config(path, config)
    with pytest.raises(GraphFormatError, match="which no layer makes"):
        _load(path)
    layers["h"]["inbound_nodes"] = [[["merged", 0, "0", {}]]]
    _set_config(path, config)
    with pytest.raises(GraphFormatError, match="should be \\[layer name"):
        _load(path)


def _edit_weights(path, fn):
    with h5py.File(path, "r+") as f:
        fn(f["model_weights"])


@pytest.mark.parametrize("edit,match", [
    (lambda g: (g["dense"].__delitem__("dense/kernel:0"),
                g["dense"].create_dataset("dense/kernel:0", data=np.array([b"ab"] * 3,
                                                                         dtype=object),
                                          dtype=h5py.string_dtype())), "dtype"),
    (lambda g: (g["dense"].__delitem__("dense/kernel:0"),
                g["dense"].create_dataset("dense/kernel:0", shape=(1 << 40,), dtype="f4",
                                          chunks=(1024,))), "declares"),
    (lambda g: (g["dense"].__delitem__("dense/kernel:0"),
                g["dense"].create_dataset("dense/kernel:0", data=np.zeros((8, 16), "complex64"))),
     "dtype"),
    (lambda g: g["dense"].attrs.__setitem__("weight_names", np.zeros((2, 2))), "rank|strings"),
    (lambda g: g["dense"].attrs.__setitem__("weight_names", [b"dense/missing:0"]), "has no"),
    (lambda g: g.attrs.__setitem__("layer_names", [b"dense", b"dense"]), "twice"),
    (lambda g: (g["dense"].__delitem__("dense/kernel:0"),
                g["dense"].__setitem__("dense/kernel:0", h5py.ExternalLink("/etc/passwd", "/x"))),
     "ExternalLink"),
    (lambda g: (g["dense"].__delitem__("dense/kernel:0"),
                g["dense"].__setitem__("dense/kernel:0", h5py.SoftLink("/model_weights/dense"))),
     "SoftLink"),
])
def test_hostile_weights_are_refused_before_reading(tmp_path, edit, match):
    path = _copy(tmp_path)
    _edit_weights(path, edit)
    with pytest.raises(GraphFormatError, match=match):
        _load(path)


def test_wrong_weight_shape_is_a_clear_value_error(tmp_path):
    path = _copy(tmp_path)
    _edit_weights(path, lambda g: (g["dense"].__delitem__("dense/kernel:0"),
                                   g["dense"].create_dataset("dense/kernel:0",
                                                             data=np.zeros((8, 15), "f4"))))
    with pytest.raises(ValueError, match="Shape mismatch in layer #0 \\(named dense\\)"):
        _load(path)


def test_limits_bound_the_weight_bytes(tmp_path):
    import dataclasses

    from graphflow.fileformat import file_io
    small = dataclasses.replace(file_io.DEFAULT_LIMITS, max_tensor_bytes=100)
    K.backend.clear_session()
    model = K.Sequential([K.layers.Dense(16, input_shape=(8,)), K.layers.Dense(3)])
    with pytest.raises(GraphFormatError, match="declares 512 bytes"):
        hdf5_format.load_weights(model, os.path.join(FIXTURES, "mlp_weights.h5"), limits=small)


# ------------------------------------------------------------------ fuzz
_EXPECTED = (GraphFormatError, ValueError)
COUNT = 2000


def _mutate_json(value, rng, depth=0):
    """A copy of a JSON value with one random change somewhere inside."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        out = dict(value)
        if rng.random() < 0.15:
            del out[key]
        else:
            out[key] = _mutate_json(value[key], rng, depth + 1)
        return out
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        out = list(value)
        if rng.random() < 0.1:
            del out[i]
        elif rng.random() < 0.1:
            out.append(out[i])
        else:
            out[i] = _mutate_json(value[i], rng, depth + 1)
        return out
    return rng.choice([None, True, 0, -1, 1 << 62, 2.5, -1e308, "", "relu", "x" * 50, [],
                       [None], {}, {"class_name": "Zeros", "config": {}}, [1, 2], [[0, 1]],
                       "Dense", "channels_first", [-1, 8], float("nan")])


def _mutated_files(tmp_path, count, seed=0):
    """(kind of mutation, base file name, bytes) of `count` mutated Keras files."""
    rng = random.Random(seed)
    bases = {name: open(os.path.join(FIXTURES, name), "rb").read()
             for name in ("mlp.h5", "functional.h5", "mlp_weights.h5")}
    configs = {name: json.loads(h5py.File(io.BytesIO(data), "r").attrs["model_config"])
               for name, data in bases.items() if name != "mlp_weights.h5"}
    trainings = {name: json.loads(h5py.File(io.BytesIO(data), "r").attrs["training_config"])
                 for name, data in bases.items() if name != "mlp_weights.h5"}
    schedule = ["flip"] * 5 + ["truncate"] * 4 + ["config"] * 5 + ["training"] + \
        ["attrs"] * 3 + ["weights"] * 2
    for i in range(count):
        kind = schedule[i % len(schedule)]
        if kind == "flip" and rng.random() < 0.7:    # a weights file loads fastest
            name = "mlp_weights.h5"
        elif kind in ("flip", "truncate", "weights"):
            name = rng.choice(sorted(bases))
        else:
            name = rng.choice(sorted(configs))
        data = bases[name]
        if kind == "flip":
            mutated = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8)
            yield kind, name, bytes(mutated)
            continue
        if kind == "truncate":
            yield kind, name, data[:rng.randrange(len(data))]
            continue
        buffer = io.BytesIO(data)
        with h5py.File(buffer, "r+") as f:
            if kind == "config":
                text = json.dumps(_mutate_json(configs[name], rng))
                if rng.random() < 0.05:
                    text = text[:rng.randrange(len(text) + 1)]
                f.attrs["model_config"] = text
            elif kind == "training":
                f.attrs["training_config"] = json.dumps(_mutate_json(trainings[name], rng))
            elif kind == "attrs":
                group = f["model_weights"]
                target = rng.choice([f, group] + [group[k] for k in group])
                attr = rng.choice(["layer_names", "weight_names", "model_config",
                                   "training_config"])
                target.attrs[attr] = rng.choice([
                    np.arange(rng.randint(0, 5)), np.zeros((2, 3)), b"dense", "dense",
                    [b"dense_1", b"dense"], [b"nope"], np.array([1.5]), [b"\xff\xfe"],
                    [b"dense/kernel:0"] * 2, [b""], [b"/"], [b"../dense"]])
            else:
                group = f["model_weights"] if "model_weights" in f else f
                holder = group[rng.choice([k for k in group if len(group[k])] or list(group))]
                datasets = _datasets(holder)
                if datasets:
                    target = rng.choice(datasets)
                    old = holder[target]
                    shape = old.shape
                    del holder[target]
                    choice = rng.randrange(6)
                    if choice == 0:
                        holder.create_dataset(target, data=np.zeros(
                            tuple(d + rng.choice([-1, 1]) for d in shape) or (2,), "f4"))
                    elif choice == 1:
                        holder.create_dataset(target, data=np.zeros(shape, rng.choice(
                            ["f8", "i4", "u1", "?", "f2", ">f4", "i8"])))
                    elif choice == 2:
                        holder.create_dataset(target, shape=(1 << rng.randint(20, 50),),
                                              dtype="f4", chunks=(256,))
                    elif choice == 3:
                        holder.create_dataset(target, data=np.array(["a"] * 3, dtype=object),
                                              dtype=h5py.string_dtype())
                    elif choice == 4:
                        holder.create_dataset(target, shape=shape, dtype=np.dtype(
                            [("a", "f4"), ("b", "i4")]))
                    else:
                        holder.create_group(target)
        yield kind, name, buffer.getvalue()


def _datasets(group):
    found = []
    group.visititems(lambda n, o: found.append(n) if isinstance(o, h5py.Dataset) else None)
    return found


def test_fuzz_mutated_files_load_or_fail_clearly(tmp_path, fuzz_share):
    K.backend.clear_session()
    mlp = K.Sequential([K.layers.Dense(16, activation="relu", input_shape=(8,)),
                        K.layers.Dropout(0.2), K.layers.Dense(3, activation="softmax")])
    outcomes, unexpected = {}, []
    path = str(tmp_path / "fuzz.h5")
    mutants = sampled(_mutated_files(tmp_path, COUNT), fuzz_share)
    for i, (kind, name, data) in enumerate(mutants):
        with open(path, "wb") as f:
            f.write(data)
        try:
            with _quiet():
                if name == "mlp_weights.h5":
                    mlp.load_weights(path)
                else:
                    K.backend.clear_session()
                    K.models.load_model(path, compile=kind == "training")
            outcome = "loaded"
        except _EXPECTED as exc:
            outcome = type(exc).__name__
        except Exception as exc:     # noqa: BLE001 - any other type is the finding
            outcome = "unexpected"
            unexpected.append((i, name, f"{type(exc).__name__}: {exc}"[:300]))
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if name == "mlp_weights.h5" and outcome == "loaded":
            K.backend.clear_session()
            mlp = K.Sequential([K.layers.Dense(16, activation="relu", input_shape=(8,)),
                                K.layers.Dropout(0.2), K.layers.Dense(3, activation="softmax")])
    print("fuzz outcomes:", outcomes)
    assert not unexpected, unexpected[:10]
    assert sum(outcomes.values()) == len(range(0, COUNT, round(1 / fuzz_share)))
    assert outcomes.get("loaded", 0) > 100 * fuzz_share
    assert outcomes.get("GraphFormatError", 0) > 500 * fuzz_share


def _quiet():
    import warnings
    manager = warnings.catch_warnings()

    class _Quiet:
        def __enter__(self):
            manager.__enter__()
            warnings.simplefilter("ignore")

        def __exit__(self, *exc):
            return manager.__exit__(*exc)
    return _Quiet()
