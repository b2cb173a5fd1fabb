"""Training recipes saved by real PaddlePaddle 2.6.2 train here to Paddle's numbers.

Each program (tests/fixtures/paddle/make_recipe_fixture.py) is an MLP with an optimizer
configured as people configure them: weight decay (L2 fused into Momentum, L1 as ops, a
parameter's own regularizer), gradient clipping (by value, norm, global norm) and a
learning-rate scheduler. Loaded from Paddle's bytes, started from Paddle's initial
values, trained 3 steps with our schedulers bound to the program's learning-rate
variable: every loss, every parameter after every step, and every accumulator at the
end match Paddle within 1e-5. The same recipes built with pd.optimizer build the same
ops.
"""
import json
import os

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.framework_pb2 import VarType
from paddle_nb.optimizer import lr as sched

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")

# Our side of each recipe: the scheduler (None: a constant rate, which the startup set)
SCHEDULERS = {
    "momentum_decay_global_norm": None,
    "adamw_step_decay_clip_norm": lambda: sched.StepDecay(0.1, step_size=2, gamma=0.5),
    "sgd_piecewise_clip_value": lambda: sched.PiecewiseDecay([1, 2], [0.1, 0.05, 0.01]),
    "adam_l1": None,
    "adagrad_cosine": lambda: sched.CosineAnnealingDecay(0.1, T_max=2),
    "rmsprop_centered_warmup": lambda: sched.LinearWarmup(0.05, warmup_steps=2,
                                                          start_lr=0.01, end_lr=0.05),
    "rmsprop": None,
    "lamb": None,
    # make_sequence_recipe_fixture.py: embedding (padding row, repeats), layer_norm, gelu
    "adamw_layer_norm": None,
    # make_lstm_recipe_fixture.py: embedding -> LSTM with sequence_length -> masked mean
    "lstm_sgd": None,
}


def _recipe(name):
    program = pd.Program.from_bytes(
        open(os.path.join(FIXTURES, f"recipe_{name}.pdesc"), "rb").read())
    return program, dict(np.load(os.path.join(FIXTURES, f"recipe_{name}.npz")))


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_paddle_recipe_trains_three_steps_like_paddle(exe, name):
    _trains_like_paddle(exe, name, scheduler=SCHEDULERS[name] and SCHEDULERS[name]())


def _cudnn_buffers(program):
    """Parameters no op reads or writes: the flat weight Paddle's recurrent layers make for
    cuDNN (lstm_0.w_0). Paddle's cell parameters live inside it (they alias its memory),
    so its saved values follow their training; here it is a separate array no op touches
    (test_paddles_flat_rnn_weight_is_its_cells_parameters_side_by_side)."""
    used = {n for op in program.global_block().ops for n in op.input_arg_names +
            op.output_arg_names}
    return {v.name for v in program.global_block().vars.values()
            if v.is_parameter and v.name not in used}


def test_paddles_flat_rnn_weight_is_its_cells_parameters_side_by_side():
    """What Paddle saved for lstm_0.w_0 is W_ih, W_hh, b_ih, b_hh of its one cell,
    flattened and concatenated, before and after every step: memory the parameters
    share, not a parameter of its own."""
    program, saved = _recipe("lstm_sgd")
    assert _cudnn_buffers(program) == {"lstm_0.w_0"}
    for stage in ["init__"] + [f"after_{k}__" for k in range(3)]:
        cells = [saved[f"{stage}lstm_cell_0.{n}"].ravel() for n in ("w_0", "w_1", "b_0", "b_1")]
        np.testing.assert_array_equal(saved[f"{stage}lstm_0.w_0"], np.concatenate(cells))


def _build(make_optimizer, first_decay=None):
    """The recipe's MLP, built with our builders as the fixture script builds Paddle's."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [4, 3])
        y = pd.data("y", [4, 1], "int64")
        h = pd.layer.fc(x, 5, act="tanh", param_attr=pd.ParamAttr(regularizer=first_decay))
        loss = pd.layer.cross_entropy(pd.layer.fc(h, 3), y)
        make_optimizer().minimize(loss)
    return main, startup


OURS = {
    "momentum_decay_global_norm": (lambda: pd.optimizer.Momentum(
        0.1, 0.9, weight_decay=pd.regularizer.L2Decay(0.02),
        grad_clip=pd.ClipGradByGlobalNorm(0.5)), pd.regularizer.L1Decay(0.01)),
    "adamw_step_decay_clip_norm": (lambda: pd.optimizer.AdamW(
        sched.StepDecay(0.1, step_size=2, gamma=0.5), weight_decay=0.05,
        apply_decay_param_fun=lambda name: "b_0" not in name,
        grad_clip=pd.ClipGradByNorm(0.3)), None),
    "sgd_piecewise_clip_value": (lambda: pd.optimizer.SGD(
        sched.PiecewiseDecay([1, 2], [0.1, 0.05, 0.01]),
        weight_decay=pd.regularizer.L2Decay(0.02),
        grad_clip=pd.ClipGradByValue(0.05)), None),
    "adam_l1": (lambda: pd.optimizer.Adam(0.01, weight_decay=pd.regularizer.L1Decay(0.001)),
                None),
    "lamb": (lambda: pd.optimizer.Lamb(0.01, lamb_weight_decay=0.01,
                                       exclude_from_weight_decay_fn=lambda p: "b_0" in p.name),
             None),
}


# make_sequence_recipe_fixture.py: nn.Embedding(sparse=True), so the table's gradient is a
# SelectedRows (the ids' rows of the output's gradient, the padding id's included), trained by
SPARSE = ["adam_sparse_embedding",        # Adam, 3 steps
          "sgd_sparse_embedding",         # SGD, 2 steps
          "momentum_sparse_embedding",    # Momentum, 2 steps
          "adam_lazy_sparse_embedding"]   # Adam with lazy_mode, 2 steps


def _trains_like_paddle(exe, name, program=None, scheduler=None):
    """Recipe ``name`` (its saved program, or ``program``) from Paddle's initial values
    for the steps Paddle trained, ``scheduler`` (ours) bound to the program's learning
    rate and stepped between runs: every loss, every parameter after every step and
    every persistable at the end within 1e-5 (not the cuDNN buffers, _cudnn_buffers), and
    every parameter's gradient at every step where the recipe saved Paddle's."""
    saved_program, saved = _recipe(name)
    program = program or saved_program
    scope = pd.Scope()
    for key, value in saved.items():
        if key.startswith("init__"):
            scope.var(key[len("init__"):]).set(value)
    if scheduler is not None:
        lr_var, = [n for n in program.global_block().vars if n.startswith("learning_rate")]
        scheduler.bind(program, lr_var)
    skip = _cudnn_buffers(program)
    params = [str(p) for p in saved["params"] if str(p) not in skip]
    graded = [p for p in params if f"grad_0__{p}" in saved]     # where Paddle saved them
    for k in range(sum(key[2:].isdigit() for key in saved if key.startswith("x_"))):
        if scheduler is not None:
            assert scheduler() == pytest.approx(float(saved[f"lr_{k}"]), rel=1e-12)
        out = exe.run(program, feed={"x": saved[f"x_{k}"], "y": saved[f"y_{k}"]},
                      fetch_list=[str(saved["loss_name"])] + params +
                      [p + "@GRAD" for p in graded], scope=scope)
        np.testing.assert_allclose(out[0], saved[f"loss_{k}"], rtol=1e-5, atol=1e-6)
        for p, value in zip(params, out[1:]):
            np.testing.assert_allclose(value, saved[f"after_{k}__{p}"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{p} after step {k}")
        for p, value in zip(graded, out[1 + len(params):]):
            np.testing.assert_allclose(value, saved[f"grad_{k}__{p}"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{p}@GRAD at step {k}")
        if scheduler is not None:
            scheduler.step()
    for key, value in saved.items():
        if key.startswith("final__") and key[len("final__"):] not in skip:
            got = scope.find_var(key[len("final__"):]).get()
            got = got.copy_to_host() if hasattr(got, "copy_to_host") else np.asarray(got)
            np.testing.assert_allclose(got.reshape(value.shape), value, rtol=1e-5, atol=1e-6,
                                       err_msg=key)


@pytest.mark.parametrize("place", [pd.CPUPlace(), pd.CUDAPlace(0)], ids=["cpu", "cuda"])
@pytest.mark.parametrize("name", SPARSE)
def test_paddle_sparse_embedding_recipe_trains_like_paddle(place, name):
    """Paddle's SelectedRows path, reproduced: sgd moves only the rows looked up (repeats
    added), momentum and adam update every row with the merged gradient (zero elsewhere;
    lazy adam only the rows looked up), Adam's bias correction one step ahead, as
    Paddle's CPU kernels compute them (tests/test_selected_rows.py has the math)."""
    _trains_like_paddle(pd.Executor(place), name)


def _with_dense_gradient(program):
    """``program`` with its embedding's is_sparse turned off (the lookup, its gradient op
    and the gradient's declaration): the dense gradient."""
    block = program.global_block()
    for op in block.ops:
        if op.type.startswith("lookup_table"):
            op._set_attr("is_sparse", False)
    for desc in block.table.vars.values():
        if desc.type.type == VarType.SELECTED_ROWS:
            dims, dtype = list(desc.type.selected_rows.dims), desc.type.selected_rows.data_type
            desc.type.type = VarType.LOD_TENSOR
            desc.type.lod_tensor.tensor.data_type = dtype
            desc.type.lod_tensor.tensor.dims.extend(dims)
    return program


def test_paddles_sparse_adam_differs_from_its_dense_adam_in_two_ways(exe):
    """Why the sparse recipe's numbers are not the dense ones (one step, Paddle's sparse
    program against the same program with is_sparse off): the padding row moves (its
    output is zeros, but the gradient arriving there is not, and Paddle's sparse kernel
    copies it whole; the dense gradient leaves it out, as Paddle's docs promise), and
    every other row moves by sqrt(1 - b2^2) / (1 - b1^2) over sqrt(1 - b2) / (1 - b1) =
    0.744 times the dense step (Paddle's CPU kernel advances the beta powers before its
    update reads them). Every other parameter is the same either way."""
    program, saved = _recipe("adam_sparse_embedding")
    dense_program = _with_dense_gradient(_recipe("adam_sparse_embedding")[0])
    params = [str(p) for p in saved["params"]]
    outs = []
    for prog in (program, dense_program):
        scope = pd.Scope()
        for key, value in saved.items():
            if key.startswith("init__"):
                scope.var(key[len("init__"):]).set(value)
        outs.append(exe.run(prog, feed={"x": saved["x_0"], "y": saved["y_0"]},
                            fetch_list=params, scope=scope))
    b1, b2 = 0.9, 0.999
    ahead = (np.sqrt(1 - b2 ** 2) / (1 - b1 ** 2)) / (np.sqrt(1 - b2) / (1 - b1))
    for p, sparse, dense in zip(params, *outs):
        before, paddle = saved[f"init__{p}"], saved[f"after_0__{p}"]
        np.testing.assert_allclose(sparse, paddle, rtol=1e-5, atol=1e-6, err_msg=p)
        if not p.startswith("embedding"):
            np.testing.assert_allclose(dense, paddle, rtol=1e-5, atol=1e-6, err_msg=p)
            continue
        np.testing.assert_array_equal(dense[0], before[0])            # the padding row
        assert np.all(np.abs(paddle[0] - before[0]) > 0.03)           # Paddle's moved
        np.testing.assert_allclose((paddle - before)[1:], ahead * (dense - before)[1:],
                                   atol=1e-6)


def test_the_sparse_recipes_tell_the_modes_apart(exe):
    """The fixtures pin what they should: with lazy_mode flipped, or a dense gradient,
    the same programs miss Paddle's numbers."""
    for name, change in (("adam_lazy_sparse_embedding", "lazy_mode"),
                         ("adam_sparse_embedding", "lazy_mode"),
                         ("momentum_sparse_embedding", "dense"),
                         ("sgd_sparse_embedding", "dense")):
        program, _ = _recipe(name)
        if change == "dense":
            _with_dense_gradient(program)
        for op in program.global_block().ops:
            if op.type == "adam":
                op._set_attr("lazy_mode", not op.attr("lazy_mode"))
        with pytest.raises(AssertionError, match="Not equal to tolerance"):
            _trains_like_paddle(exe, name, program=program)


def _optimize_ops(program):
    return [(op.type, {k: v for k, v in op.attrs.items()
                       if k in ("mu", "regularization_method", "with_decay", "coeff", "min",
                                "max", "max_norm", "weight_decay", "scale")})
            for op in program.global_block().ops if op.attr("op_role") == 2]


@pytest.mark.parametrize("name", sorted(OURS))
def test_our_builders_append_the_optimize_ops_paddle_appends(name):
    """Same op types in the same order, with the same decay and clipping attributes."""
    paddle_program, _ = _recipe(name)
    ours, _ = _build(*OURS[name])
    want, got = _optimize_ops(paddle_program), _optimize_ops(ours)
    assert [t for t, _ in got] == [t for t, _ in want]
    for (t, a), (_, b) in zip(got, want):
        assert a.keys() == b.keys(), t
        for key in a:
            assert a[key] == (b[key] if isinstance(b[key], str) else
                              pytest.approx(b[key], rel=1e-6)), (t, key)


def test_a_scheduler_sets_the_learning_rate_before_each_run(exe):
    """The executor writes the bound scheduler's value into the learning-rate variable;
    the user steps the scheduler between runs, as in Paddle."""
    main, startup = pd.Program(), pd.Program()
    schedule = sched.StepDecay(0.5, step_size=1, gamma=0.5)
    with pd.program_guard(main, startup):
        w = pd.create_parameter([2], "float32", initializer=pd.Constant(1.0), name="w")
        pd.optimizer.SGD(schedule).minimize(pd.layer.mean(w))
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    seen = []
    for _ in range(3):
        exe.run(main, fetch_list=[], scope=scope)
        seen.append(float(scope.find_var("w").get()[0]))
        schedule.step()
    # d mean / d w = 0.5 per element: steps of 0.5 * 0.5, 0.25 * 0.5, 0.125 * 0.5
    np.testing.assert_allclose(seen, [0.75, 0.625, 0.5625])
    assert main.clone().lr_scheduler is schedule


def test_a_scheduler_resumes_from_its_state_dict():
    """state_dict / set_state_dict, Paddle's way to checkpoint a scheduler: a new one
    given the saved state goes on where the first left off."""
    first = sched.StepDecay(0.5, step_size=2, gamma=0.5)
    for _ in range(3):
        first.step()
    state = first.state_dict()
    assert state == {"last_epoch": 3, "last_lr": 0.25}
    resumed = sched.StepDecay(0.5, step_size=2, gamma=0.5)
    resumed.set_state_dict(state)
    first.step()
    resumed.step()
    assert (resumed.last_epoch, resumed()) == (first.last_epoch, first()) == (4, 0.125)


# --- cross-entropy in every mode (make_ce_modes_fixture.py) ------------------------------------
# the modes make_ce_modes_fixture.py built, as F.cross_entropy keywords ("weight": class
# weights fed as <mode>_w; "use_softmax": False means the input is softmax(x))
CE_MODES = json.load(open(os.path.join(FIXTURES, "ce_modes.json")))


def test_cross_entropy_in_every_mode_matches_paddle_forward_and_gradient(exe):
    """Each mode's loss and d(loss)/d(input) as Paddle computed them (hard and soft labels,
    probabilities, class weights with ignore_index, label smoothing, axis 0, the three
    reductions), within 1e-5."""
    program = pd.Program.from_bytes(open(os.path.join(FIXTURES, "ce_modes_ops.pdesc"),
                                         "rb").read())
    saved = np.load(os.path.join(FIXTURES, "ce_modes_io.npz"))
    written = {n for op in program.global_block().ops for ns in op.outputs.values() for n in ns}
    feed = {k: saved[k] for k in saved.files if k not in written}
    fetch = [k for k in saved.files if k in written]
    assert len(fetch) == 2 * (len(CE_MODES) + 1)
    got = exe.run(program, feed=feed, fetch_list=fetch, scope=pd.Scope())
    for name, value in zip(fetch, got):
        np.testing.assert_allclose(value, saved[name], rtol=1e-5, atol=1e-6, err_msg=name)


def _paddle_ce_segments():
    """The forward ops Paddle appended for each mode, by mode name."""
    program = pd.Program.from_bytes(open(os.path.join(FIXTURES, "ce_modes_ops.pdesc"),
                                         "rb").read())
    segments, current = {}, None
    for op in program.global_block().ops:
        if op.attr("op_role") not in (0, None):
            continue
        reads = [n for ns in op.inputs.values() for n in ns]
        owner = next((m for m in sorted([*CE_MODES, "hard_mean_f64"], key=len, reverse=True)
                      if any(r.startswith(f"{m}_") for r in reads)), None)
        if owner is not None and owner not in segments:
            current = owner
            segments[current] = []
        if current is not None:
            segments[current].append(op.type)
    return segments


@pytest.mark.parametrize("mode", sorted(CE_MODES))
def test_pd_layer_cross_entropy_appends_the_ops_paddle_appends(mode):
    kw = dict(CE_MODES[mode])
    with pd.program_guard(pd.Program(), pd.Program()):
        x = pd.data(f"{mode}_x", [5, 4])
        if kw.get("soft_label"):
            label = pd.data(f"{mode}_label", [5, 4])
        elif kw.get("axis") == 0:
            label = pd.data(f"{mode}_label", [1, 4], "int64")
        else:
            label = pd.data(f"{mode}_label", [5], "int64")
        if kw.pop("weight", False):
            kw["weight"] = pd.data(f"{mode}_w", [4])
        inp = pd.layer.softmax(x) if kw.get("use_softmax") is False else x
        loss = pd.layer.cross_entropy(inp, label, **kw)
        ours = [op.type for op in loss.block.ops]
    paddle_ops = _paddle_ce_segments()[mode]
    extra = ["elementwise_mul", "reduce_sum"] if kw.get("reduction") == "none" else []
    assert paddle_ops == ours + extra


def test_cross_entropy_warns_when_softmax_would_be_applied_twice():
    x = pd.data("x", [5, 4])
    label = pd.data("label", [5], "int64")
    with pytest.warns(UserWarning, match="use_softmax=False"):
        pd.layer.cross_entropy(pd.layer.softmax(x), label)


# --- control flow: nn.RNN(GRUCell) and a while_loop holding a cond (make_rnn_while_fixture.py)
def _fixture_program(stem):
    program = pd.Program.from_bytes(open(os.path.join(FIXTURES, f"{stem}_ops.pdesc"),
                                         "rb").read())
    return program, dict(np.load(os.path.join(FIXTURES, f"{stem}_io.npz")))


def _central_difference(run, x, eps=1e-6):
    """d run(x) / dx by central differences (run: array -> scalar, float64)."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (run(up) - run(down)) / (2 * eps)
    return grad


GRU_PARAMS = ["gru_cell_0.w_0", "gru_cell_0.w_1", "gru_cell_0.b_0", "gru_cell_0.b_1"]


def test_paddle_gru_rnn_matches_paddle_and_central_differences(exe):
    """nn.RNN(GRUCell) as Paddle saved it (while, tensor arrays, slice with a run-time
    start, split, matmul_v2), from an initial state: outputs and every gradient as Paddle
    computed them within 1e-5, and central differences of our forward agree."""
    program, saved = _fixture_program("gru_rnn")
    feed = {k: saved[k] for k in ("x", "h0", "r1", "r2")}

    def scope_with(values):
        scope = pd.Scope()           # a parameter is set in the scope, not fed
        for name in GRU_PARAMS:
            scope.var(name).set(values.get(name, saved[name]))
        return scope
    fetch = [k for k in saved if k not in feed and k not in GRU_PARAMS]
    assert len(fetch) == 8
    got = dict(zip(fetch, exe.run(program, feed=feed, fetch_list=fetch, scope=scope_with({}))))
    for name in fetch:
        np.testing.assert_allclose(got[name], saved[name], rtol=1e-5, atol=1e-7, err_msg=name)
    out, state = fetch[:2]

    def loss(values):
        o, s = exe.run(program, feed={k: values[k] for k in feed}, fetch_list=[out, state],
                       scope=scope_with(values))
        return float(np.sum(o * values["r1"]) + np.sum(s * values["r2"]))
    for name in ("x", "h0", "gru_cell_0.w_1"):
        numeric = _central_difference(lambda a: loss({**feed, name: a}), saved[name])
        np.testing.assert_allclose(got[f"{name}@GRAD"], numeric, rtol=1e-6, atol=1e-8,
                                   err_msg=name)


def test_paddle_while_with_cond_forward_matches_and_our_gradient_is_right(exe):
    """A while_loop whose body holds a cond (tanh on odd steps, doubling on even ones).
    The forward matches Paddle. Paddle 2.6.2's own backward of it is wrong (all zeros):
    in its gradient program the branch's tanh_grad writes x@GRAD, a name the enclosing
    while_grad step already holds, so the gradient lands there and the
    conditional_block_grad finds none of its own; running that program here gives the same
    zeros, as its ops say. The gradient our backward builds for Paddle's forward program
    agrees with central differences."""
    program, saved = _fixture_program("while_cond")
    v_name = [k for k in saved if k not in ("x", "x@GRAD")][0]
    value, paddle_grad = exe.run(program, feed={"x": saved["x"]},
                                 fetch_list=[v_name, "x@GRAD"], scope=pd.Scope())
    np.testing.assert_allclose(value, saved[v_name], rtol=1e-6)
    np.testing.assert_allclose(paddle_grad, saved["x@GRAD"])          # Paddle's zeros

    forward = pd.prune(program, [v_name])
    with pd.program_guard(forward, pd.Program()):
        loss = pd.layer.reduce_sum(forward.global_block().var(v_name))
        grad, = pd.gradients([loss], [forward.global_block().var("x")])

    def run(x):
        return exe.run(forward, feed={"x": x}, fetch_list=[loss, grad], scope=pd.Scope())
    numeric = _central_difference(lambda a: float(run(a)[0]), saved["x"])
    assert not np.allclose(saved["x@GRAD"], numeric, atol=1e-3)       # Paddle is wrong
    np.testing.assert_allclose(run(saved["x"])[1], numeric, rtol=1e-6, atol=1e-9)


def test_the_readme_training_recipe_runs_as_written(tmp_path):
    import re
    import subprocess
    import sys
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    block, = [b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S)
              if "StepDecay" in b]
    script = tmp_path / "recipe.py"
    script.write_text(block + "\nprint(sched(), exe.run(main, feed=feed, "
                      "fetch_list=['learning_rate_0'])[0])\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    *training, last = done.stdout.strip().splitlines()
    scheduled, used = map(float, last.split())
    assert scheduled == used == 0.1 * 0.5 ** 3
    # a reader sees it train: the loss it prints goes down
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", "\n".join(training))]
    assert len(losses) >= 3 and losses[-1] < losses[0], done.stdout
