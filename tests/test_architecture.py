"""The floors of docs/architecture.md hold: every module is placed on a floor and imports only from
its own floor or lower ones (at the top of a file or inside a function alike), and no two modules
import each other, through any import, but the few groups of one floor listed here and on the page.
The CUDA launchers are named after the sources they launch."""

import ast
import pathlib
import re

import pytest

import graphflow

PACKAGE = pathlib.Path(graphflow.__file__).parent
DOC = PACKAGE.parent / "docs" / "architecture.md"


# ------------------------------------------------------------------ reading the page
def _section(text, heading):
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def _paths(text):
    return re.findall(r"`([\w/]+(?:\.py|/))`", text)


def read_floors(text):
    """{path: floor} from the page's "Floors" section."""
    section = _section(text, "## Floors (who may import whom)")
    floors, item, number = {}, [], None

    def close():
        for path in _paths(" ".join(item)):
            assert floors.get(path, number) == number, (
                f"docs/architecture.md places `{path}` on two floors")
            floors[path] = number
    for line in section.splitlines():
        m = re.match(r"(\d+)\. ", line)
        if m:
            if number is not None:
                close()
            number, item = int(m.group(1)), [line]
        elif number is not None and line.startswith("   "):
            item.append(line)
        elif number is not None:
            close()
            number, item = None, []
    if number is not None:
        close()
    return floors


FLOORS = read_floors(DOC.read_text())


# ------------------------------------------------------------------ modules and imports
def _modules():
    """{dotted name: path relative to the package}"""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        parts = ("graphflow",) + rel.with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = rel.as_posix()
    return out


MODULES = _modules()


def floor_of(rel):
    """The floor the page gives a module (its own path, else the longest folder holding it)."""
    if rel in FLOORS:
        return FLOORS[rel]
    best = None
    for path in FLOORS:
        if path.endswith("/") and rel.startswith(path) and (best is None or len(path) > len(best)):
            best = path
    return None if best is None else FLOORS[best]


def _target(name, package):
    """The graphflow module an import of `name` loads (a package's name when `name` is not a
    module of its own), or None for other libraries."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module):
    """[(imported module, line, lazy)] for the graphflow imports of `module`."""
    rel = MODULES[module]
    tree = ast.parse((PACKAGE / rel).read_text())
    package = module if rel.endswith("__init__.py") else module.rpartition(".")[0]
    found = []

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            names = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[:len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                names = [f"{base}.{a.name}" for a in child.names]
            for name in names:
                if name.split(".")[0] == "graphflow":
                    target = _target(name, package)
                    if target is not None and target != module:
                        found.append((target, child.lineno, lazy))
            visit(child, inner)
    visit(tree, False)
    return found


# ------------------------------------------------------------------ the checks
def test_the_page_places_every_module_on_a_floor():
    for path in FLOORS:
        assert (PACKAGE / path).exists(), f"docs/architecture.md names `{path}`, which does not exist"
    unplaced = [rel for rel in MODULES.values() if floor_of(rel) is None]
    assert not unplaced, f"modules docs/architecture.md places on no floor: {unplaced}"
    for rel in ("tf1/layers.py", "tf1/losses.py", "tf1/variable_scope.py"):
        assert rel in FLOORS, f"docs/architecture.md does not name `{rel}`"


def test_imports_go_down_or_sideways_only():
    wrong = []
    for module, rel in MODULES.items():
        floor = floor_of(rel)
        for target, line, lazy in imports(module):
            target_floor = floor_of(MODULES[target])
            if target_floor > floor:
                wrong.append(f"graphflow/{rel}:{line} (floor {floor}) imports {target} "
                             f"(floor {target_floor}){' inside a function' if lazy else ''}")
    assert not wrong, "imports that go up a floor:\n  " + "\n  ".join(wrong)


# The groups of modules that import each other, each split from one module for size and on one
# floor (docs/architecture.md lists them too); no other group may appear, and a group that no
# longer imports itself must leave this list.
KNOWN_CYCLES = [
    # TF1's train module: MonitoredTrainingSession and its hooks build on the Saver and
    # global-step helpers of train.py, which exports them under tf.train.
    {"graphflow.tf1.train", "graphflow.tf1.training_session", "graphflow.tf1.session_hooks",
     "graphflow.tf1.summary_hooks"},
    # tf.keras: a layer's get_config/from_config is its row of the HDF5 layer table, whose models
    # and layers build on the base layer; the loss and optimizer classes beside their functions.
    {"graphflow.tf1.keras.backend_nn", "graphflow.tf1.keras.base_layer",
     "graphflow.tf1.keras.hdf5_format", "graphflow.tf1.keras.hdf5_layer_specs",
     "graphflow.tf1.keras.hdf5_model_config", "graphflow.tf1.keras.hdf5_saving",
     "graphflow.tf1.keras.layers_recurrent", "graphflow.tf1.keras.losses",
     "graphflow.tf1.keras.losses_classes", "graphflow.tf1.keras.metrics_classes",
     "graphflow.tf1.keras.network", "graphflow.tf1.keras.saving", "graphflow.tf1.keras.sequential",
     "graphflow.tf1.keras.training"},
    # tf.layers: the functional layers build the layer classes, which tf.layers exports.
    {"graphflow.tf1.layers", "graphflow.tf1.layer_classes", "graphflow.tf1.layers_conv",
     "graphflow.tf1.layers_norm"},
    # tf.data: a Dataset's methods build the sources and transforms defined beside it, which are
    # Datasets themselves.
    {"graphflow.tf1.data.dataset", "graphflow.tf1.data.batching", "graphflow.tf1.data.iterator_ops",
     "graphflow.tf1.data.nested", "graphflow.tf1.data.sources", "graphflow.tf1.data.transforms"},
]


def import_edges():
    """{module: modules it imports}, through every import, at the top of a file or inside a
    function. A package's __init__ loading its own modules is not an edge (a module importing its
    package is one)."""
    edges = {}
    for module, rel in MODULES.items():
        targets = set()
        for target, _, _ in imports(module):
            if rel.endswith("__init__.py") and target.startswith(module + "."):
                continue
            targets.add(target)
        edges[module] = sorted(targets)
    return edges


def cycles(edges):
    """The groups of two or more modules that import each other (strongly connected components,
    Tarjan's algorithm with an explicit stack)."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return groups


def test_no_import_cycles_but_the_known_ones():
    found = cycles(import_edges())
    new = [sorted(g) for g in found if not any(g <= known for known in KNOWN_CYCLES)]
    assert not new, f"modules that import each other: {new}"
    gone = [sorted(k) for k in KNOWN_CYCLES if not any(k <= g for g in found)]
    assert not gone, f"no longer import each other, drop them from KNOWN_CYCLES and the page: {gone}"
    text = _section(DOC.read_text(), "## Floors (who may import whom)")
    for group in KNOWN_CYCLES:
        floors = {floor_of(MODULES[module]) for module in group}
        assert len(floors) == 1, f"a cycle across floors {sorted(floors)}: {sorted(group)}"
        for module in group:
            assert f"`{MODULES[module]}`" in text.split("import each other")[-1], module


def test_the_graph_data_model_imports_no_op():
    """The framework records ops without knowing what they mean: ops give Tensor its operators
    and Operation its op_def when they load."""
    for module in MODULES:
        if module.startswith("graphflow.framework"):
            wrong = [t for t, _, _ in imports(module) if not t.startswith("graphflow.framework")]
            assert not wrong, f"{module} imports {wrong}"


def test_the_cycle_finder():
    assert cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [{"a", "b", "c"}]
    assert cycles({"a": ["b"], "b": []}) == []


def test_device_and_array_kernels_and_core_and_array_ops_no_longer_import_each_other():
    edges = import_edges()
    assert "graphflow.kernels.cuda.array" not in edges["graphflow.kernels.cuda.device"]
    assert "graphflow.ops.array_ops" not in edges["graphflow.ops.core_ops"]
    assert "graphflow.ops.shape_ops" not in edges["graphflow.ops.core_ops"]


def test_the_reader_sees_floors_and_lazy_imports():
    floors = read_floors(
        "## Floors (who may import whom)\n\n1. Leaves: `a.py`, `b/`\n   and `c.py`.\n"
        "2. Next: `d/` (`e.py`)\n\nText `f.py`.\n\n## Next\n1. `h.py`\n")
    assert floors == {"a.py": 1, "b/": 1, "c.py": 1, "d/": 2, "e.py": 2}
    found = {(t, lazy) for t, _, lazy in imports("graphflow.framework.tensor")}
    assert ("graphflow.framework.default_session", True) in found  # Tensor.eval
    assert ("graphflow.framework.tensor_shape", False) in found


@pytest.mark.parametrize("source", sorted((PACKAGE / "kernels" / "cuda").glob("*.cu")),
                         ids=lambda p: p.name)
def test_each_cuda_source_has_the_launcher_of_its_name(source):
    launcher = source.with_suffix(".py")
    assert launcher.exists(), f"{source.name} has no launcher {launcher.name}"
    assert f'"{source.name}"' in launcher.read_text()


def test_cuda_launchers_launch_their_own_source_and_share_one_dtype_map():
    shared = {"launch.py"}  # the fill kernels of array.cu that the runtime itself uses
    for path in sorted((PACKAGE / "kernels" / "cuda").glob("*.py")):
        text = path.read_text()
        launched = set(re.findall(r'kernel\("(\w+)\.cu"', text))
        if path.name not in shared:
            assert launched <= {path.stem}, f"{path.name} launches {sorted(launched)}"
        maps = re.findall(r'^\w+ = \{np\.dtype\([^)]*\): "[fiu]\d+"', text, re.M)
        assert path.name == "launch.py" or not maps, f"{path.name} keeps its own dtype map: {maps}"
