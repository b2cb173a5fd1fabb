"""The teaching notebooks: each one runs top to bottom in a real kernel (nbclient) with the
exercise solutions filled in, every self-check passes, and the numbers its prose promises
(the design docs' examples' results, the trained models' accuracy and loss) hold.

How the cells are tagged is in ``tests/notebook_runner.py``.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import notebook_runner as runner
from paddle_nb.notebook.measured import MIME as MEASURED_MIME, measured
from paddle_nb.notebook.selfcheck import SelfCheckError, answered, check, check_that

README = Path(__file__).resolve().parent.parent / "README.md"

# What each notebook promises, as predicates on the dicts its ``result`` cells display.
# The prose of the notebook states the same thresholds.
EXPECTED = {
    "01_blocks_and_scopes.ipynb": {
        "seed_ifelse_o1_true_rows": lambda v: v == [21.0, 31.0],    # x + y for x = 20, 30
        "forest_depth_during_backward": lambda v: v == 3,           # global > run > branch
        "forest_depth_after_minibatch": lambda v: v == 1,           # only global is left
    },
    "02_ifelse.ipynb": {
        "seed_cond": lambda v: v == [False, True, True],
        "seed_o1_true_rows": lambda v: v == [21.0, 31.0],          # x + y
        "seed_o2_true_rows": lambda v: v == [1.0, 1.0],            # softmax of one value
        "seed_false_row_is_fc": lambda v: v is True,               # 10 * w + b, o2 = o1 + 1
        "digits_test_accuracy": lambda v: v >= 0.94,               # prose: at least 94%
        "digits_heavy_test_rows": lambda v: v > 0,
        "digits_light_test_rows": lambda v: v > 0,
        "digits_minibatches": lambda v: v <= 300,
        "grad_heavy_nonzero": lambda v: v is True,                 # both branches learn
        "grad_light_nonzero": lambda v: v is True,
    },
    "03_rnn.ipynb": {
        "seed_rnn_o1": lambda v: v == [3.14, 6.28, 9.42],           # a = W * x
        "seed_rnn_o2": lambda v: v == [0.0, 0.3594, 0.3745],        # b = U * h_prev
        "seed_rnn_matches_numpy": lambda v: v is True,
        "bptt_scope_order": lambda v: v == [f"recurrent@2/step {t}" for t in (2, 1, 0)],
        "step_scopes_during_backward": lambda v: v == 3,            # one per time step
        "scopes_after_minibatch": lambda v: v == 0,
        "addition_final_loss": lambda v: v < 0.05,                  # prose: below 0.05
        "addition_bit_accuracy": lambda v: v >= 0.99,
        "addition_sum_accuracy": lambda v: v >= 0.99,               # prose: at least 99%
        "addition_16bit_sum_accuracy": lambda v: v >= 0.95,         # prose: at least 95%
    },
    "04_while_and_switch.ipynb": {
        "fib_10": lambda v: v == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34],
        "fib_length": lambda v: v == 10,
        "fib_loop_steps": lambda v: v == 8,                        # i = 2 .. 9
        "power_series_total": lambda v: v == sum(1.5 ** k for k in range(1, 6)),
        "while_grad_x": lambda v: abs(v - sum(k * 1.5 ** (k - 1) for k in range(1, 6))) < 1e-9,
        "closed_form_grad": lambda v: v == sum(k * 1.5 ** (k - 1) for k in range(1, 6)),
        "train_step_scopes_at_while": lambda v: v == 5,            # one per iteration
        "train_step_scopes_at_while_grad": lambda v: v == 5,       # kept for backward
        "infer_step_scopes_at_while": lambda v: v == 0,            # freed as they end
        "switch_lrs": lambda v: v == [1.0, 0.5, 0.1],              # first true case wins
        "switch_blocks_run_at_5": lambda v: v == [0, 1],
        "cond_case_switch_case_at_3": lambda v: v == [6.0, 6.0, 5.0],
        "lowered_conditional_blocks": lambda v: v == 10,           # 2 + 4 + 4
        "lowered_select_inputs": lambda v: v == 5,
    },
    "05_debugging.ipynb": {
        "n_grad_ops": lambda v: v == 8,
        "grad_links": lambda v: len(v) == 8 and all(g == f + "_grad" for g, f in v),
        "shape_error_op": lambda v: v == "matmul_v2",
        "shape_error_mentions_expected": lambda v: v is True,
        "nan_loss_is_nan": lambda v: v is True,
        "first_nan_op": lambda v: v == "log",
        "first_nan_count": lambda v: v == 1,
        "check_nan_inf_names_log": lambda v: v is True,
        "nan_run_left_params_unchanged": lambda v: v is True,
        "step_back_restores_param": lambda v: v is True,           # replayed, the same update
        "step_back_b_before_is_initial": lambda v: v is True,      # exercise 5
        "bad_value_op": lambda v: v == "log",                      # the debugger's stop
        "bad_value_index": lambda v: v == [5, 2],                  # the planted -0.7
        "bad_value_input": lambda v: v == "u",
    },
    "06_kernels_and_places.ipynb": {
        "relu_kernel_kinds": lambda v: v == ["cpu", "cuda"],
        "relu_cpu_equals_numpy": lambda v: v is True,
        "relu_cuda_equals_cpu": lambda v: v is True,
        "relu_cuda_equals_numpy": lambda v: v is True,
        "mlp_cpu_cuda_max_abs_diff": lambda v: v < 1e-5,           # same program, two places
        "mlp_cuda_rows_sum_to_one": lambda v: v is True,
        "cuda_params_on_device": lambda v: v is True,              # parameters stay there
        "magic_cuda_softmax_max_abs_diff": lambda v: v < 1e-5,     # %%paddle --place cuda
        "compiled_equals_stepped": lambda v: v is True,            # Executor.run vs steps
        "fused_op_types": lambda v: v == ["fc", "fc", "softmax"],  # pd.passes.apply
        "fused_equals_unfused": lambda v: v is True,
    },
    "07_parameters_and_saving.ipynb": {
        "namespace_parameters": lambda v: v == ["model_a/W", "model_b/W", "model_c/W"],
        "model_a_W_readers": lambda v: v == 2,                      # reuse=True
        "scope_after_run": lambda v: v == ["model_a/W", "model_b/W", "model_c/W"],
        "kid_scopes_after_run": lambda v: v == 0,
        "hidden_b_value": lambda v: v == 0.5,                       # ParamAttr's Constant
        "save_params_files": lambda v: v == ["fc_1.b_0", "fc_1.w_0", "hidden.b", "hidden.w"],
        "params_reload_max_abs_diff": lambda v: v == 0.0,
        "inference_model_files": lambda v: v == ["model.pdiparams", "model.pdmodel"],
        "inference_reload_max_abs_diff": lambda v: v == 0.0,
        "paddle_op_types": lambda v: v == ["feed", "mul", "elementwise_add", "relu", "mul",
                                           "elementwise_add", "softmax", "fetch"],
        "paddle_debugger_steps": lambda v: v == 7,                 # the fed feed op is skipped
        "paddle_prob_max_abs_diff": lambda v: v < 1e-5,            # vs PaddlePaddle's output
    },
    "08_convolution.ipynb": {
        "conv_op_types": lambda v: v == ["conv2d", "elementwise_add", "relu"],
        "im2col_shape": lambda v: v == [9, 144],                    # C*kh*kw, N*oh*ow
        "im2col_matches_conv": lambda v: v < 1e-5,                  # one product = the op
        "conv_output_preview": lambda v: v == "images",             # a heatmap per channel
        "conv_output_channels_shown": lambda v: v == 4,
        "bn_moving_mean_moved": lambda v: v is True,                # 0.1 * the batch mean
        "bn_is_test_after_clone": lambda v: v is True,
        "bn_same_answer_alone": lambda v: v is True,
        "bn_test_leaves_stats": lambda v: v is True,
        "dropout_fraction_kept": lambda v: 0.4 < v < 0.6,
        "lenet_test_accuracy": lambda v: v >= 0.98,                 # prose: at least 98%
        "lenet_seconds": lambda v: v < 60,                          # prose: under a minute
        "paddle_cnn_prob_max_abs_diff": lambda v: v < 1e-5,         # vs PaddlePaddle's output
        "paddle_cnn_op_types": lambda v: v[0] == "feed" and v[-1] == "fetch"
        and "batch_norm" in v and v.count("conv2d") == 2,
        "paddle_cnn_steps": lambda v: v == 15,                     # the fed feed op is skipped
    },
    "09_sequences_and_attention.ipynb": {
        "sparse_grad_rows": lambda v: v == [3, 7, 7, 0, 5, 0, 0, 0],   # the ids, flattened
        "sparse_grad_height": lambda v: v == 10,                       # the table's rows
        "sparse_grad_preview": lambda v: v == "selected_rows",
        "sparse_equals_dense_off_padding": lambda v: v is True,
        "dense_padding_row_grad": lambda v: v == 0.0,
        "rows_moved_sparse": lambda v: v == [0, 3, 5, 7],              # the padding row too
        "rows_moved_dense": lambda v: v == [3, 5, 7],
        "lstm_fused_vs_step_block_max_abs_diff": lambda v: v < 1e-5,  # the same numbers
        "lstm_fused_cell_steps": lambda v: v == 4,                     # one per time step
        "lstm_fused_cell_vars": lambda v: v == ["x_t", "h_prev", "c_prev", "input_gate",
                                                "forget_gate", "candidate", "output_gate",
                                                "c", "h", "live"],
        "lstm_fused_cell_scopes": lambda v: v == [f"rnn@2/layer 0 forward/step {t}"
                                                  for t in range(4)],
        "lstm_step_block_op_steps": lambda v: v == 4 * 16,             # 16 ops per step
        "lstm_gates_in_unit_interval": lambda v: v is True,
        "attention_weights_shape": lambda v: v == [1, 2, 5, 5],        # [B, heads, T, T]
        "attention_op_types": lambda v: v.count("matmul_v2") == 6 and v.count("softmax") == 1
        and "scale" in v,
        "attention_rows_sum_to_one": lambda v: v is True,
        "attention_weights_preview": lambda v: v == "images",          # a heatmap per head
        "attention_heads_shown": lambda v: v == 2,
        "reversal_sequence_accuracy": lambda v: v >= 0.95,             # prose: at least 95%
        "reversal_seconds": lambda v: v < 60,                          # prose: under a minute
        "reversal_sample": lambda v: v == [9, 5, 1, 4, 1, 3],
        "reversal_attention_on_mirror": lambda v: v >= 0.95,           # an anti-diagonal
        "reversal_weights_preview": lambda v: v == "images",
        "paddle_lstm_prob_max_abs_diff": lambda v: v < 1e-5,           # vs PaddlePaddle's output
        "paddle_lstm_op_types": lambda v: v[0] == "feed" and v[-1] == "fetch"
        and v.count("rnn") == 1,
        "paddle_lstm_steps": lambda v: v == 23,       # 16 ops (the fed feed skipped) + 7 cells
        "paddle_lstm_cell_steps": lambda v: v == 7,
        "paddle_lstm_live": lambda v: v == [[t < n for n in (7, 5, 3, 1)] for t in range(7)],
        "paddle_lstm_final_h_is_last_live_h": lambda v: v is True,
    },
    "10_distributed.ipynb": {
        "trainer_added_ops": lambda v: v == ["split_byref", "send", "send_barrier", "recv",
                                             "fetch_barrier", "concat"],
        "trainer_update_ops": lambda v: v == [],                   # the pservers update
        "fc_0_w_0_blocks": lambda v: v == [["fc_0.w_0.block0", "127.0.0.1:6171", [0, 32]],
                                           ["fc_0.w_0.block1", "127.0.0.1:6170", [32, 64]]],
        "send_epmap": lambda v: v == ["127.0.0.1:6170", "127.0.0.1:6171"] * 2
        + ["127.0.0.1:6170"],                                      # round-robin
        "pserver_0_global_ops": lambda v: v == ["listen_and_serv"],
        "pserver_0_optimize_blocks": lambda v: v == [["sum", "scale", "adam"]] * 3,
        "stopped_before": lambda v: v == "send",
        "trainer_1_waited": lambda v: v is True,                   # in recv, for the round
        "rounds_after_barrier": lambda v: v == [1, 1],             # trainer 0's was the last
        "server_vars": lambda v: "fc_0.w_0.block1" in v and "fc_0.w_0.block0" not in v
        and "fc_0.w_0_moment1_0.block1" in v,
        "local_one_step_max_abs_diff": lambda v: v < 1e-5,         # LocalCluster = one process
        "ray_max_param_diff": lambda v: v < 1e-5,                  # prose: the same parameters
        "ray_loss_curve_max_abs_diff": lambda v: v < 1e-5,
        "ray_test_accuracy": lambda v: v >= 0.9,                   # measured: 95.0%
        "ray_steps": lambda v: v == 40,
        "ray_loss_went_down": lambda v: v is True,
        "ray_shut_down": lambda v: v is True,                      # nothing left running
    },
    "11_from_programdesc_to_pir.ipynb": {
        "mlp_pir_version": lambda v: v == 4,                       # what Paddle 3.3 writes
        "mlp_pir_op_names": lambda v: v == ["p"] * 4 + ["1.data", "1.matmul", "1.add", "1.relu",
                                                        "1.matmul", "1.add", "1.softmax",
                                                        "1.fetch"],
        "mlp_op_types": lambda v: v == ["feed", "matmul_v2", "elementwise_add", "relu",
                                        "matmul_v2", "elementwise_add", "softmax", "fetch"],
        "mlp_fetched_pir_id": lambda v: v == 11,                   # 1.fetch(%11)
        "mlp_prob_max_abs_diff": lambda v: v < 1e-5,               # vs PaddlePaddle 3.3.1
        "cnn_bn_aliases": lambda v: v == {"MeanOut": "Mean", "VarianceOut": "Variance"},
        "cnn_values_without_a_variable": lambda v: v == [13, 17, 18, 23, 26, 29, 34],
        "cnn_max_abs_diff": lambda v: v < 1e-5,
        "while_block_arguments": lambda v: v == [-1, -2],          # i, acc
        "while_carried": lambda v: v == [[-1, 21], [-2, 15]],      # 2.yield(%22, %21, %15)
        "while_loop_variables": lambda v: v == {"while_0.var_0": -1, "while_0.var_1": -2},
        "while_body_op_types": lambda v: v.count("conditional_block") == 2
        and "select_input" in v and v[-3:] == ["assign"] * 3,     # the yield's three values
        "while_cond_max_abs_diff": lambda v: v < 1e-5,
        "while_acc_is_2x": lambda v: v is True,                    # +x -x/2 +x -x/2 +x
        "debugger_stops": lambda v: v == [["while@8/step 0", 0, 1.0], ["while@8/step 1", 1, 0.5],
                                          ["while@8/step 2", 2, 1.5]],
        "debugger_steps": lambda v: v == 92,                       # the fed feed ops skipped
        "upgraded_files": lambda v: v == ["model.json", "model.pdiparams"],
        "upgrade_cli_same_file": lambda v: v is True,              # the CLI = format="pir"
        "upgraded_pir_version": lambda v: v == 4,
        "upgraded_max_abs_diff": lambda v: v == 0.0,               # prose: bit for bit
    },
}
NOTEBOOKS = sorted(p.name for p in runner.NOTEBOOKS.glob("*.ipynb"))

# Cells that display a debugger which later cells drive on, and what each output must show.
# A saved notebook stores each widget's *last* state, so a live view displayed at the first
# stop would say "finished" beside prose about that stop: such a cell shows a snapshot.
# Each predicate gets the displayed DebuggerControls' state and the ScopeView's model.
DEBUGGER_OUTPUTS = {
    "02_ifelse.ipynb": {
        "02-13": lambda c, scopes: (c["still"] and c["state"] == "paused"      # true branch
                                    and c["frames"][-1]["scope_name"].endswith("/branch")),
        "02-21": lambda c, scopes: not c["still"] and c["state"] == "finished",
        "02-29": lambda c, scopes: (c["still"] and c["state"] == "paused"
                                    and c["frames"][-1]["scope_name"].endswith("/branch")),
        "02-35": lambda c, scopes: not c["still"] and c["state"] == "finished",
    },
    "05_debugging.ipynb": {
        "05-56": lambda c, scopes: (not c["still"] and c["state"] == "paused"    # at the log
                                    and "log" in c["status"] and c["can_step_back"]
                                    and c["alert"].startswith("first NaN/Inf")),
    },
    "10_distributed.ipynb": {
        "10-20": lambda c, scopes: (c["still"] and c["state"] == "paused"      # before send
                                    and "split_byref" in c["status"]),
        "10-26": lambda c, scopes: not c["still"] and c["state"] == "finished",  # the live one
    },
    "11_from_programdesc_to_pir.ipynb": {
        "11-39": lambda c, scopes: (not c["still"] and c["state"] == "paused"   # the third pass
                                    and "select_input" in c["status"]
                                    and c["frames"][-1]["scope_name"] == "while@8/step 2"),
    },
    "03_rnn.ipynb": {
        "03-07": lambda c, scopes: (c["still"] and c["state"] == "paused"
                                    and "sigmoid" in c["status"]
                                    and c["frames"][-1]["scope_name"].endswith("/step 0")
                                    and _current_var(scopes, "sequence_0")["user_name"] == "x"),
        "03-11": lambda c, scopes: (c["still"] and "sigmoid" in c["status"]      # time step 2
                                    and c["frames"][-1]["scope_name"].endswith("/step 0")
                                    and _current_var(scopes, "rnn_0.mem_0")["user_name"]
                                    == "h, h_prev"),
        "03-16": lambda c, scopes: not c["still"] and c["state"] == "finished",  # the live one
    },
}


def _displayed_widgets(cell, models) -> list[dict]:
    """The states of every widget model a cell's outputs display, children included."""
    ids = [o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
           for o in cell.get("outputs", [])
           if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    states = []
    while ids:
        state = models[ids.pop()]["state"]
        states.append(state)
        ids += [c[len("IPY_MODEL_"):] for c in state.get("children", [])]
    return states


def _current_var(scope_model, name) -> dict:
    """Variable ``name`` in the scope the debugger's last step ran in."""
    stack = [scope_model["root"]]
    while stack:
        node = stack.pop()
        if node["id"] == scope_model["current"]:
            return next(v for v in node["vars"] if v["name"] == name)
        stack += node["children"]
    raise AssertionError(f"no current scope in the model: {scope_model['current']!r}")


def _check_displayed_debuggers(name, cells, models) -> None:
    checked = set()
    for cell in cells:
        key = cell.get("id", "").rsplit("-", 1)[0]          # the runner appends "-<index>"
        check = DEBUGGER_OUTPUTS.get(name, {}).get(key)
        if check is None or cell.cell_type != "code":
            continue
        checked.add(key)
        states = _displayed_widgets(cell, models)
        controls = next((s for s in states if "frames" in s and "still" in s), None)
        scopes = next((s["model"] for s in states if "root" in s.get("model", {})), None)
        assert controls is not None and scopes is not None, \
            f"{name}: cell {cell.id} shows no debugger"
        assert check(controls, scopes), \
            f"{name}: cell {cell.id} shows {controls['state']}: {controls['status']}"
    assert checked == set(DEBUGGER_OUTPUTS.get(name, {})), f"{name}: cells not found"


def _load(name):
    return nbformat.read(runner.NOTEBOOKS / name, as_version=4)


def test_the_course_is_eleven_numbered_notebooks():
    assert [n[:3] for n in NOTEBOOKS] == [f"{i:02d}_" for i in range(1, 12)], NOTEBOOKS
    assert set(EXPECTED) == set(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs(name):
    nb = _load(name)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
    assert "widgets" not in nb.metadata


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_each_exercise_has_a_placeholder_a_self_check_and_a_solution(name):
    nb = _load(name)
    pairs = runner.exercises(nb)
    assert len(pairs) >= 2, f"{name}: a notebook teaches with at least two exercises"
    for ex, sol in pairs:
        assert "..." in nb.cells[ex].source, f"{name} cell {ex}: no ... for the answer"
        after = nb.cells[ex + 1]
        assert "self-check" in runner.tags(after) and "check" in after.source, \
            f"{name} cell {ex}: the cell after an exercise must be its self-check"
        assert runner.solution_code(nb.cells[sol]).strip()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_measured_numbers_are_shown_under_a_caption(name):
    """A student sees what a result cell's numbers are: each ends in measured("caption",
    {...}), never a bare dict."""
    nb = nbformat.read(runner.NOTEBOOKS / name, as_version=4)
    for cell in nb.cells:
        if "result" not in runner.tags(cell):
            continue
        last = ast.parse(cell.source).body[-1]
        assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
            getattr(last.value.func, "id", None) == "measured", \
            f"{name} cell {cell.get('id')}: end with measured(caption, {{...}})"
        caption = last.value.args[0]
        assert isinstance(caption, ast.Constant) and len(caption.value.split()) >= 4, \
            f"{name} cell {cell.get('id')}: the caption should say what the numbers are"


def test_measured_shows_a_captioned_table_and_keeps_the_values_for_the_tests():
    shown = measured("The digits model after training",
                     {"test_accuracy": np.float32(0.96), "rows": np.arange(2)})
    html = shown._repr_html_()
    assert "The digits model after training" in html and "test accuracy" in html
    assert repr(shown).splitlines()[0] == "The digits model after training:"
    assert shown._repr_mimebundle_()[MEASURED_MIME] == {"test_accuracy": pytest.approx(0.96),
                                                        "rows": [0, 1]}


def test_readme_links_every_notebook():
    text = README.read_text()
    for name in NOTEBOOKS:
        assert f"(notebooks/{name})" in text, f"README does not link {name}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_run_all_unanswered_then_answered_keeps_its_promises(name):
    """Two Run Alls in one kernel, as a student does them. The first, with the exercises
    unanswered, still reaches the end (a placeholder is not an error) and no exercise's
    self-check passes on its placeholder. The second, with the answers typed in, keeps every
    promise: results, ticks, debuggers; being a second run it also shows that nothing in
    the notebook works only once (a generated name typed in, a state left behind)."""
    executed, seconds = runner.execute(runner.NOTEBOOKS / name, ("as-is", "solved"))
    print(f"{name}: {seconds:.1f} s")
    unanswered, answered_run = runner.pass_cells(executed, 2)
    exercise_checks = {ex + 1 for ex, _ in runner.exercises(_load(name))}
    for i in exercise_checks:
        text = _printed(unanswered[i])
        assert "not answered yet" in text and "\u2714" not in text, \
            f"{name}: the self-check at cell {i} passed without an answer: {text}"
    got = runner.results(answered_run)
    _check_displayed_debuggers(name, answered_run, runner.widget_models(executed))
    for key, ok in EXPECTED[name].items():
        assert key in got, f"{name}: no result {key!r} (results: {sorted(got)})"
        assert ok(got[key]), f"{name}: {key} = {got[key]!r}"
    for cell in answered_run:
        if "self-check" in runner.tags(cell):
            assert "\u2714" in _printed(cell), \
                f"{name}: self-check printed no tick: {cell.source[:80]}"
    # nbclient stored the widget state, so the saved notebook shows its widgets
    models = runner.widget_models(executed)
    uses_widgets = any(re.search(r"pd\.(show|ScopeView|DebuggerView|TrainingView)|--step|"
                                 r"--show (tree|graph|scope)", c.source)
                       for c in executed.cells if c.cell_type == "code")
    if uses_widgets:
        names = {m["model_name"] for m in models.values()}
        assert "AnyModel" in names, f"{name}: no anywidget state stored ({names})"


def _printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_self_checks_wait_for_an_answer_and_reject_wrong_ones(capsys):
    # a placeholder is not an error (Run All goes on), and it is not a pass
    check("ops", ..., 3)
    check("ops", [1, ...], [1, 2])
    check_that("loss is small", ...)
    assert capsys.readouterr().out.count("not answered yet") == 3
    assert not answered(1, ...) and answered(1, [2, 3])
    with pytest.raises(SelfCheckError, match="Hint: count them"):
        check("ops", 4, 3, hint="count them")
    with pytest.raises(SelfCheckError):
        check("shape", [[1.0, 2.0]], [1.0, 2.0])          # same values, other shape
    with pytest.raises(SelfCheckError):
        check_that("loss is small", False)
    check("names", ["b", "a"], {"a", "b"})                 # a set ignores order
    check("value", 0.31400001, 0.314)                      # floats within tolerance
    check_that("loss is small", True)
    assert capsys.readouterr().out.count("\u2714") == 3
    # shown short in IPython, without a traceback through this module
    assert SelfCheckError("x: not yet")._render_traceback_() == ["\u2718 x: not yet"]
