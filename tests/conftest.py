"""Shared fixtures: every test starts from a fresh default graph, with fused programs on threads
whenever their size allows, whatever their work (`fused_kernels.PARALLEL_MIN_WORK`), so that the
threaded route is the one tested (tests/kernels/cpu/reference/test_fused_kernels.py tests the rule).
Tests marked `slow` run only when GRAPHFLOW_RUN_SLOW=1 (CI sets it, see .ci/run) or when `-m` selects
markers explicitly (`-m "not slow"` is the default run's selection). Marked slow: the node ids listed
in SLOW below, and of each parametrized test the parametrizations beyond a representative slice
(tests/selection.py: every parameter value once; one op case of each op type). The fuzz tests try
1/16 of their mutants unless the slow tests run (the `fuzz_share` fixture)."""

import os

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu.reference import fused_kernels
from tests import selection


def _leave_eager_mode():
    from graphflow.framework import graph
    if graph._DefaultGraphStack.base is not None and graph._DefaultGraphStack.base.eager:
        from graphflow.engine import eager
        eager.disable()


@pytest.fixture(autouse=True)
def fresh_graph():
    _leave_eager_mode()
    tf.reset_default_graph()
    yield
    _leave_eager_mode()
    tf.reset_default_graph()


@pytest.fixture
def eager():
    """Eager mode for one test (tf.enable_eager_execution() at its start), off again after it."""
    tf.enable_eager_execution()
    yield
    _leave_eager_mode()


@pytest.fixture(autouse=True)
def threads_as_given(monkeypatch):
    monkeypatch.setattr(fused_kernels, "PARALLEL_MIN_WORK", 0)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# The slow few: left out of the default run (`python -m pytest -q`), run by CI (.ci/run sets
# GRAPHFLOW_RUN_SLOW=1) and by `-m slow`. Node-id prefix -> what makes it slow (seconds measured
# on a shared 2-core machine).
_PROGRAMS = "tests/tf1/test_programs_as_written.py::test_program_runs_as_written"
SLOW = {
    "tests/engine/test_session.py::test_100k_node_chain_builds_and_runs": "100k-op graph, 35 s",
    "tests/ops/test_gradients.py::test_long_chain_differentiates_and_runs": "long chain, 14 s",
    "tests/interop/distribute/": "MPI jobs of 2-3 processes, 25 tests, ~60 s",
    "tests/interop/onnx/test_conformance.py": "1274 ONNX conformance cases, ~70 s with collection",
    "tests/tools/test_viz.py::test_big_graphs_are_walked_without_recursion": "big graphs, 11 s",
    "tests/test_train_digits.py::test_train_digits_quick": "trains two models, 12 s",
    "tests/test_train_digits.py::test_saved_cnn_holds_only_what_its_output_needs": "trains, 8 s",
    "tests/test_train_digits.py::test_saved_models_export_to_onnx_and_match_graphflow_run":
        "trains both models (one epoch, shared with the test above), exports, runs: 20 s",
    "tests/tools/test_cli.py::test_usage_errors_exit_with_status_2": "12 processes, 7 s",
    "tests/tools/test_cli.py::test_inspect_prints_signatures_variables_and_ops": "processes, 7 s",
    # the longest of the default run's rest (seconds on a busy 2-core machine); what they cover
    # the default run still reaches through the other tests of their modules
    _PROGRAMS + "[ctc_speech.py]": "trains an LSTM with CTC for 300 steps, 6 s CPU",
    _PROGRAMS + "[cifar10_queue_input.py]": "4.7 s",
    _PROGRAMS + "[char_rnn.py]": "2.9 s",
    _PROGRAMS + "[nmt_attention_reverse.py]": "trains a seq2seq model with attention, 20 s",
    _PROGRAMS + "[estimator_cnn.py]": "2.5 s",
    _PROGRAMS + "[sparse_logistic_regression.py]": "trains two models, 5.5 s",
    _PROGRAMS + "[kmeans.py]": "4.5 s",
    _PROGRAMS + "[eager_mlp_gradient_tape.py]": "3.0 s (the other eager programs stay)",
    _PROGRAMS + "[slim_train.py]": "2.0 s",
    _PROGRAMS + "[word2vec.py]": "2.1 s",
    _PROGRAMS + "[mechanics101.py]": "2.0 s",
    _PROGRAMS + "[gan.py]": "1.7 s",
    "tests/fileformat/test_checkpoint.py::test_saver_killed_at_random_moments_always_leaves_a_"
    "restorable_checkpoint[": "4 kill schedules, 2-3 s each ([None] stays)",
    "tests/kernels/cpu/threads/test_omp_team.py::test_pool_records_for_training_on_the_team_give_"
    "the_one_thread_bits[False]": "4.5 s ([True] stays)",
    "tests/test_cuda_compile.py::test_every_elementwise_op_generates_compilable_kernels": "nvcc, 4 s",
    "tests/kernels/cpu/numba/test_jit_cache.py::test_second_process_loads_every_loop_from_the_cache":
        "a process compiling every loop, 3-12 s",
    "tests/fileformat/test_control_flow_files.py::test_load_and_run_in_a_fresh_process": "4.2 s",
    "tests/test_train_digits_summaries.py::": "trains, 2.8 s",
    "tests/optimizer_passes/test_pipeline.py::test_optimizing_a_large_graph_is_iterative": "2.4 s",
}
# The longest of the rest (seconds measured on a 2-core machine, load average ~1.3): what they
# cover the default run reaches through the other tests of their modules, or other parametrizations.
_LONGEST = {
    "tests/test_docs.py::test_doc_code_runs[docs/onnx.md]": "8.65 s",
    "tests/kernels/cpu/numba/test_jit_batch_norm.py::test_bits_do_not_depend_on_the_thread_count["
    "3x5x7x11-NHWC-float32-team]": "5.68 s",
    "tests/kernels/cpu/numba/test_jit_pool_tiled.py::test_tap_codes_give_the_positions_results[(3"
    ", 8, 8, 1)-float32]": "3.80 s",
    "tests/interop/tensorflow/test_tf_training_graphs.py::test_tensorflow_training_graph_trains_t"
    "o_tensorflows_numbers[cnn_bn_adam]": "3.57 s",
    "tests/test_docs.py::test_doc_code_runs[docs/tutorials/inspecting-graphs.md]": "3.05 s",
    "tests/kernels/cpu/numba/test_jit_pool.py::test_gradient_reuses_the_forward_argmaxes_from_the"
    "_second_step[((16, 28, 28, 16), (2, 2), (2, 2), 'VALID')-2]": "3.01 s",
    "tests/kernels/cpu/numba/test_jit_pool_tiled.py::test_tap_codes_give_the_positions_results[(3"
    ", 8, 8, 1)-float64]": "2.62 s",
    "tests/tf1/keras/test_keras_hdf5_format.py::test_fuzz_mutated_files_load_or_fail_clearly": "2.54 s",
    "tests/fileformat/test_load_memory.py::test_saved_files_store_the_document_uncompressed_and_l"
    "oad_by_default": "2.52 s",
    "tests/ops/test_nn_ops.py::test_small_cnn_learns_8x8_digits": "2.47 s",
    "tests/engine/test_session_threads.py::test_snapshots_taken_while_threads_train_adam_are_whol"
    "e_steps": "2.33 s",
    "tests/fileformat/test_serialization.py::test_loaded_graph_memory_is_bounded_per_op_and_by_th"
    "e_json_size": "2.28 s",
    "tests/fileformat/test_load_memory.py::test_every_hostile_file_loads_within_the_stated_multip"
    "le_of_its_document": "1.98 s",
    "tests/interop/tensorflow/test_tf_hostile.py::test_fuzzed_fixtures": "1.94 s",
    "tests/tools/test_cli_hostile.py::test_an_output_onto_the_model_or_an_input_is_refused": "1.89 s",
    "tests/kernels/cpu/numba/test_fused_jit.py::test_one_run_programs_on_the_team_give_the_one_th"
    "read_bits[4]": "1.87 s",
    "tests/test_architecture.py::test_imports_go_down_or_sideways_only": "1.87 s",
    "tests/kernels/cpu/onednn/test_dnnl_conv.py::test_onednn_conv_and_gradients_match_the_referen"
    "ce[(13, 9, 11, 8)x(3, 3, 8, 16)s(1, 1)SAMEd(1, 1)-2-weights-any]": "1.86 s",
    "tests/kernels/cpu/reference/test_fused_pool_kernels.py::test_the_masked_tiled_loop_on_severa"
    "l_threads[((4, 12, 12, 8), (2, 2), (2, 2), 'VALID')]": "1.85 s",
    "tests/kernels/cpu/numba/test_fused_jit.py::test_bias_relu_and_relu_gradient[2]": "1.80 s",
    "tests/kernels/cpu/numba/test_update_kernels.py::test_a_sessions_plan_names_the_choice": "1.80 s",
    "tests/kernels/cpu/numba/test_jit_cache.py::test_unwritable_cache_directory_compiles_in_memor"
    "y": "1.79 s",
    "tests/tools/test_cli_hostile.py::test_outputs_onto_special_files_are_refused_and_left_as_the"
    "y_are": "1.70 s",
    "tests/test_architecture.py::test_device_and_array_kernels_and_core_and_array_ops_no_longer_i"
    "mport_each_other": "1.63 s",
    "tests/test_architecture.py::test_no_import_cycles_but_the_known_ones": "1.62 s",
    "tests/kernels/cpu/numba/test_jit_pool_nchw.py::test_nchw_loops_match_the_reference[((8, 16, "
    "28, 28), (2, 2), (2, 2), 'VALID')-max-float64-1]": "1.55 s",
    "tests/engine/test_memory_plan.py::test_fused_ops_write_into_a_dead_input": "1.52 s",
    "tests/kernels/cpu/threads/test_omp_team.py::test_pool_records_for_training_on_the_team_give_"
    "the_one_thread_bits[True]": "1.50 s",
    "tests/optimizer_passes/test_fusion_filter_relu_mask.py::test_training_gives_the_same_bits_wi"
    "th_and_without_the_fusion[2]": "1.43 s",
    "tests/kernels/cpu/numba/test_update_kernels.py::test_the_runs_last_update_writes_its_variabl"
    "es_in_place[rmsprop]": "1.38 s",
    "tests/tf1/test_programs_as_written.py::test_program_runs_as_written[keras_basic_classificati"
    "on.py]": "1.25 s",
    "tests/kernels/cpu/numba/test_jit_pool.py::test_compiled_pooling_matches_the_reference_with_t"
    "ies[((16, 28, 28, 16), (2, 2), (2, 2), 'VALID')-float64-1]": "1.25 s",
    "tests/kernels/cpu/numba/test_fused_jit.py::test_one_run_programs_on_the_team_give_the_one_th"
    "read_bits[0]": "1.25 s",
    "tests/tools/test_cli_hostile.py::test_fifos_and_devices_as_inputs_are_refused_at_once": "1.19 s",
    "tests/kernels/cpu/numba/test_jit_avg_pool.py::test_compiled_avg_pooling_gives_the_reference_"
    "bits[((5, 11, 9, 5), (2, 2), (1, 1), 'VALID')-float32-1]": "1.15 s",
    "tests/tools/test_cli_hostile.py::test_text_from_a_file_reaches_the_terminal_escaped": "1.14 s",
    "tests/fileformat/test_serialization.py::test_loads_and_runs_in_a_fresh_interpreter": "1.12 s",
    "tests/kernels/cpu/numba/test_jit_batch_norm.py::test_gradient_matches_the_reference[training"
    "-3x5x7x11-NHWC-float64]": "1.10 s",
    "tests/test_docs.py::test_doc_code_runs[docs/tutorials/tensorboard-and-profiling.md]": "1.10 s",
    "tests/tools/test_cli.py::test_the_run_command_leaves_the_compiled_loops_out_unless_asked": "1.08 s",
    "tests/kernels/cpu/numba/test_batch_norm_kernels.py::test_the_loops_give_the_reference_values"
    "[FusedBatchNorm-3x5x7x11-NHWC-float64-training]": "1.07 s",
    "tests/kernels/cpu/numba/test_jit_pool.py::test_compiled_max_pool_gradient_passes_finite_diff"
    "erences": "1.06 s",
    "tests/interop/tensorflow/test_fuzz_meta_graph.py::test_mutated_meta_graphs_load_or_are_rejec"
    "ted[3]": "1.05 s",
    "tests/kernels/cpu/numba/test_update_kernels.py::test_the_runs_last_update_writes_its_variabl"
    "es_in_place[momentum]": "1.05 s",
    "tests/kernels/cpu/numba/test_update_kernels.py::test_the_runs_last_update_writes_its_variabl"
    "es_in_place[adadelta]": "1.01 s",
    "tests/kernels/cpu/numba/test_update_kernels.py::test_another_threads_reads_never_see_an_upda"
    "te_in_place_half_done": "0.97 s",
    "tests/kernels/cpu/numba/test_update_kernels.py::test_an_array_held_elsewhere_is_never_writte"
    "n_in_place[rmsprop]": "0.96 s",
    "tests/kernels/cpu/numba/test_jit_pool.py::test_gradient_reuses_the_forward_argmaxes_from_the"
    "_second_step[((16, 28, 28, 16), (2, 2), (2, 2), 'VALID')-1]": "0.94 s",
    "tests/tf1/keras/test_keras_saving.py::test_functional_model_with_shared_layer_and_bidirectio"
    "nal_gru": "0.92 s",
    "tests/kernels/cpu/numba/test_jit_pool.py::test_two_by_two_loops_keep_the_reference_rules[((3"
    ", 8, 8, 1), (2, 2), 'VALID')-float64-tap-codes]": "0.90 s",
    "tests/kernels/cpu/numba/test_jit_pool.py::test_compiled_pooling_matches_the_reference_with_t"
    "ies[((8, 15, 13, 5), (3, 3), (2, 2), 'SAME')-float32-1]": "0.89 s",
    "tests/kernels/cpu/numba/test_fused_jit.py::test_one_run_programs_on_the_team_give_the_one_th"
    "read_bits[2]": "0.88 s",
    "tests/interop/tensorflow/test_fuzz_meta_graph.py::test_mutated_saved_models_load_or_are_reje"
    "cted[2]": "0.88 s",
    "tests/kernels/cpu/numba/test_jit_conv.py::test_fused_conv2d_takes_the_loop_for_small_nhwc_re"
    "lu_or_no_activation[512-Relu-NHWC-2-True]": "0.88 s",
    "tests/kernels/cpu/numba/test_fused_jit.py::test_one_run_programs_on_the_team_give_the_one_th"
    "read_bits[3]": "0.88 s",
    "tests/fileformat/test_graph_format.py::test_inline_floats_are_bit_exact_for_any_bit_pattern":
        "1.3 s",
    "tests/tf1/keras/test_keras_layers_recurrent_more.py::test_gru_classifier_learns_the_sign_of_"
    "the_sequence_sum": "1.1 s",
    "tests/tools/test_cli_picture.py::test_all_draws_every_op_and_outputs_chooses": "0.8 s",
    "tests/fileformat/test_checkpoint_faults.py::test_saves_that_fill_a_real_tmpfs_leave_nothing_"
    "behind": "0.8 s",
    "tests/ops/test_control_flow_grad.py::test_nested_conds_build_in_linear_time_and_keep_their_"
    "second_derivative": "0.8 s",
    "tests/kernels/cpu/numba/test_jit_batch_norm.py::test_bits_do_not_depend_on_the_thread_count[":
        "5-7 s each on the team (one threaded batch norm run stays: test_jit_batch_norm's others)",
    "tests/optimizer_passes/test_fusion_conv_gradients.py::test_training_gives_the_same_numbers_"
    "with_and_without_the_fusion[False]": "2.2 s",
    "tests/engine/test_placement.py::test_optimized_plans_are_placed_too": "1.5 s",
}
SLOW.update(_LONGEST)
# What the default run keeps of the prefixes above: one quick test each, so that every area runs.
SMOKE = {
    "tests/interop/distribute/test_distribute.py::test_collective_values[2]",
    "tests/fileformat/test_checkpoint.py::test_saver_killed_at_random_moments_always_leaves_a_"
    "restorable_checkpoint[None]",
}
# CUDA kernels against the CPU on values: on the GPU, or without one on the C++ emulation of the
# kernels (~100 s); the host-side launch checks (tests/test_cuda_kernels.py) stay in the default run.
_SLOW_FIXTURE = ("tests/test_cuda_kernels_values.py::", "gpu")


def _is_slow(item):
    nodeid = item.nodeid
    if any(nodeid.startswith(prefix) for prefix in SLOW) and nodeid not in SMOKE:
        return True
    prefix, fixture = _SLOW_FIXTURE
    return nodeid.startswith(prefix) and fixture in getattr(item, "fixturenames", ())


def _run_slow(config):
    return os.environ.get("GRAPHFLOW_RUN_SLOW") == "1" or bool(config.getoption("-m"))


@pytest.fixture(scope="session")
def run_slow(request):
    """Whether this run includes the tests marked slow (for tests that leave out slow parts)."""
    return _run_slow(request.config)


@pytest.fixture(scope="session")
def fuzz_share(run_slow):
    """The share of their mutants the fuzz tests try (`tooling.sampled`): 1/16 by default, all
    of them where the tests marked slow run (CI)."""
    return 1.0 if run_slow else 1 / 16


def pytest_report_header(config):
    if not _run_slow(config):
        return "tests marked slow are deselected: GRAPHFLOW_RUN_SLOW=1 (or -m slow) runs them"
    return None


def pytest_ignore_collect(collection_path, config):
    """A slow module whose collection alone is slow is not even imported by the default run."""
    if _run_slow(config):
        return None
    rel = collection_path.as_posix()
    return True if rel.endswith("/tests/interop/onnx/test_conformance.py") else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
    keep = selection.representatives([i for i in items if i.get_closest_marker("slow") is None])
    for item in items:
        if getattr(item, "callspec", None) is not None and item.nodeid not in keep \
                and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow(reason="a further parametrization (tests/selection.py)"))
    if _run_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
