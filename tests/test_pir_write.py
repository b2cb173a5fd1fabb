"""Programs written as Paddle 3's PIR (``model.json``): paddle_nb/io/pir/writer.py.

The goldens in tests/fixtures/pir/written/<name>/ were written by paddle_nb from Paddle 2
programs (the legacy twins of the PIR fixtures, and the course's models in
notebooks/data/) and then loaded and run by real paddlepaddle 3.3.1, with
``paddle.jit.load`` and with ``paddle.inference``; ``paddle_outputs.npz`` holds the inputs
and what Paddle computed (tests/fixtures/pir/check_written_in_paddle.py, run by hand).

Checked here:

* the writer still writes those very files (equal as JSON, and the same parameter bytes);
* the models the course trains (paddle_nb/examples/: digits, digits_cnn, digit_reversal),
  trained briefly and written by tests/fixtures/pir/make_course_models.py: their inference
  programs, rebuilt here by the examples' own ``build()``, are still written as those files;
* paddle_nb, reading a written file back, computes Paddle's outputs within 1e-5;
* a program read from a PIR file Paddle saved (the models, and the op programs of
  tests/fixtures/pir/ops/) is written back, and computes Paddle's outputs again;
* control flow as paddle_nb builds it (cond, while_loop, a Switch) becomes PIR's if and
  while;
* ``save_inference_model(..., format="pir")`` and ``load_inference_model`` round trip;
* ``python -m paddle_nb upgrade`` writes the golden files from a copy of a course model;
* an op with no PIR counterpart is an error naming it, and no file is written.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.program import Program
from paddle_nb.examples import digit_reversal, digits, digits_cnn
from paddle_nb.io.pir import (PirWriteError, pir_parameters, program_from_pir,
                              program_to_pir)
from paddle_nb.io.pir.op_table import BY_PIR

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PIR = os.path.join(HERE, "fixtures", "pir")
WRITTEN = os.path.join(PIR, "written")
FIXTURE_MODELS = ["mlp", "cnn", "lstm", "gru", "transformer", "if_layer", "while_cond"]
COURSE_MODELS = {"paddle_mlp": "mlp", "paddle_cnn": "cnn", "paddle_lstm": "lstm"}
TOLERANCE = 1e-5


def _source(name: str) -> tuple[str, str, str]:
    """The Paddle 2 program a golden was written from: (folder, program, parameters)."""
    if name in COURSE_MODELS:
        stem = COURSE_MODELS[name]
        return (os.path.join(ROOT, "notebooks", "data", name), f"{stem}_infer.pdmodel",
                f"{stem}_infer.pdiparams")
    return os.path.join(PIR, name, "legacy"), "model.pdmodel", "model.pdiparams"


def _runs(npz_path: str):
    """(feed, outputs) per run: keys ``out0``, ``out0_pos``... are outputs, and a run
    with a suffix feeds the inputs with that suffix (if_layer's x_pos, x_neg)."""
    io = np.load(npz_path)
    suffixes = sorted({k[len("out0"):] for k in io.files if k.startswith("out0")})
    for suffix in suffixes:
        feed = {k.removesuffix(suffix): io[k] for k in io.files
                if not k.startswith("out") and k.endswith(suffix)}
        outs = [io[f"out{i}{suffix}"] for i in range(len(io.files))
                if f"out{i}{suffix}" in io.files]
        yield feed, outs


def _assert_computes(program, feeds, fetches, scope, npz_path):
    exe = pd.Executor()
    for feed, want in _runs(npz_path):
        assert sorted(feeds) == sorted(feed)
        got = exe.run(program, feed=feed, fetch_list=fetches, scope=scope)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.asarray(g).shape == w.shape
            assert np.max(np.abs(np.asarray(g) - w)) <= TOLERANCE


GOLDENS = FIXTURE_MODELS + list(COURSE_MODELS)
# trained here, not converted: the example module that builds each, and its feed
TRAINED_MODELS = {"course_digits": (digits, "x"), "course_digits_cnn": (digits_cnn, "image"),
                  "course_digit_reversal": (digit_reversal, "ids")}


@pytest.mark.parametrize("name", GOLDENS)
def test_the_writer_still_writes_the_golden_file(name):
    folder, model, _ = _source(name)
    with open(os.path.join(folder, model), "rb") as f:
        program = Program.from_bytes(f.read())
    with open(os.path.join(WRITTEN, name, "model.json")) as f:
        golden = json.load(f)
    assert json.loads(program_to_pir(program)) == golden


@pytest.mark.parametrize("name", TRAINED_MODELS)
def test_the_writer_still_writes_the_course_models_it_trained(name, tmp_path):
    """The program does not depend on training, so the example's build() gives it again;
    freshly initialised weights stand in for the trained ones (only model.json is compared)."""
    module, feed = TRAINED_MODELS[name]
    model = module.build()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(model.startup, scope=scope)
    pd.io.save_inference_model(str(tmp_path), [feed], [model.prob], exe,
                               main_program=model.test, scope=scope, format="pir")
    with open(os.path.join(WRITTEN, name, "model.json")) as f:
        golden = json.load(f)
    assert json.loads((tmp_path / "model.json").read_text()) == golden


@pytest.mark.parametrize("name", GOLDENS + list(TRAINED_MODELS))
def test_a_written_file_read_back_computes_paddles_outputs(name):
    folder = os.path.join(WRITTEN, name)
    scope = pd.Scope()
    program, feeds, fetches = pd.io.load_inference_model(folder, pd.Executor(), scope=scope)
    _assert_computes(program, feeds, fetches, scope,
                     os.path.join(folder, "paddle_outputs.npz"))


@pytest.mark.parametrize("name", FIXTURE_MODELS)
def test_a_program_read_from_pir_is_written_back(name, tmp_path):
    """Paddle's own file, read, written and read again: the same numbers, and the same
    parameter file (the persistable tensors sorted by name) serves both."""
    folder = os.path.join(PIR, name)
    with open(os.path.join(folder, "model.json")) as f:
        read = program_from_pir(f.read())
    text = program_to_pir(read)
    (tmp_path / "model.json").write_text(text)
    shutil.copy(os.path.join(folder, "model.pdiparams"), tmp_path / "model.pdiparams")
    scope = pd.Scope()
    program, feeds, fetches = pd.io.load_inference_model(str(tmp_path), pd.Executor(),
                                                         scope=scope)
    assert pir_parameters(program) == pir_parameters(read)
    _assert_computes(program, feeds, fetches, scope, os.path.join(folder, "io.npz"))


OPS = os.path.join(PIR, "ops")
# every program but the one of ops with no Fluid counterpart, which the reader refuses (that
# refusal is tests/test_pir_ops.py's): any other program the reader refused would fail here
OP_PROGRAMS = sorted(d for d in os.listdir(OPS)
                     if os.path.isdir(os.path.join(OPS, d)) and d != "no_counterpart")


@pytest.mark.parametrize("name", OP_PROGRAMS)
def test_every_op_program_paddle_saved_is_written_back(name):
    """tests/fixtures/pir/ops/: user-level calls saved by Paddle 3.3.1 in small programs, each
    program read, written, read again: the same numbers in the same dtypes."""
    folder = os.path.join(OPS, name)
    with open(os.path.join(folder, "model.json")) as f:
        read = program_from_pir(f.read())
    program = program_from_pir(program_to_pir(read))
    exe, scope = pd.Executor(), pd.Scope()
    if os.path.exists(os.path.join(folder, "model.pdiparams")):
        pd.io.load_persistables(exe, folder, program, "model.pdiparams", scope)
    gb = program.global_block()
    feeds = [op.output("Out")[0] for op in gb.ops if op.type == "feed"]
    fetches = [op.input("X")[0] for op in gb.ops if op.type == "fetch"]
    io = np.load(os.path.join(folder, "io.npz"))
    got = exe.run(program, feed={k: io[k] for k in feeds}, fetch_list=fetches, scope=scope)
    for i, g in enumerate(got):
        g, w = np.asarray(g), io[f"out{i}"]
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"out{i} ({fetches[i]})"
        np.testing.assert_allclose(g, w, rtol=TOLERANCE, atol=TOLERANCE,
                                   err_msg=f"out{i} ({fetches[i]})")


def _small_cnn():
    """A program as a user builds one: conv, batch norm, pooling, fc (mul and an
    elementwise add with axis 1), dropout."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        image = pd.data("image", [-1, 1, 8, 8])
        y = pd.layer.conv2d(image, 4, 3, padding=1)
        y = pd.layer.pool2d(pd.layer.batch_norm(y, act="relu"), 2, pool_stride=2)
        y = pd.layer.dropout(pd.layer.fc(y, 10, act="relu"), 0.3)
        prob = pd.layer.fc(y, 3, act="softmax")
    return main, startup, prob


def test_save_inference_model_in_pir_format_round_trips(tmp_path):
    main, startup, prob = _small_cnn()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    image = np.random.default_rng(0).normal(size=(2, 1, 8, 8)).astype(np.float32)
    [want] = exe.run(main.clone(for_test=True), feed={"image": image},
                     fetch_list=[prob.name], scope=scope)
    pd.io.save_inference_model(str(tmp_path), ["image"], [prob], exe, main_program=main,
                               scope=scope, format="pir")
    assert sorted(os.listdir(tmp_path)) == ["model.json", "model.pdiparams"]
    loaded = pd.Scope()
    program, feeds, fetches = pd.io.load_inference_model(str(tmp_path), exe, scope=loaded)
    [got] = exe.run(program, feed={"image": image}, fetch_list=fetches, scope=loaded)
    assert feeds == ["image"]
    assert np.max(np.abs(np.asarray(got) - np.asarray(want))) <= TOLERANCE
    with pytest.raises(pd.BuildError, match="format must be one of"):
        pd.io.save_inference_model(str(tmp_path), ["image"], [prob], exe, main_program=main,
                                   scope=scope, format="onnx")


def _control_flow(kind: str):
    """A program with control flow as paddle_nb builds it: pd.cond (two conditional_blocks
    and select_input), pd.while_loop (a while op), pd.switch (one conditional_block per
    case, each writing a variable that already holds a value)."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [-1, 3])
        i = pd.data("i", [1], "int64")
        if kind == "cond":
            y = pd.cond(pd.layer.less_than(i, pd.layer.fill_constant([1], "int64", 2)),
                        lambda: pd.layer.scale(x, 2.0, 1.0), lambda: x - 3.0)
        elif kind == "while_loop":
            _, y = pd.while_loop(lambda k, acc: pd.layer.less_than(k, i),
                                 lambda k, acc: [k + 1, acc * 0.5 + x],
                                 [pd.layer.fill_constant([1], "int64", 0), x])
        else:
            y = pd.layer.scale(x, 0.0)
            with pd.switch() as s:
                with s.case(pd.layer.equal(i, pd.layer.fill_constant([1], "int64", 0))):
                    pd.layer.assign(x * 2.0, y)
                with s.default():
                    pd.layer.assign(x + 1.0, y)
    return main, startup, y


@pytest.mark.parametrize("kind", ["cond", "while_loop", "switch"])
def test_control_flow_built_here_is_written_as_pir_if_and_while(kind, tmp_path):
    main, startup, y = _control_flow(kind)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    text = program_to_pir(_inference(main, y, exe, scope, tmp_path))
    ops = [op["#"] for op in json.loads(text)["program"]["regions"][0]["blocks"][0]["ops"]]
    assert ("1.while" in ops) == (kind == "while_loop") and ("1.if" in ops) != (
        kind == "while_loop")
    assert "1.select_input" not in ops and "1.conditional_block" not in ops
    read = program_from_pir(text)
    fetch = [op.input("X")[0] for op in read.global_block().ops if op.type == "fetch"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for i in (0, 1, 3):
        feed = {"x": x, "i": np.array([i], np.int64)}
        [want] = exe.run(main, feed=feed, fetch_list=[y], scope=scope)
        [got] = exe.run(read, feed=feed, fetch_list=fetch, scope=pd.Scope())
        assert np.array_equal(np.asarray(got), np.asarray(want))


def _inference(main, y, exe, scope, folder):
    pd.io.save_inference_model(str(folder), ["x", "i"], [y], exe, main_program=main,
                               scope=scope)
    program, _, _ = pd.io.load_inference_model(str(folder), exe, scope=pd.Scope())
    return program


def test_a_conditional_block_with_nothing_to_yield_when_false_is_an_error(tmp_path):
    """A Switch case writing a variable that holds nothing before it: when the case does
    not run, PIR's if would have no value to give."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [-1, 3])
        i = pd.data("i", [1], "int64")
        y = main.global_block().create_var("y", shape=[-1, 3], dtype="float32")
        with pd.switch() as s:
            with s.case(pd.layer.equal(i, pd.layer.fill_constant([1], "int64", 0))):
                pd.layer.assign(x * 2.0, y)
    exe = pd.Executor()
    with pytest.raises(PirWriteError, match=r"\(conditional_block\): this conditional_block "
                                            r"writes \['y'\], which hold no value before it"):
        pd.io.save_inference_model(str(tmp_path / "m"), ["x", "i"], [y], exe,
                                   main_program=main, scope=pd.Scope(), format="pir")
    assert not (tmp_path / "m").exists()


def _upgrade(*args):
    return subprocess.run([sys.executable, "-m", "paddle_nb", "upgrade", *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_the_upgrade_command_writes_the_golden_files(tmp_path):
    folder, model, params = _source("paddle_mlp")
    for f in (model, params):
        shutil.copy(os.path.join(folder, f), tmp_path / f)
    done = _upgrade(str(tmp_path / model))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "mlp_infer_pir"
    assert sorted(os.listdir(out)) == ["model.json", "model.pdiparams"]
    assert str(out / "model.json") in done.stdout and "4 tensors" in done.stdout
    golden = os.path.join(WRITTEN, "paddle_mlp")
    with open(os.path.join(golden, "model.json")) as f:
        assert json.loads((out / "model.json").read_text()) == json.load(f)
    with open(os.path.join(golden, "model.pdiparams"), "rb") as f:
        assert (out / "model.pdiparams").read_bytes() == f.read()

    missing = _upgrade(str(tmp_path / "nothing.pdmodel"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1
    assert missing.stderr.startswith("python -m paddle_nb upgrade: there is no model file")
    assert not (tmp_path / "o").exists()


def _with_an_op_pir_lacks():
    """A legacy model whose program has an op with no PIR counterpart here (cholesky)."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [-1, 3, 3])
        y = pd.layer.fc(pd.op.cholesky(X=x), 2)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    return main, exe, scope, y


def test_an_op_pir_lacks_is_a_clear_error_and_no_file_is_written(tmp_path):
    main, exe, scope, y = _with_an_op_pir_lacks()
    assert "cholesky" not in {row.fluid for row in BY_PIR.values()}
    target = tmp_path / "pir"
    with pytest.raises(PirWriteError, match=r"block 0, op 1 \(cholesky\): the Fluid op "
                                            r"'cholesky' has no PIR counterpart"):
        pd.io.save_inference_model(str(target), ["x"], [y], exe, main_program=main,
                                   scope=scope, format="pir")
    assert not target.exists()

    pd.io.save_inference_model(str(tmp_path), ["x"], [y], exe, main_program=main,
                               scope=scope)             # the legacy format has it
    done = _upgrade(str(tmp_path / "model.pdmodel"), "--out", str(target))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "op 1 (cholesky)" in done.stderr
    assert not target.exists()
