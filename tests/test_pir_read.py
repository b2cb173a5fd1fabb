"""Paddle 3's PIR files (``model.json``) read into blocks and scopes.

The fixtures in tests/fixtures/pir/ were saved by real paddlepaddle 3.3.1 (and the mlp by
every 3.x release, in versions/), each beside its inputs and Paddle's own outputs (io.npz)
and the same model in Paddle's legacy ProgramDesc format (legacy/model.pdmodel, saved by
paddlepaddle 2.6.2 with the same weights). README.md there says how they were made.

Checked here, for every model:

* it loads through ``pd.io.load_inference_model`` (the directory form, which finds
  ``model.json``) and computes Paddle's outputs within 1e-5;
* its translated program has the Fluid ops Paddle's own legacy program has, in the same
  order and with the same input slots, once what only one writer adds is set aside: the
  comparison below lists each such difference and why it is allowed;
* every variable made from a PIR value keeps its id (the VarDesc attribute ``pir_id``) and
  the value's dtype and shape;
* the program runs one op at a time in the step debugger, into its sub-blocks, to the same
  numbers, and prints as code.
"""
import json
import os

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.program import Program

PIR = os.path.join(os.path.dirname(__file__), "fixtures", "pir")
MODELS = ["mlp", "cnn", "lstm", "gru", "transformer", "if_layer", "while_cond"]
VERSIONS = {"3.0.0": 1, "3.1.1": 2, "3.2.2": 3, "3.3.1": 4}   # release -> format version
# The runs of each model: (inputs, Paddle's outputs) suffix in io.npz. if_layer was run
# twice, once down each branch of its ``if``.
RUNS = {"if_layer": ["_pos", "_neg"]}


def _runs(folder: str):
    """(feed, Paddle's outputs) for each run of the model saved in ``folder``."""
    io = np.load(os.path.join(folder, "io.npz"))
    for suffix in RUNS.get(os.path.basename(folder), [""]):
        feed = {k.removesuffix(suffix): io[k] for k in io.files
                if not k.startswith("out") and k.endswith(suffix)}
        outs = [io[f"out{i}{suffix}"] for i in range(len(io.files))
                if f"out{i}{suffix}" in io.files]
        yield feed, outs


def _load(folder: str, exe):
    scope = pd.Scope()
    program, feeds, fetches = pd.io.load_inference_model(folder, exe, scope=scope)
    return program, feeds, fetches, scope


def _assert_matches_paddle(folder: str, exe):
    program, feeds, fetches, scope = _load(folder, exe)
    for feed, want in _runs(folder):
        assert sorted(feeds) == sorted(feed)
        got = exe.run(program, feed=feed, fetch_list=fetches, scope=scope)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


# --- loading and running ------------------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
def test_each_model_loads_and_computes_paddles_outputs(model, exe):
    _assert_matches_paddle(os.path.join(PIR, model), exe)


@pytest.mark.parametrize("release", sorted(VERSIONS))
def test_the_mlp_saved_by_each_paddle_3_release_loads_and_matches(release, exe):
    folder = os.path.join(PIR, "versions", release)
    doc = json.load(open(os.path.join(folder, "model.json")))
    assert doc["base_code"]["version"] == VERSIONS[release]
    assert VERSIONS[release] in pd.io.pir.SUPPORTED_VERSIONS
    _assert_matches_paddle(folder, exe)


def test_program_from_pir_takes_the_text_and_its_program_has_feed_and_fetch_ops():
    text = open(os.path.join(PIR, "mlp", "model.json"), encoding="utf-8").read()
    program = pd.io.program_from_pir(text)
    again = pd.io.program_from_pir(text.encode("utf-8"))       # bytes as well as str
    assert program.to_code() == again.to_code()
    types = [op.type for op in program.global_block().ops]
    assert types[0] == "feed" and types[-1] == "fetch"
    assert sorted(p.name for p in program.all_parameters()) == [
        "linear_0.b_0", "linear_0.w_0", "linear_1.b_0", "linear_1.w_0"]


def test_the_path_prefix_form_and_explicit_file_names_find_the_json(tmp_path, exe):
    """Paddle 3 saves ``prefix.json`` + ``prefix.pdiparams`` (``paddle.jit.save(layer,
    "m/mlp")``); either form of the call finds them."""
    for ext in (".json", ".pdiparams"):
        (tmp_path / f"mlp{ext}").write_bytes(open(os.path.join(PIR, "mlp", f"model{ext}"),
                                                  "rb").read())
    (feed, want), = _runs(os.path.join(PIR, "mlp"))
    for args in ([str(tmp_path / "mlp")], [str(tmp_path), "mlp.json"],
                 [str(tmp_path), "mlp.json", "mlp.pdiparams"]):
        scope = pd.Scope()
        program, feeds, fetches = pd.io.load_inference_model(args[0], exe, *args[1:],
                                                             scope=scope)
        got, = exe.run(program, feed=feed, fetch_list=fetches, scope=scope)
        np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-5)


def test_a_directory_with_both_formats_or_neither_is_an_error_naming_both(tmp_path, exe):
    for name in ("model.json", "model.pdiparams"):
        (tmp_path / name).write_bytes(open(os.path.join(PIR, "mlp", name), "rb").read())
    (tmp_path / "model.pdmodel").write_bytes(
        open(os.path.join(PIR, "mlp", "legacy", "model.pdmodel"), "rb").read())
    scope = pd.Scope()
    with pytest.raises(pd.io.IOFormatError, match=r"both .*model\.json \(Paddle 3's PIR\) "
                                                  r"and .*model\.pdmodel .*model_filename="):
        pd.io.load_inference_model(str(tmp_path), exe, scope=scope)
    for name in ("model.json", "model.pdmodel"):      # naming one settles it
        pd.io.load_inference_model(str(tmp_path), exe, name, scope=scope)
    os.remove(tmp_path / "model.json")
    os.remove(tmp_path / "model.pdmodel")
    with pytest.raises(pd.io.IOFormatError, match=r"there is neither .*model\.json .* nor "
                                                  r".*model\.pdmodel"):
        pd.io.load_inference_model(str(tmp_path), exe, scope=pd.Scope())
    with pytest.raises(pd.io.IOFormatError, match=r"neither .*nothing\.json .*nor "
                                                  r".*nothing\.pdmodel .*no directory"):
        pd.io.load_inference_model(str(tmp_path / "nothing"), exe, scope=pd.Scope())


# --- the translated program against Paddle's own legacy program ----------------------------------
# What only one side has, and why. Everything else must be the same op types, in the same
# order, block by block, with the same input slots filled: that is what proves the op table
# (paddle_nb/io/pir/op_table.py) says what Paddle itself writes.
def _only_in_either(op) -> str | None:
    """Why ``op`` may be in one program and not the other, or None."""
    if op.type in ("fill_constant", "assign_value") and not op.input_arg_names:
        # A constant. PIR's full / full_int_array is a value; each writer folds it into the
        # attribute of the op that reads it where it can, and where a tensor is needed makes
        # it a fill_constant: Paddle 2.6 one per use, the translator one per value and block.
        return "a constant"
    if op.type == "assign":
        # Copies into and out of control-flow blocks (a yield, a while's loop variables,
        # the if's outputs): each writer copies different values.
        return "a copy"
    return None


def _only_in_paddles(op, block) -> str | None:
    if op.type == "scale" and op.attr("scale") == 1.0 and op.attr("bias") == 0.0 and any(
            o.type == "fetch" and o.input("X") == op.output("Out") for o in block.ops):
        # Paddle 2's save_inference_model fetches a scale(x, 1.0) of each target, so that
        # every fetched variable is a new one (save_infer_model/scale_0.tmp_0).
        return "save_inference_model's fetch copy"
    return _only_in_either(op)


def _only_in_ours(op, block) -> str | None:
    writer = {n: o for o in block.ops for n in o.output_arg_names}
    readers = [(o, slot) for o in block.ops for slot in o.input_names
               for n in o.input(slot) if n in op.output_arg_names]
    if op.type == "cast" and all(writer.get(n) is not None and writer[n].type == "shape"
                                 for n in op.input("X")):
        # PIR's shape64 is an int64 shape; Fluid's shape op writes int32: shape + cast.
        return "shape64's cast"
    if op.type == "stack" and readers and all(slot == "ShapeTensor" for _, slot in readers):
        # PIR passes a run-time shape as one tensor (its dims stacked); Paddle 2.6 passed the
        # dims as a list of scalars (ShapeTensorList), with no stack.
        return "a shape's stack"
    return _only_in_either(op)


# Input slots that name the same thing on both sides: PIR's one shape tensor is Paddle 2.6's
# list of dims; full_with_tensor's value (a tensor in PIR) was the attribute ``value``.
_SAME_SLOT = {"ShapeTensorList": "ShapeTensor"}
_ONLY_OURS_SLOTS = {("fill_constant", "ValueTensor")}


def _input_slots(op, ours: bool) -> list[str]:
    slots = {_SAME_SLOT.get(s, s) for s in op.input_names if op.input(s)}
    if ours:
        slots -= {s for t, s in _ONLY_OURS_SLOTS if t == op.type}
    return sorted(slots)


def _kept(program: Program, block_idx: int, only) -> list:
    block = program.block(block_idx)
    return [op for op in block.ops if only(op, block) is None]


@pytest.mark.parametrize("model", MODELS)
def test_the_translated_program_has_the_ops_paddle_itself_writes(model):
    folder = os.path.join(PIR, model)
    ours = pd.io.program_from_pir(open(os.path.join(folder, "model.json"), "rb").read())
    paddles = Program.from_bytes(open(os.path.join(folder, "legacy", "model.pdmodel"),
                                      "rb").read())
    assert len(ours.blocks) == len(paddles.blocks)
    for b in range(len(ours.blocks)):
        mine, theirs = _kept(ours, b, _only_in_ours), _kept(paddles, b, _only_in_paddles)
        assert [op.type for op in mine] == [op.type for op in theirs], f"block {b}"
        for a, p in zip(mine, theirs):
            assert _input_slots(a, True) == _input_slots(p, False), f"block {b} {a.type}"
            if a.type in ("conditional_block", "while"):     # the same blocks, in order
                assert _block_idx(a.attr("sub_block")) == _block_idx(p.attr("sub_block"))


def _block_idx(block) -> int:
    return block if isinstance(block, int) else block.idx


# --- PIR ids, stepping, printing ----------------------------------------------------------------
def _pir_types(doc) -> dict[int, dict]:
    """Every value id the file defines -> its type (results and block arguments)."""
    types, todo = {}, [doc["program"]]
    while todo:
        node = todo.pop()
        for region in node.get("regions", []):
            for block in region["blocks"]:
                for arg in block.get("args", []):
                    types[arg["#"]] = arg["TT"]
                todo += block["ops"]
        results = node.get("O", [])
        for r in [results] if isinstance(results, dict) else results:
            types[r["%"]] = r["TT"]
    return types


# Outputs whose PIR type is not what the Fluid op writes: the rnn op's scratch outputs,
# which PIR types as 0-d float32 placeholders. Fluid's rnn keeps its dropout state as bytes
# (uint8, as Paddle 2's legacy program declares it too) and its Reserve as a flat buffer.
_OWN_TYPE = {("rnn", "DropoutState"), ("rnn", "Reserve")}


@pytest.mark.parametrize("model", MODELS)
def test_each_variable_keeps_its_pir_id_dtype_and_shape(model):
    text = open(os.path.join(PIR, model, "model.json"), encoding="utf-8").read()
    types = _pir_types(json.loads(text))
    program = pd.io.program_from_pir(text)
    with_id = 0
    for block in program.blocks:
        written_by = {n: (op.type, slot) for op in block.ops for slot in op.output_names
                      for n in op.output(slot)}
        for name, desc in block.table.vars.items():
            ids = [a.i for a in desc.attrs if a.name == "pir_id"]
            if not ids or ids[0] == 0:       # feed/fetch lists, the translator's own glue
                continue
            with_id += 1
            t = pd.io.pir.format.decode_type(types[ids[0]], name)   # an id the file defines
            if t.kind == "tensor" and written_by.get(name) not in _OWN_TYPE:
                # the same dtype and rank; each dim the same where both know it (shape
                # inference may know a dim PIR's type leaves -1, or the other way round)
                var = block.var(name)
                assert var.dtype == t.dtype and len(var.shape) == len(t.shape), name
                assert all(a == b for a, b in zip(var.shape, t.shape) if -1 not in (a, b)), \
                    f"{name}: {list(var.shape)} against PIR's {t.shape}"
    # the parameters, inputs and fetched values at least
    assert with_id >= len(program.all_parameters()) + 2


def _scope_with_params(folder: str, program: Program):
    scope = pd.Scope()
    pd.io.load_persistables(pd.Executor(), folder, program, "model.pdiparams", scope)
    return scope


@pytest.mark.parametrize("model", MODELS)
def test_the_debugger_steps_each_program_one_op_at_a_time(model):
    folder = os.path.join(PIR, model)
    program, feeds, fetches, _ = _load(folder, pd.Executor())
    for feed, want in _runs(folder):
        dbg = pd.Debugger(program, feed, fetches, _scope_with_params(folder, program))
        steps = []
        while (step := dbg.step()) is not None:
            steps.append(step)
        # every op of block 0 but the feed ops (the feed is in the scope before the first
        # step), in order
        assert [s.op for s in steps if s.depth == 1] == [
            op for op in program.global_block().ops if op.type != "feed"]
        if len(program.blocks) > 1:          # it went into the if's branch or the loop body
            assert any(s.depth > 1 for s in steps)
        for g, w in zip(dbg.results, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("model", MODELS)
def test_each_program_prints_as_code(model):
    program = pd.io.program_from_pir(open(os.path.join(PIR, model, "model.json"),
                                          "rb").read())
    code = program.to_code()
    for op in program.global_block().ops:
        assert f"{op.type}(" in code
    for p in program.all_parameters():
        assert f"var {p.name} :" in code
