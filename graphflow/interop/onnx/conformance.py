"""Which of ONNX's conformance cases graphflow runs, and `docs/onnx.md`'s table of them.

The `onnx` wheel ships its backend test cases: `node` (one op per model, generated from onnx's own
case definitions), `simple`, `pytorch-converted` and `pytorch-operator` (small whole models). The
model suites run whole. A node case runs when graphflow maps every op of its model; the others are
counted as "op not mapped". Cases that run but are known to fail are listed in
`expected_failures.EXPECTED_FAILURES`, each with its reason; tests/interop/onnx/test_conformance.py
runs everything through `onnx.backend.test.BackendTest`, strict about both directions (a listed case
that passes fails the test run, as does an unlisted failure).

    python -m graphflow.interop.onnx.conformance          # print the table
    python -m graphflow.interop.onnx.conformance --write  # rewrite docs/onnx.md's table
"""

import argparse
import os
import re

from graphflow.interop.onnx.support import require_onnx

SUITES = ("node", "simple", "pytorch-converted", "pytorch-operator")
DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "onnx.md")
BEGIN, END = "<!-- conformance table: begin -->", "<!-- conformance table: end -->"


def _model_op_types(onnx, case):
    model = case.model if case.model is not None else onnx.load(
        os.path.join(case.model_dir, "model.onnx"), load_external_data=False)
    types = set()
    graphs = [model.graph]
    while graphs:  # subgraphs (If/Loop bodies) count too
        graph = graphs.pop()
        for node in graph.node:
            types.add(node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}")
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    graphs.append(attr.g)
                graphs.extend(attr.graphs)
    return types


def select_cases():
    """{suite: (selected case names, names of node cases whose ops graphflow does not map)}."""
    onnx = require_onnx()
    from onnx.backend.test.loader import load_model_tests  # noqa: PLC0415

    from graphflow.interop.onnx import (  # noqa: F401, PLC0415
        import_control_flow,  # noqa: F401, PLC0415
        import_index_ops,
        import_nn_ops,
        import_reduce_ops,
        import_resize_ops,
        import_sequence_ops,
        import_shape_ops,
        import_string_ops,
    )
    from graphflow.interop.onnx.import_ops import BUILDERS  # noqa: PLC0415
    selection = {}
    for suite in SUITES:
        selected, unmapped = [], []
        for case in load_model_tests(kind=suite):
            if suite == "node" and not _model_op_types(onnx, case) <= set(BUILDERS):
                unmapped.append(case.name)
            else:
                selected.append(case.name)
        selection[suite] = (sorted(selected), sorted(unmapped))
    return selection


def table(selection=None):
    from graphflow.interop.onnx.expected_failures import EXPECTED_FAILURES  # noqa: PLC0415
    selection = selection or select_cases()
    rows = ["| suite | cases | run by graphflow | pass | expected failures | op not mapped |",
            "|---|---|---|---|---|---|"]
    for suite in SUITES:
        selected, unmapped = selection[suite]
        failing = sum(1 for name in selected if name in EXPECTED_FAILURES)
        rows.append(f"| {suite} | {len(selected) + len(unmapped)} | {len(selected)} | "
                    f"{len(selected) - failing} | {failing} | {len(unmapped)} |")
    return "\n".join(rows)


def write_doc(path=DOC):
    with open(path) as f:
        text = f.read()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    text = pattern.sub(f"{BEGIN}\n{table()}\n{END}", text)
    with open(path, "w") as f:
        f.write(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the table in docs/onnx.md")
    args = parser.parse_args(argv)
    if args.write:
        write_doc()
    else:
        print(table())


if __name__ == "__main__":
    main()
