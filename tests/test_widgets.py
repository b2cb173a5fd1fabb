"""The notebook widgets, from Python only: what each widget's traitlets hold is what the
program, the scopes and the debugger dictate (the browser just draws it)."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import paddle_nb as pd
from models import tanh_rnn
from paddle_nb.core.printer import op_line
from paddle_nb.notebook import program_model as pm
from paddle_nb.interactive.debugger import Debugger
from paddle_nb.notebook.program_model import (forward_links, program_dot, program_graph_text,
                                              program_model, program_svg)
from paddle_nb.notebook.scope_model import find_scope_node, find_var, scope_model
from paddle_nb.interactive.user_names import shown_name, user_name, user_names_of
from paddle_nb.notebook.widgets import (DebuggerControls, DebuggerView, ProgramView, ScopeView,
                                        TrainingView, views_dir, show, wants_log_scale)


# --- programs ---------------------------------------------------------------------------
def _mlp(train=True):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 7
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 4])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, 8, act="relu")                       # MLP_FC_LINE
        logits = pd.layer.fc(h, 3)
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
        if train:
            pd.optimizer.SGD(0.1).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {"x": rng.standard_normal((5, 4)).astype(np.float32),
            "label": rng.integers(0, 3, (5, 1)).astype(np.int64)}
    return main, startup, loss, feed


def _rnn(train=False):
    T, B, D, H = 3, 2, 3, 4
    main, startup, hs = tanh_rnn(T, B, D, H, seed=3)
    with pd.program_guard(main, startup):
        loss = pd.mean(hs * hs)
        if train:
            pd.optimizer.SGD(0.01).minimize(loss)
    feed = {"x": np.random.default_rng(1).standard_normal((T, B, D)).astype(np.float32)}
    return main, startup, loss, feed


def _ifelse():
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 5
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 3])
        x.stop_gradient = False
        cond = pd.layers.reduce_sum(x, dim=1, keep_dim=True) > 0.0
        ie = pd.ifelse()
        with ie.true_block():
            ie.output(pd.tanh(pd.layer.fc(x, 2, param_attr="w_true", bias_attr=False)))
        with ie.false_block():
            ie.output(pd.layer.fc(x, 2, param_attr="w_false", bias_attr=False) * 2.0)
        out, = ie(cond)
        loss = pd.mean(out * out)
        pd.append_backward(loss)
    feed = {"x": np.float32([[1.0, 0.2, -0.3], [-1.0, -0.5, 0.1], [0.3, 0.3, 0.3]])}
    return main, startup, loss, feed


CNN = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "paddle_cnn"


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line and "def " not in line)


# --- program_model ----------------------------------------------------------------------
def test_program_model_of_an_mlp_lists_vars_ops_docs_and_creating_lines():
    main, _, loss, _ = _mlp(train=False)
    m = program_model(main)
    json.dumps(m, allow_nan=False)                       # what the page receives
    assert m["num_blocks"] == 1 and m["blocks"][0]["owner"] is None
    b0 = m["blocks"][0]
    assert [o["text"] for o in b0["ops"]] == [op_line(op.desc) for op in main.global_block().ops]
    assert [o["id"] for o in b0["ops"]] == [f"b0:{i}" for i in range(len(b0["ops"]))]
    mul = b0["ops"][0]
    assert mul["type"] == "mul" and mul["inputs"] == {"X": ["x"], "Y": ["fc_0.w_0"]}
    assert mul["attrs"] == {"x_num_col_dims": "1", "y_num_col_dims": "1"}
    assert mul["role"] == "forward" and mul["forward_op"] is None
    # the page shows the comment once, at the top, and the OpProto's slots, attributes,
    # kernels and gradient under it (the whole doc() repeated the comment)
    op_def = pd.core.registry.lookup("mul")
    assert mul["comment"] == op_def.comment and mul["comment"] not in mul["doc"]
    assert mul["doc"].startswith("Inputs:") and op_def.doc().endswith(mul["doc"])
    assert __file__ in mul["created_at"] and mul["created_note"] is None
    assert f"line {_line_of('MLP_FC_LINE')}" in mul["created_at"]
    assert m["source"] is None
    w = {v["name"]: v for v in b0["vars"]}["fc_0.w_0"]
    assert w == {**w, "shape": [4, 8], "dtype": "float32", "kind": "tensor",
                 "persistable": True, "is_parameter": True}
    assert {v["name"]: v for v in b0["vars"]}["x"]["shape"] == [-1, 4]


def test_ops_without_a_creating_line_say_where_the_program_came_from():
    """A model PaddlePaddle saved records no line for most ops: the detail pane said
    "(not recorded)"; it says where the program was loaded from (the .pdmodel tab gives
    ProgramView its file name), or that the op carries no op_callstack."""
    with open(CNN / "cnn_infer.pdmodel", "rb") as f:
        program = pd.Program.from_bytes(f.read())
    conv = program_model(program, source="cnn_infer.pdmodel")["blocks"][0]["ops"][1]
    assert conv["type"] == "conv2d" and conv["created_at"] is None
    assert conv["created_note"] == ("not recorded: loaded from cnn_infer.pdmodel, which "
                                    "records no source line for this op")
    view = ProgramView(program, graph=False, source="cnn_infer.pdmodel")
    assert view.model["source"] == "cnn_infer.pdmodel"
    assert view.model["blocks"][0]["ops"][1]["created_note"] == conv["created_note"]
    plain = program_model(program)["blocks"][0]["ops"][1]
    assert plain["created_note"] == ("not recorded: this op carries no op_callstack (the "
                                     "line that built it)")


def test_grad_ops_link_to_the_forward_op_they_differentiate():
    main, _, loss, _ = _mlp(train=True)
    ops = program_model(main)["blocks"][0]["ops"]
    grads = [o for o in ops if o["type"].endswith("_grad")]
    assert len(grads) >= 6
    dbg = Debugger(main, feed=_mlp()[3])
    block = main.global_block()
    for g in grads:
        fwd = g["forward_op"]
        assert g["role"] == "backward" and fwd is not None, g["text"]
        assert ops[fwd["index"]]["type"] + "_grad" == g["type"]
        assert fwd["index"] < g["index"]
        # the debugger, which finds it by names, agrees
        assert dbg.forward_op_of(block.ops[g["index"]]).idx == fwd["index"]
    assert {o["role"] for o in ops} == {"forward", "backward", "optimize"}
    assert all(o["forward_op"] is None for o in ops if o["role"] != "backward")
    # the two fc's mul ops are told apart (the later one is differentiated first)
    muls = [g["forward_op"]["index"] for g in grads if g["type"] == "mul_grad"]
    assert sorted(muls) == [i for i, o in enumerate(ops) if o["type"] == "mul"]


def test_program_model_of_an_rnn_nests_the_step_block_and_its_gradient_block():
    main, _, _, _ = _rnn(train=True)
    m = program_model(main)
    json.dumps(m, allow_nan=False)
    ops0 = m["blocks"][0]["ops"]
    rec = next(o for o in ops0 if o["type"] == "recurrent")
    rec_grad = next(o for o in ops0 if o["type"] == "recurrent_grad")
    step, grad_block = m["blocks"][rec["sub_blocks"][0]], m["blocks"][rec_grad["sub_blocks"][0]]
    assert step["parent_idx"] == 0 and step["owner"]["id"] == rec["id"]
    assert step["path"] == f"block 0 > recurrent@{rec['index']} (block {step['idx']})"
    assert {v["name"]: v["shape"] for v in step["vars"]}["x"] == [2, 3]     # x[t]
    assert grad_block["forward_block_idx"] == step["idx"]
    assert rec_grad["forward_op"]["id"] == rec["id"]
    # each grad op of the gradient block points into the step block, at an op of its type
    for g in grad_block["ops"]:
        if g["type"].endswith("_grad"):
            f = g["forward_op"]
            assert f["block"] == step["idx"], g["text"]
            assert step["ops"][f["index"]]["type"] + "_grad" == g["type"]
    linked = [g["forward_op"]["index"] for g in grad_block["ops"] if g["forward_op"]]
    assert len(linked) == len(set(linked))          # no forward op is claimed twice


def test_program_model_of_an_ifelse_has_one_block_per_branch():
    main, _, _, _ = _ifelse()
    m = program_model(main)
    owners = [o for o in m["blocks"][0]["ops"] if o["type"] == "conditional_block"]
    assert len(owners) == 2
    for o in owners:
        (sub,) = o["sub_blocks"]
        b = m["blocks"][sub]
        assert b["parent_idx"] == 0 and b["owner"]["id"] == o["id"]
        assert b["ops"] and all(op["block"] == sub for op in b["ops"])
    grad_blocks = [b for b in m["blocks"] if b["forward_block_idx"] >= 0]
    assert len(grad_blocks) == 2
    for gb in grad_blocks:
        fwd_types = {m["blocks"][gb["forward_block_idx"]]["ops"][g["forward_op"]["index"]]["type"]
                     for g in gb["ops"] if g["forward_op"]}
        assert fwd_types and all(g["forward_op"]["block"] == gb["forward_block_idx"]
                                 for g in gb["ops"] if g["forward_op"])


def test_forward_links_pair_repeated_writers_in_reverse_order():
    x = pd.data("x", [None, 2])
    x.stop_gradient = False
    y = pd.tanh(pd.tanh(x))
    pd.append_backward(pd.mean(y))
    links = forward_links(pd.default_main_program())
    ops = pd.default_main_program().global_block().ops
    tanh_grads = [i for i, op in enumerate(ops) if op.type == "tanh_grad"]
    assert [links[(0, i)][1] for i in tanh_grads] == [1, 0]


# --- the graph ------------------------------------------------------------------------
def test_program_dot_has_every_op_and_a_cluster_per_block():
    main, _, _, _ = _rnn(train=True)
    dot = program_dot(main)
    for b in main.blocks:
        assert f"subgraph cluster_b{b.idx} {{" in dot
        for i, op in enumerate(b.ops):
            assert f'"op_b{b.idx}_{i}" [shape=box' in dot and f'label="{i}: {op.type}"' in dot
    assert '"v1_x"' in dot and '"v0_x"' in dot          # the step's x[t] and the sequence
    assert 'label="runs"' in dot


def test_program_svg_renders_with_dot_and_falls_back_to_text(monkeypatch):
    main, _, _, _ = _mlp()
    svg = program_svg(main)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert 'id="b0:0"' in svg and "softmax_with_cross_entropy" in svg
    text = program_graph_text(main)
    for i, op in enumerate(main.global_block().ops):
        assert f"op {i:>2} {op.type}: " in text
    assert "op  0 mul: x, fc_0.w_0 -> fc_0.tmp_0" in text
    monkeypatch.setattr(pm.shutil, "which", lambda name: None)
    assert program_svg(main) is None
    view = ProgramView(main)
    assert view.svg == "" and view.graph_text == text


# --- scope_model ----------------------------------------------------------------------
def test_scope_model_stats_previews_and_kinds():
    s = pd.Scope()
    big = np.arange(40 * 50, dtype=np.float32).reshape(40, 50)
    s.var("m").set(big)
    s.var("v").set(np.linspace(0, 1, 100))
    s.var("col").set(np.array([[1.0], [np.nan], [3.0]]))
    s.var("one").set(np.float32([2.5]))
    s.var("n").set(7)
    s.var("empty")
    kid = s.new_scope("kid")
    kid.var("arr").set([np.ones(3, np.float32), np.zeros((2, 2), np.float32)])
    kid.var("steps").set([kid.new_scope("a"), kid.new_scope("b")], kind="scopes")
    model = scope_model(s, max_preview=16)
    json.dumps(model, allow_nan=False)
    root = model["root"]
    assert root["name"] == "global" and [k["name"] for k in root["children"]] == ["kid"]
    assert model["num_scopes"] == 4
    m = find_var(root, "m")
    assert (m["kind"], m["shape"], m["dtype"]) == ("tensor", [40, 50], "float32")
    assert m["stats"] == {"min": 0.0, "max": 1999.0, "mean": 999.5, "nan": 0, "inf": 0}
    hm = m["preview"]
    assert hm["type"] == "heatmap" and (hm["rows"], hm["cols"]) == (40, 50)
    assert len(hm["data"]) == 16 and len(hm["data"][0]) == 16
    assert hm["data"][0][0] == pytest.approx(big[:2, :3].mean())     # block means
    v = find_var(root, "v")["preview"]
    assert v["type"] == "sparkline" and len(v["data"]) == 64 and v["length"] == 100
    col = find_var(root, "col")
    assert col["stats"]["nan"] == 1 and col["stats"]["max"] == 3.0
    assert col["preview"] == {"type": "sparkline", "data": [1.0, None, 3.0], "length": 3}
    assert find_var(root, "one")["preview"] == {"type": "scalar", "value": 2.5}
    assert find_var(root, "n")["preview"] == {"type": "scalar", "value": 7.0}
    assert find_var(root, "empty")["kind"] == "empty"
    k = root["children"][0]
    arr = find_var(k, "arr")
    assert arr["kind"] == "tensor_array" and arr["preview"]["length"] == 2
    assert [i["shape"] for i in arr["preview"]["items"]] == [[3], [2, 2]]
    steps = find_var(k, "steps")
    assert steps["kind"] == "scopes" and steps["preview"]["names"] == ["a", "b"]


def test_a_batch_of_images_previews_as_one_heatmap_per_channel():
    """A convolution's [N, C, H, W] feature maps: the first image's channels (at most
    eight), each shrunk like a heatmap; the page draws them side by side."""
    s = pd.Scope()
    maps = np.arange(2 * 10 * 6 * 40, dtype=np.float32).reshape(2, 10, 6, 40)
    s.var("features").set(maps)
    s.var("thin").set(np.ones((2, 3, 2, 2), np.float32))          # too small: a heatmap
    root = scope_model(s, max_preview=16)["root"]
    p = find_var(root, "features")["preview"]
    assert (p["type"], p["channels"], p["rows"], p["cols"]) == ("images", 10, 6, 40)
    assert len(p["maps"]) == 8 and len(p["maps"][0]) == 6 and len(p["maps"][0][0]) == 16
    assert p["maps"][1][0][0] == pytest.approx(maps[0, 1, 0, :2].mean())     # block means
    assert find_var(root, "thin")["preview"]["type"] == "heatmap"


def test_scope_model_flags_changed_names_where_they_resolve_from_the_current_scope():
    s = pd.Scope()
    s.var("x").set(np.ones(3))
    s.var("w").set(np.ones(3))
    step = s.new_scope("step 0")
    step.var("x").set(np.zeros(3))               # shadows the outer x
    model = scope_model(s, changed=["x", "w"], current=step)
    root, kid = model["root"], model["root"]["children"][0]
    assert model["current"] == kid["id"] == "0/0" and kid["current"] and not root["current"]
    assert find_var(kid, "x")["changed"] and not find_var(root, "x")["changed"]
    assert find_var(root, "w")["changed"]
    by_name = scope_model(s, changed=["x"])["root"]       # no current scope: by name
    assert find_var(by_name, "x")["changed"] and find_var(by_name["children"][0], "x")["changed"]


# --- the widgets ---------------------------------------------------------------------------
def test_extension_modules_are_found_and_loaded():
    folder = views_dir()
    assert folder is not None and (folder / "widgets.css").is_file()
    shared = (folder / "dom.js").read_text()
    for cls, name in ((ProgramView, "program_view.js"), (ScopeView, "scope_view.js"),
                      (TrainingView, "training_view.js"), (DebuggerControls, "debugger_view.js")):
        module = str(cls._esm)
        assert module == shared + "\n" + (folder / name).read_text()
        assert "export default" in module
        # the element builders are written once, in dom.js
        assert "function h(" not in (folder / name).read_text()
        assert "function s(" not in (folder / name).read_text()


def test_each_view_module_is_valid_javascript_with_the_shared_builders(tmp_path):
    """node --check parses each module as anywidget gets it (dom.js in front)."""
    import shutil   # noqa: PLC0415
    import subprocess   # noqa: PLC0415
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed here (it is not a dependency); the browser "
                    "tests load the same modules in Chromium instead")
    for cls in (ProgramView, ScopeView, TrainingView, DebuggerControls):
        path = tmp_path / f"{cls.__name__}.mjs"
        path.write_text(str(cls._esm))
        done = subprocess.run([node, "--check", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, (cls.__name__, done.stderr[-1500:])


def test_program_view_holds_the_program_model_and_refreshes():
    main, _, loss, _ = _mlp(train=False)
    view = show(main)
    assert isinstance(view, ProgramView)
    assert view.model == program_model(main) and view.svg.startswith("<svg")
    assert view.highlight == [] and view.selected == [] and not view.debug
    view.select(0, 2)
    assert view.selected_op["type"] == main.global_block().ops[2].type
    n = view.model["num_ops"]
    with pd.program_guard(main):
        pd.append_backward(loss)
    view.refresh()
    assert view.model["num_ops"] > n and view.model == program_model(main)
    assert "mul_grad" in view.svg


def test_scope_view_holds_the_scope_model():
    s = pd.Scope()
    s.var("a").set(np.arange(6, dtype=np.float32).reshape(2, 3))
    view = ScopeView(s)
    assert view.model == scope_model(s)
    s.var("b").set(np.ones(4))
    view.refresh(changed=["b"])
    b = find_var(view.model["root"], "b")
    assert b["changed"] and b["preview"]["type"] == "sparkline"
    assert not find_var(view.model["root"], "a")["changed"]


def test_training_view_appends_points():
    view = TrainingView()
    for step, loss in enumerate([2.0, 1.5, np.float32(1.0), np.array([0.5]), float("nan")]):
        view.append(step, loss)
    assert view.steps == [0, 1, 2, 3, 4]
    assert view.losses == [2.0, 1.5, 1.0, 0.5, None]
    view.clear()
    assert view.steps == [] and view.losses == []


def test_log_scale_is_wanted_when_positive_losses_span_more_than_a_hundredfold():
    assert not wants_log_scale([]) and not wants_log_scale([5.0])
    assert not wants_log_scale([2.3, 1.0, 0.5, 0.1])            # 23x: linear reads fine
    assert wants_log_scale([2.3, 0.5, 0.05, 0.01])              # 230x: the tail is flat
    assert wants_log_scale([2.3, None, 0.01])                   # a NaN is not a loss
    assert not wants_log_scale([2.3, 0.01, 0.0])                # log of 0: impossible
    assert not wants_log_scale([5.0, -1.0, 0.01])               # a negative "loss"


def test_training_view_switches_to_a_log_axis_when_the_loss_spans_decades():
    view = TrainingView()
    assert view.scale == "auto" and not view.log_y
    for step, loss in enumerate([2.3, 1.0, 0.5, 0.1]):
        view.append(step, loss)
    assert not view.log_y
    view.append(4, 0.01)
    assert view.log_y                                           # 230x
    view.scale = "linear"                                       # the page's button
    assert not view.log_y
    view.append(5, 0.001)
    assert not view.log_y                                       # a choice sticks
    view.scale = "auto"
    assert view.log_y
    view.clear()
    assert not view.log_y
    assert TrainingView(log_y=True).scale == "log" and TrainingView(log_y=True).log_y
    assert TrainingView(log_y=False).scale == "linear"


def test_training_view_module_keeps_the_last_x_label_inside_and_draws_log_ticks():
    js = (views_dir() / "training_view.js").read_text()
    assert '"text-anchor": over ? "end" : "middle"' in js     # see the browser screenshot
    assert "logTicks(y0, y1)" in js and "pd-scale-toggle" in js


# --- DebuggerView ---------------------------------------------------------------------------
def _send(view, widget, content):
    """A message as the page sends it (through ipywidgets' custom-message path)."""
    widget._handle_custom_msg(content, [])


def test_debugger_view_steps_an_mlp_and_shows_the_current_op_and_values():
    main, startup, loss, feed = _mlp(train=True)
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[loss], startup=startup)
    assert view.highlight == [] and view.controls.state == "ready"
    ops = main.global_block().ops
    assert view.next_op == [0, 0] and view.status == "ready — next: block 0 > op 0 mul " \
                                                     "(press Step)"
    for n in range(1, 5):
        _send(view, view.controls, {"cmd": "step"})
        d = view.debugger
        # the op that ran is marked apart; the current line is the op the next Step runs
        assert view.highlight == [0, n - 1] == list(d.location())
        assert view.next_op == [0, n]
        assert view.status == (f"ran block 0 > op {n - 1} {ops[n - 1].type} (step {n}) — "
                               f"next: block 0 > op {n} {ops[n].type}")
        assert view.frames == d.frame_stack() and len(view.frames) == 1
        model = view.scope_view.model
        run = find_scope_node(model, "run")
        assert model["current"] == run["id"]
        changed = [v["name"] for v in run["vars"] if v["changed"]]
        assert changed == d.changed == ops[n - 1].output_arg_names
        for name in changed:          # the preview shows the value the op just wrote
            value = d.current.scope.find_var(name).get()
            assert find_var(run, name)["shape"] == list(value.shape)
    h = find_var(find_scope_node(view.scope_view.model, "run"), "fc_0.tmp_2")   # relu output
    assert h["stats"]["min"] >= 0.0
    params = find_scope_node(view.scope_view.model, "global")
    assert find_var(params, "fc_0.w_0")["shape"] == [4, 8]


def test_debugger_view_steps_into_an_rnn_time_step():
    main, startup, loss, feed = _rnn()
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[loss], startup=startup)
    rec = next(i for i, op in enumerate(main.global_block().ops) if op.type == "recurrent")
    view.handle_message({"cmd": "run_to", "block": 0, "index": rec - 1})
    assert view.next_op == [0, rec]                       # it starts before its block
    view.handle_message({"cmd": "step"})                  # into step 0 of the step block
    assert view.highlight == [1, 0] and view.next_op == [1, 1]
    assert [f["block_idx"] for f in view.frames] == [0, 1]
    assert view.frames[1]["owner_type"] == "recurrent"
    assert view.frames[1]["scope_name"] == f"recurrent@{rec}/step 0"
    assert view.program_view.running == [f"b0:{rec}"]
    model = view.scope_view.model
    step = find_scope_node(model, f"recurrent@{rec}/step 0")
    assert model["current"] == step["id"] and step["current"]
    x_t = find_var(step, "x")                             # the step's x is x[0]
    assert x_t["shape"] == [2, 3]
    np.testing.assert_allclose(x_t["preview"]["data"], feed["x"][0], rtol=1e-5)
    outer = find_var(find_scope_node(model, "run"), "x")
    assert outer["shape"] == [3, 2, 3] and not outer["changed"]
    for _ in range(len(main.block(1).ops) - 1):          # to the block's last op: next,
        view.handle_message({"cmd": "step"})             # the op that runs the block
    assert view.next_op == [0, rec] and view.status.endswith(
        f"next: back to block 0 > op {rec} recurrent, which runs block 1")
    view.handle_message({"cmd": "step"})                 # on into step 1
    step1 = find_scope_node(view.scope_view.model, f"recurrent@{rec}/step 1")
    np.testing.assert_allclose(find_var(step1, "x")["preview"]["data"], feed["x"][1],
                               rtol=1e-5)
    view.handle_message({"cmd": "step_out"})              # the recurrent op itself
    assert view.highlight == [0, rec] and len(view.frames) == 1
    assert view.next_op == [0, rec + 1]
    assert view.program_view.running == []


def test_breakpoints_toggle_from_the_gutter_and_stop_continue():
    main, startup, loss, feed = _mlp(train=True)
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[loss], startup=startup)
    _send(view, view.program_view, {"cmd": "toggle_breakpoint", "block": 0, "index": 5})
    _send(view, view.program_view, {"cmd": "toggle_breakpoint", "block": 0, "index": 7})
    _send(view, view.program_view, {"cmd": "toggle_breakpoint", "block": 0, "index": 7})
    assert view.program_view.breakpoints == [[0, 5]] and view.debugger.breakpoints == {(0, 5)}
    _send(view, view.controls, {"cmd": "continue"})
    assert view.highlight == [0, 5] and view.controls.state == "paused"
    _send(view, view.controls, {"cmd": "select_frame", "index": 0})
    assert view.program_view.selected == [0, 5]
    _send(view, view.controls, {"cmd": "restart"})
    assert view.highlight == [] and view.controls.state == "ready"
    assert view.program_view.breakpoints == [[0, 5]]


@pytest.mark.parametrize("make", [_mlp, _rnn, _ifelse], ids=["mlp", "rnn", "ifelse"])
def test_stepping_a_whole_program_through_the_view_matches_executor_run(make):
    main, startup, loss, feed = make()
    want_scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=want_scope)
    want, = exe.run(main, feed=feed, fetch_list=[loss], scope=want_scope)
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[loss], startup=startup)
    steps = 0
    while view.controls.state != "finished":
        coming = view.next_op
        view.handle_message({"cmd": "step"})
        steps += 1
        assert steps < 10_000
        # what the view called next is what ran: that op, or an op inside the block it
        # runs (a control-flow op starts first; the last op of a block hands back to it)
        assert view.highlight in ([], coming) or \
            f"b{coming[0]}:{coming[1]}" in view.program_view.running, (coming, view.status)
    got, = view.debugger.results
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert view.status == f"finished — {steps - 1} steps"   # the last press found the end
    assert view.highlight == [] and view.next_op == [] and view.frames == []
    assert view.controls.results[0]["name"] == loss.name
    # parameters the SGD ops updated are what a plain run left behind
    for p in main.all_parameters():
        np.testing.assert_allclose(view.debugger.scope.find_var(p.name).get(),
                                   want_scope.find_var(p.name).get(), rtol=1e-6)


def _paddle_model(folder: str, name: str, data: str):
    """A model PaddlePaddle saved (notebooks/data), its parameters and its input."""
    folder = CNN.parent / folder
    scope = pd.Scope()
    program, feeds, fetches = pd.io.load_inference_model(
        str(folder), pd.Executor(), model_filename=f"{name}.pdmodel",
        params_filename=f"{name}.pdiparams", scope=scope)
    return program, {feeds[0]: np.load(folder / data)}, fetches, scope


def test_the_next_op_skips_the_ops_a_feed_replaces_and_stays_on_a_fused_op():
    """A saved model's feed op does not run when its output is fed: the first op the view
    calls next is the conv2d after it. The rnn op steps one cell at a time: while it does,
    the op that runs next is the rnn op itself."""
    program, feed, fetches, scope = _paddle_model("paddle_cnn", "cnn_infer", "image.npy")
    assert program.global_block().ops[0].type == "feed"
    view = DebuggerView.from_program(program, feed=feed, fetch_list=fetches, scope=scope)
    assert view.next_op == [0, 1] and "next: block 0 > op 1 conv2d" in view.status
    view.handle_message({"cmd": "step"})
    assert view.highlight == [0, 1] and view.next_op == [0, 2]
    program, feed, fetches, scope = _paddle_model("paddle_lstm", "lstm_infer", "ids.npy")
    rnn = next(i for i, op in enumerate(program.global_block().ops) if op.type == "rnn")
    view = DebuggerView.from_program(program, feed=feed, fetch_list=fetches, scope=scope)
    view.handle_message({"cmd": "run_to", "block": 0, "index": rnn - 1})
    assert view.next_op == [0, rnn]
    view.handle_message({"cmd": "step"})                    # the first cell
    assert view.highlight == [0, rnn] == view.next_op and len(view.frames) == 2
    assert view.status.startswith(f"ran block 0 > rnn@{rnn} layer 0 forward/step 0 (step ")
    assert view.status.endswith(f"next: block 0 > op {rnn} rnn goes on (or finishes)")
    view.handle_message({"cmd": "step_out"})                # the rnn op as a whole
    assert view.highlight == [0, rnn] and view.next_op == [0, rnn + 1]


def test_stepping_back_says_how_far_behind_the_live_run_the_view_is():
    main, startup, loss, feed = _mlp(train=False)
    ops = main.global_block().ops
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[loss], startup=startup)
    for _ in range(4):
        view.handle_message({"cmd": "step"})
    view.handle_message({"cmd": "step_back"})
    view.handle_message({"cmd": "step_back"})
    assert view.highlight == [0, 1] and view.next_op == [0, 2]
    assert view.status == (f"ran block 0 > op 1 {ops[1].type} (step 2) — next: block 0 > "
                           f"op 2 {ops[2].type} — 2 steps behind the live run: stepping "
                           f"forward replays them")
    view.handle_message({"cmd": "step"})                    # one replayed
    assert view.status.endswith("— 1 step behind the live run: stepping forward replays it")
    view.handle_message({"cmd": "step"})
    assert "behind" not in view.status and view.highlight == [0, 3]


def test_a_runtime_error_is_shown_in_the_status_line():
    x = pd.data("x", [None, 4])
    y = pd.layers.reshape(x, [3, -1])
    view = DebuggerView.from_program(feed={"x": np.ones((2, 4), np.float32)}, fetch_list=[y])
    view.handle_message({"cmd": "continue"})
    assert view.controls.state == "error" and "reshape" in view.status
    assert view.debugger.error is not None
    assert view.program_view.failed == [0, 0] and view.next_op == []   # marked in the code
    view.handle_message({"cmd": "bogus"})
    assert "unknown debugger command 'bogus'" in view.status
    view.handle_message({"cmd": "restart"})
    assert view.controls.state == "ready"


# --- the user's names (a %%paddle cell's x beside the program's minibatch_0) -------------
def _named_mlp():
    """A small program and the names a notebook cell would have bound."""
    x = pd.minibatch([[1.0, 2.0], [3.0, -4.0]])
    h = pd.layer.fc(x, 3, act="relu")
    y = pd.softmax(h)
    loss = pd.mean(y)
    pd.append_backward(loss)
    names = user_names_of([("x", x.name), ("h", h.name), ("y", y.name), ("also_y", y.name)])
    return pd.default_main_program(), pd.default_startup_program(), x, y, loss, names


def test_user_names_join_several_and_name_gradients_after_their_variable():
    names = user_names_of([("a", "v_0"), ("b", "v_0"), ("a", "v_0"), ("c", "w_0")])
    assert names == {"v_0": "a, b", "w_0": "c"}
    assert user_name("w_0", names) == "c" and user_name("other", names) is None
    assert user_name("w_0@GRAD", names) == "c@GRAD"
    assert user_name("v_0@GRAD@RENAME@1", names) == "a@GRAD@RENAME@1, b@GRAD@RENAME@1"
    assert user_name("w_0", None) is None and user_name("w_0", {}) is None
    assert shown_name("w_0", names) == "c (w_0)" and shown_name("w_0", None) == "w_0"


def test_program_model_and_graph_carry_the_users_names_beside_the_programs():
    main, _, x, y, _, names = _named_mlp()
    plain = program_model(main)
    assert plain["user_names"] == {}                  # plain Python: program names only
    assert all(v["user_name"] is None for b in plain["blocks"] for v in b["vars"])
    m = program_model(main, names)
    json.dumps(m, allow_nan=False)
    by_name = {v["name"]: v for v in m["blocks"][0]["vars"]}
    assert by_name[x.name]["user_name"] == "x" and by_name[y.name]["user_name"] == "y, also_y"
    assert by_name["fc_0.w_0"]["user_name"] is None
    assert m["user_names"][x.name] == "x" and m["user_names"][y.name + "@GRAD"] == \
        "y@GRAD, also_y@GRAD"                          # for the names in op lines
    dot = program_dot(main, names)
    assert f"x ({x.name})" in dot and f"{x.name}\\n" not in dot
    assert f'label="{x.name}\\n' in program_dot(main)
    view = ProgramView(main, graph=False, user_names=names)
    assert view.model == m


def test_scope_model_entries_carry_the_users_name_and_the_programs():
    main, startup, x, y, loss, names = _named_mlp()
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    exe.run(main, fetch_list=[loss], scope=scope)
    scope.new_scope("run").var(x.name).set(np.ones((2, 2), np.float32))
    root = scope_model(scope, user_names=names)["root"]
    entry = find_var(root["children"][0], x.name)
    assert (entry["name"], entry["user_name"]) == (x.name, "x")
    assert find_var(root, "fc_0.w_0")["user_name"] is None
    assert find_var(scope_model(scope)["root"]["children"][0], x.name)["user_name"] is None
    assert ScopeView(scope, user_names=names).model == scope_model(scope, user_names=names)


def test_debugger_view_shows_the_users_names_in_scopes_and_results():
    main, startup, x, y, loss, names = _named_mlp()
    view = DebuggerView.from_program(main, fetch_list=[y, loss], startup=startup,
                                     user_names=names)
    view.handle_message({"cmd": "step"})
    run = find_scope_node(view.scope_view.model, "run")
    assert find_var(run, x.name)["user_name"] == "x" and find_var(run, x.name)["changed"]
    assert view.program_view.model["user_names"][x.name] == "x"
    view.handle_message({"cmd": "run_to_end"})
    results = view.controls.results
    assert [(r["name"], r["user_name"]) for r in results] == [(y.name, "y, also_y"),
                                                              (loss.name, None)]
    assert results[0]["shown"] == f"y, also_y ({y.name})" and results[1]["shown"] == loss.name
    plain = DebuggerView.from_program(main, fetch_list=[y], startup=startup)
    plain.handle_message({"cmd": "run_to_end"})
    assert plain.controls.results[0]["shown"] == y.name == plain.debugger.fetch_names[0]


def test_a_snapshot_keeps_the_state_it_was_taken_in():
    main, startup, loss, feed = _rnn()
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[loss], startup=startup)
    view.handle_message({"cmd": "run_to", "block": 1, "index": 0})
    view.program_view.toggle(1)                       # the step block drawn collapsed
    snap = view.snapshot()
    controls, body = snap.children
    program_view, scope_view = body.children
    assert controls.still and not view.controls.still
    assert controls.status == view.status and controls.state == "paused"
    assert controls.frames == view.frames and len(controls.frames) == 2
    assert program_view.highlight == [1, 0] and program_view.model == view.program_view.model
    assert program_view.next_op == [1, 1] == view.next_op
    assert not program_view.debug                     # its gutter sets no breakpoints
    assert program_view.collapsed == [1] and program_view.graph_groups == \
        view.program_view.graph_groups
    assert scope_view.model == view.scope_view.model
    view.handle_message({"cmd": "run_to_end"})        # the live view moves on ...
    assert view.controls.state == "finished"
    assert controls.state == "paused" and program_view.highlight == [1, 0]   # ... it does not
    rec = next(i for i, op in enumerate(main.global_block().ops) if op.type == "recurrent")
    assert find_scope_node(scope_view.model, f"recurrent@{rec}/step 0")["current"]


def test_paddle_step_cells_show_the_notebooks_names_in_the_debugger():
    """Through the magic: the cell said x, h, y; the debugger's scopes, program and
    results say so beside the program's names (and a re-run cell's new names win)."""
    from IPython.core.interactiveshell import InteractiveShell   # noqa: PLC0415
    from paddle_nb.notebook import magic                        # noqa: PLC0415
    ip = InteractiveShell.instance()
    magic.load_ipython_extension(ip)
    magic.get_notebook(ip).reset()
    try:
        cell = ("%%paddle --step --show none --cell named\n"
                "x = pd.minibatch([[1.0, 2.0], [3.0, -4.0]])\n"
                "h = pd.layer.fc(x, 3, act='relu')\n"
                "y = pd.softmax(h)\n")
        ip.run_cell("import paddle_nb as pd", store_history=True)
        view = ip.run_cell(cell, store_history=True).result
        prog = magic.get_notebook(ip).program()
        x, h, y = (ip.user_ns[n] for n in ("x", "h", "y"))
        assert prog.user_names() == {x.name: "x", h.name: "h", y.name: "y"}
        assert view.program_view.model["user_names"] == prog.user_names()
        view.handle_message({"cmd": "step"})
        entry = find_var(find_scope_node(view.scope_view.model, "run"), x.name)
        assert (entry["user_name"], entry["name"]) == ("x", "minibatch_0")
        view.handle_message({"cmd": "run_to_end"})
        assert {r["shown"] for r in view.controls.results} == {
            f"x ({x.name})", f"h ({h.name})", f"y ({y.name})"}
        ip.run_cell(cell.replace("y = ", "probs = "), store_history=True)   # re-run, renamed
        assert prog.user_names()[y.name] == "probs"
    finally:
        magic.get_notebook(ip).reset()
        ip.reset()
        magic.unload_ipython_extension(ip)


def test_graph_nodes_are_as_small_as_their_labels():
    main, _, _, _ = _mlp()
    dot = program_dot(main)
    assert "width=0, height=0" in dot and "nodesep=0.15" in dot
    svg = program_svg(main)
    width, height = (float(svg.split(f'{d}="', 1)[1].split("pt", 1)[0])
                     for d in ("width", "height"))
    # graphviz's defaults (nodes at least 0.75 x 0.5 inches, 0.5 inches between ranks) drew
    # this training program 758 x 2218 pt; compact, it is about 580 x 1200
    assert width < 680 and height < 1600, (width, height)


def test_dot_is_installed_here():
    assert shutil.which("dot"), "graphviz's dot is needed for the graph tests"


def test_a_compiled_programs_view_tags_each_op_with_its_segment():
    main, startup, loss, feed = _mlp()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    view = ProgramView(compiled, graph=False)
    assert view.program is main
    assert all(op["segment"] is None for op in view.model["blocks"][0]["ops"])   # not yet
    exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)
    view.refresh()
    tags = [op["segment"] for op in view.model["blocks"][0]["ops"]]
    assert tags == [compiled.segments().get(i) for i in range(len(tags))]
    assert 0 in tags
    assert "segment" not in ProgramView(main, graph=False).model["blocks"][0]["ops"][0]
