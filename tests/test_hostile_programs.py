"""Hostile and malformed programs (issue "Robustness", item 1).

Each gets a clear PaddleNBError at load time (``ProgramFormatError``: the structure, checked
by ``Program.from_bytes``/``from_desc`` before anything is made) or at validation time
(``ValidationError`` from ``paddle_nb.core.validate.validate``: unknown ops, undeclared
variables, attribute types, sizes), and kernels refuse allocations over the limit on
their own: never a crash, a hang, an unbounded allocation or code execution.

Truncated and random bytes are covered in tests/test_proto.py
(test_bad_bytes_give_a_clear_error, test_truncated_bytes_give_a_clear_error); here, bytes
mutated at random inside real programs.
"""
import ast
import builtins
import os
import pickle
import random
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.control_flow.blocks import append_conditional_block
from paddle_nb.core import attrs as A
from paddle_nb.core import registry
from paddle_nb.core import limits
from paddle_nb.core import validate as V
from paddle_nb.core.errors import PaddleNBError
from paddle_nb.core.framework_pb2 import OpDesc, ProgramDesc, VarType
from paddle_nb.core.validate import ValidationError, validate
from paddle_nb.ops import while_op

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
PADDLE_PROGRAMS = sorted(os.path.join(d, f) for d in (os.path.join(FIXTURES, "paddle"),
                                                         os.path.join(FIXTURES,
                                                                      "paddle_control_flow"))
                         for f in os.listdir(d) if f.endswith((".pdesc", ".pdmodel")))


def _bytes(name):
    return open(os.path.join(FIXTURES, name), "rb").read()


def _desc(name) -> ProgramDesc:
    d = ProgramDesc()
    d.ParseFromString(_bytes(name))
    return d


def _blocks(parents, forwards=None) -> ProgramDesc:
    """A ProgramDesc with empty blocks: block i's parent is parents[i]."""
    d = ProgramDesc()
    for i, p in enumerate(parents):
        b = d.blocks.add(idx=i, parent_idx=p)
        if forwards is not None and forwards[i] is not None:
            b.forward_block_idx = forwards[i]
    return d


def _own(d, block, sub, kind=A.BLOCK, op_type="conditional_block"):
    op = d.blocks[block].ops.add(type=op_type)
    if kind == A.BLOCK:
        op.attrs.add(name="sub_block", type=A.BLOCK, block_idx=sub)
    else:
        op.attrs.add(name="blocks", type=A.BLOCKS, blocks_idx=list(sub))
    return op


def _load(d: ProgramDesc):
    return pd.Program.from_bytes(d.SerializeToString())


# --- no pickle, eval or exec on the loading paths -------------------------------------------
LOADING_PATHS = ["paddle_nb/core", "paddle_nb/io", "paddle_nb/ops", "kernels"]
FORBIDDEN_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill",
                     "cloudpickle", "joblib", "yaml"}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "execfile"}


def _python_files():
    for top in LOADING_PATHS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith(".py"):
                    yield os.path.join(dirpath, f)


def test_loading_paths_use_no_pickle_eval_or_exec():
    """Programs and tensors are parsed as protobuf and raw bytes only. The check is on the
    syntax tree, so ``Block.eval`` and ``SymbolTable.compile`` (methods) do not count; the
    notebook magic (paddle_nb/notebook/magic.py) runs the user's own cell code with exec and
    is deliberately outside these paths."""
    found = []
    files = list(_python_files())
    assert len(files) > 30
    for path in files:
        tree = ast.parse(open(path).read(), path)
        rel = os.path.relpath(path, ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [f"{rel}:{node.lineno} import {a.name}" for a in node.names
                          if a.name.split(".")[0] in FORBIDDEN_MODULES]
            elif isinstance(node, ast.ImportFrom):
                if (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                    found.append(f"{rel}:{node.lineno} from {node.module} import")
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
                    found.append(f"{rel}:{node.lineno} {node.func.id}(...)")
                for kw in node.keywords:
                    if kw.arg == "allow_pickle" and not (isinstance(kw.value, ast.Constant)
                                                         and kw.value.value is False):
                        found.append(f"{rel}:{node.lineno} allow_pickle=...")
            elif isinstance(node, ast.Attribute) and node.attr in ("loads", "load") \
                    and isinstance(node.value, ast.Name) and node.value.id in FORBIDDEN_MODULES:
                found.append(f"{rel}:{node.lineno} {node.value.id}.{node.attr}")
    assert found == []


def test_loading_and_validating_never_reach_pickle_or_eval(monkeypatch, tmp_path):
    """At run time too: pickle is cut off, and eval/exec of any source text fails (the
    import system's exec of compiled module code is let through)."""
    def forbidden(*a, **k):
        raise AssertionError("pickle called while loading a program")

    def guard(original):
        def call(source, *a, **k):
            if isinstance(source, (str, bytes)):
                raise AssertionError(f"{original.__name__} of source text while loading a "
                                     f"program: {source[:80]!r}")
            return original(source, *a, **k)
        return call
    x = pd.data("x", [None, 4])
    y = pd.layer.fc(x, 3, act="softmax")
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    pd.io.save_inference_model(str(tmp_path), ["x"], [y], exe, scope=scope)
    for name in ("loads", "load", "Unpickler"):
        monkeypatch.setattr(pickle, name, forbidden)
    for name in ("eval", "exec"):
        monkeypatch.setattr(builtins, name, guard(getattr(builtins, name)))
    for path in PADDLE_PROGRAMS:
        prog = pd.Program.from_bytes(open(path, "rb").read())
        validate(prog, strict=False)
        prog.to_code()
    prog, feeds, fetches = pd.io.load_inference_model(str(tmp_path), exe, scope=pd.Scope())
    assert feeds == ["x"] and validate(prog) == []


# --- random damage to real programs -----------------------------------------------------------
@pytest.mark.parametrize("name", ["paddle/mlp_train.pdesc", "paddle_control_flow/cond.pdesc",
                                  "paddle_control_flow/while_loop.pdesc"])
def test_randomly_mutated_programs_fail_cleanly_or_load_and_validate(name):
    """Flip, insert and delete bytes: from_bytes either refuses with ProgramFormatError or
    gives a program that prints, clones and validates (problems as a list, no crash)."""
    data = _bytes(name)
    rng = random.Random(1234)
    loaded = refused = 0
    for _ in range(150):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            r = rng.random()
            if r < 0.6:
                b[i] = rng.randrange(256)
            elif r < 0.8:
                del b[i]
            else:
                b.insert(i, rng.randrange(256))
        try:
            prog = pd.Program.from_bytes(bytes(b))
        except pd.ProgramFormatError:
            refused += 1
            continue
        loaded += 1
        problems = validate(prog, raise_on_error=False)
        assert all(isinstance(p, V.Problem) for p in problems)
        prog.to_code(show_all_attrs=True)
        prog.clone()
    assert loaded and refused


# --- the block tree -------------------------------------------------------------------------------
def _case_no_blocks():
    return ProgramDesc()


def _case_own_block():
    d = _blocks([-1, 0])
    _own(d, 1, 1)
    return d


def _case_mutual_ownership():
    d = _blocks([-1, 0, 0])
    _own(d, 1, 2)
    _own(d, 2, 1)
    return d


def _case_global_owned():
    d = _blocks([-1, 0])
    _own(d, 0, 0)
    return d


def _case_two_owners():
    d = _blocks([-1, 0])
    _own(d, 0, 1)
    _own(d, 0, 1, op_type="while")
    return d


def _case_missing_block():
    d = _blocks([-1, 0])
    _own(d, 0, 9, op_type="while")
    return d


def _case_missing_blocks():
    d = _blocks([-1, 0])
    _own(d, 0, [1, 4], kind=A.BLOCKS, op_type="pylayer")
    return d


def _case_no_type():
    d = _blocks([-1])
    d.blocks[0].ops.add(type="")
    return d


def _case_duplicate_var():
    d = _blocks([-1])
    for _ in range(2):
        v = d.blocks[0].vars.add(name="x")
        v.type.type = VarType.LOD_TENSOR
    return d


def _case_idx():
    d = _blocks([-1, 0])
    d.blocks[1].idx = 5
    return d


@pytest.mark.parametrize("make,message", [
    (_case_no_blocks, r"the ProgramDesc has no blocks"),
    (_case_idx, r"block at position 1: says idx=5; .*expected idx=1"),
    (lambda: _blocks([0]), r"block 0: has parent_idx=0; the global block has no parent"),
    (lambda: _blocks([-1, 7, 0]), r"block 1: has parent_idx=7: there is no block 7 \(the "
                                  r"program has 3 blocks"),
    (lambda: _blocks([-1, -1]), r"block 1: has parent_idx=-1: there is no block -1"),
    (lambda: _blocks([-1, 1]), r"block 1: has parent_idx=1; a parent must be an earlier "
                               r"block \(0..0\)"),
    (lambda: _blocks([-1, 2, 1]), r"block 1: has parent_idx=2; a parent must be an earlier "
                                  r"block .*not a cycle"),
    (lambda: _blocks([-1, 0], [-1, 9]), r"block 1: has forward_block_idx=9: there is no "
                                        r"block 9"),
    (lambda: _blocks([-1, 0], [-1, 1]), r"block 1: has forward_block_idx=1, itself"),
    (lambda: _blocks([-1, 0, 0, 0], [-1, 2, 3, 1]),
     r"block 1: forward_block_idx links form a cycle \(blocks 1 -> 2 -> 3 -> 1\)"),
    (_case_no_type, r"block 0 > op 0: the op has no type"),
    (_case_missing_block, r"block 0 > op 0 while: attribute sub_block \(BLOCK\) refers to "
                          r"block 9: there is no block 9"),
    (_case_missing_blocks, r"block 0 > op 0 pylayer: attribute blocks \(BLOCKS\) refers to "
                           r"block 4: there is no block 4"),
    (_case_own_block, r"block 1 > op 0 conditional_block: attribute sub_block \(BLOCK\) "
                      r"refers to block 1, the block the op is in"),
    (_case_global_owned, r"block 0 > op 0 conditional_block: .* refers to block 0, the "
                         r"block the op is in"),
    (_case_mutual_ownership, r"block 2 > op 0 conditional_block: attribute sub_block "
                             r"\(BLOCK\) refers to block 1, an earlier block"),
    (_case_two_owners, r"block 0 > op 1 while: .* refers to block 1, which block 0 > op 0 "
                       r"conditional_block owns already"),
    (_case_duplicate_var, r"block 0: declares variable 'x' twice"),
])
def test_malformed_structure_is_refused_at_load(make, message):
    d = make()
    before = d.SerializeToString()
    main_before = pd.default_main_program().to_bytes()
    with pytest.raises(pd.ProgramFormatError, match=message):
        pd.Program.from_bytes(before)
    with pytest.raises(pd.ProgramFormatError, match=message):
        pd.Program.from_desc(d)
    assert d.SerializeToString() == before                  # the message is left as it was
    assert pd.default_main_program().to_bytes() == main_before


def test_every_structural_problem_is_listed_at_once():
    d = _blocks([-1, 7, 0], [-1, -1, 8])
    _own(d, 2, 2)
    with pytest.raises(pd.ProgramFormatError) as e:
        _load(d)
    text = str(e.value)
    assert text.startswith("the ProgramDesc has 3 problems:")
    for part in ("parent_idx=7", "forward_block_idx=8", "refers to block 2, the block the op"):
        assert part in text


def test_a_required_field_left_out_is_refused():
    """upb's parser does not check proto2's required fields (test_property_regressions.py
    has more cases); such a program could never be written back."""
    d = _blocks([-1])
    d.blocks[0].ops.add(type="relu").attrs.add(name="alpha")        # no type
    with pytest.raises(pd.ProgramFormatError, match=r"lacks required fields: "
                                                    r"blocks\[0\].ops\[0\].attrs\[0\].type"):
        pd.Program.from_bytes(d.SerializePartialToString())


def test_names_that_are_not_utf8_are_refused():
    """Protobuf hands a string field holding bytes that are not UTF-8 back as bytes."""
    d = _blocks([-1])
    d.blocks[0].ops.add(type="relu").inputs.add(parameter="X", arguments=["x"])
    data = d.SerializeToString().replace(b"\x01x", b"\x01\xff")
    with pytest.raises(pd.ProgramFormatError, match=r"block 0 > op 0 relu: a variable name in "
                                                    r"input slot X: b'\\xff' is not UTF-8"):
        pd.Program.from_bytes(data)


def test_from_desc_wants_a_program_desc():
    with pytest.raises(pd.ProgramFormatError, match="expected a ProgramDesc message, got bytes"):
        pd.Program.from_desc(b"\x0a\x00")


# --- depth ----------------------------------------------------------------------------------------
def test_a_chain_of_10000_nested_blocks_is_refused_quickly():
    n = 10_000
    start = time.perf_counter()
    nested = _blocks([-1] + list(range(n - 1)))
    deep = limits.MAX_BLOCK_DEPTH + 1
    with pytest.raises(pd.ProgramFormatError, match=rf"block {deep}: is nested "
                                                    rf"{deep} blocks deep.*"
                                                    r"MAX_BLOCK_DEPTH = 100"):
        _load(nested)
    forward = _blocks([-1] + [0] * (n - 1), [-1, -1] + list(range(1, n - 1)))
    with pytest.raises(pd.ProgramFormatError, match=r"forward_block_idx links from a block "
                                                    r"with none"):
        _load(forward)
    owners = _blocks([-1] + [0] * (n - 1))
    for i in range(n - 1):
        _own(owners, i, i + 1)
    with pytest.raises(pd.ProgramFormatError, match=r"is run by a chain of 101 ops owning"):
        _load(owners)
    assert time.perf_counter() - start < 10


def test_10000_sibling_blocks_load_print_and_validate():
    n = 10_000
    d = _blocks([-1] + [0] * (n - 1))
    prog = _load(d)
    assert prog.num_blocks == n
    assert prog.to_code().count("// block") == n
    assert validate(prog) == []


def _nested_conds(depth):
    """x = 0; if c: if c: ... (depth times) ... x = x + 1"""
    main = pd.Program()
    with pd.program_guard(main):
        c = pd.layers.fill_constant([1], "bool", 1.0)
        x = pd.layers.fill_constant([1], "float32", 0.0)
        blocks = [main.create_block() for _ in range(depth)]
        pd.layers.assign(pd.layers.scale(x, 1.0, bias=1.0), output=x)
        for b in reversed(blocks):
            main.rollback()
            append_conditional_block(main.current_block(), b, [c], True)
    return main, x


def test_nesting_up_to_the_limit_loads_prints_prunes_and_runs():
    main, x = _nested_conds(limits.MAX_BLOCK_DEPTH)
    prog = pd.Program.from_bytes(main.to_bytes())
    assert validate(prog) == []
    assert prog.to_code().count("conditional_block(") == limits.MAX_BLOCK_DEPTH
    assert prog.blocks[-1].path.count(" > ") == limits.MAX_BLOCK_DEPTH
    pruned = pd.prune(prog, [x.name])
    out, = pd.Executor().run(pruned, fetch_list=[x.name], scope=pd.Scope())
    assert out.tolist() == [1.0]
    deeper, _ = _nested_conds(limits.MAX_BLOCK_DEPTH + 1)
    with pytest.raises(pd.ProgramFormatError, match="MAX_BLOCK_DEPTH"):
        pd.Program.from_bytes(deeper.to_bytes())


# --- variables ------------------------------------------------------------------------------------
def test_an_op_reading_an_undeclared_variable_is_named():
    d = _desc("paddle/mlp_train.pdesc")
    relu = d.blocks[0].ops[2]
    assert relu.type == "relu"
    relu.inputs[0].arguments[0] = "fc_0.tmp_9"
    prog = _load(d)                               # a validation problem, not a format one
    before = prog.to_bytes()
    with pytest.raises(ValidationError, match=r"^block 0 > op 2 relu: input slot X: variable "
                                              r"'fc_0.tmp_9' is not declared in block 0, any "
                                              r"enclosing block; did you mean fc_0.tmp_"):
        validate(prog)
    problems = validate(prog, raise_on_error=False)
    assert [(p.where, p.kind) for p in problems] == [("block 0 > op 2 relu", "undeclared-var")]
    assert prog.to_bytes() == before


def test_a_gradient_block_sees_its_forward_block():
    """Paddle's gradient blocks read forward variables they do not declare: names resolve
    through the parents and the forward block chain, as Block.lookup does."""
    prog = pd.Program.from_bytes(_bytes("paddle_control_flow/recurrent.pdesc"))
    grad = prog.block(2)
    assert grad.forward_block_idx == 1 and not grad.has_var("sigmoid_0.tmp_0")
    assert validate(prog) == []
    grad.table.header.forward_block_idx = -1
    problems = validate(prog, raise_on_error=False)
    assert problems and all(p.kind == "undeclared-var" for p in problems)
    assert any(p.where == "block 0 > recurrent_grad@9 (block 2) > op 7 sigmoid_grad"
               and "variable 'sigmoid_0.tmp_0' is not declared" in p.message
               for p in problems)


def test_empty_names_are_not_variables():
    prog = pd.Program.from_bytes(_bytes("paddle_control_flow/while_loop.pdesc"))
    op = next(op for op in prog.global_block().ops if op.type == "while_grad")
    slot = next(v for v in op.desc.outputs if v.parameter == "X@GRAD")
    slot.arguments.extend(["@EMPTY@", ""])
    assert validate(prog) == []


def test_huge_and_negative_variable_dims(monkeypatch):
    main = pd.Program()
    gb = main.global_block()
    gb.create_var("big", [2 ** 20, 2 ** 20], "float32")
    gb.create_var("odd", [-5, 3], "float32")
    gb.create_var("batch", [-1, 1000], "float64")
    prog = pd.Program.from_bytes(main.to_bytes())        # loads: dims are not structure
    problems = {p.message.split(" ")[1]: p for p in validate(prog, raise_on_error=False)}
    assert set(problems) == {"'big'", "'odd'"}
    assert problems["'big'"].kind == "too-large"
    assert "variable 'big' (float32[1048576, 1048576]) would take 4.0 TiB; the limit is " \
           "paddle_nb.core.limits.MAX_TENSOR_BYTES = 16.0 GiB" in problems["'big'"].message
    assert problems["'odd'"].kind == "dims"
    assert "dim -5 is not a size; expected dims >= 0, or -1" in problems["'odd'"].message
    monkeypatch.setattr(limits, "MAX_TENSOR_BYTES", 4000)     # configurable: -1 counts as 1
    flagged = {p.message.split(" ")[1] for p in validate(prog, raise_on_error=False)}
    assert flagged == {"'big'", "'odd'", "'batch'"}


# --- op types and attributes ------------------------------------------------------------------
def test_an_unknown_op_type_loads_and_is_reported_by_strict_validation():
    d = _desc("paddle/mlp_train.pdesc")
    d.blocks[0].ops[2].type = "relu_v9"            # as if Paddle had a newer op
    prog = _load(d)
    assert "relu_v9(X=[fc_0.tmp_1])" in prog.to_code()
    assert validate(prog, strict=False) == []
    with pytest.raises(ValidationError, match=r"block 0 > op 2 relu_v9: unknown op type "
                                              r"'relu_v9'; did you mean relu"):
        validate(prog)
    # and the executor refuses it when preparing (tests/test_paddle_fixtures.py)
    with pytest.raises(pd.ExecutionError, match=r"block 0 > op 2 relu_v9: unknown op type"):
        pd.Executor().prepare(prog)


def test_an_attribute_of_the_wrong_type_is_named():
    d = _desc("paddle/mlp_train.pdesc")
    mul = d.blocks[0].ops[0]
    a = next(a for a in mul.attrs if a.name == "x_num_col_dims")
    a.type, a.s = A.STRING, "1"
    a.ClearField("i")
    prog = _load(d)
    with pytest.raises(ValidationError, match=r"block 0 > op 0 mul: attribute x_num_col_dims: "
                                              r"declared int by op mul, given string \('1'\)"):
        validate(prog, strict=False)
    # a LONG holds what an INT holds (Paddle versions differ): accepted
    a.type, a.l = A.LONG, 1
    a.ClearField("s")
    assert validate(_load(d)) == []
    # attributes our OpProto does not declare are Paddle's business: not checked
    extra = next(a for a in mul.attrs if a.name == "use_mkldnn")
    extra.type, extra.s = A.STRING, "yes"
    assert validate(_load(d)) == []


def test_a_missing_sub_block_and_a_bad_attribute_value_are_named():
    d = _desc("paddle_control_flow/while_loop.pdesc")
    w = next(op for op in d.blocks[0].ops if op.type == "while")
    keep = [a for a in w.attrs if a.name != "sub_block"]
    del w.attrs[:]
    w.attrs.extend(keep)
    prog = _load(d)
    with pytest.raises(ValidationError, match=r"block 0 > op \d+ while: attribute sub_block is "
                                              r"missing \(type block, no default"):
        validate(prog)


def test_a_sub_block_edited_into_a_cycle_in_memory_is_reported_not_followed():
    d = _blocks([-1, 0, 0])
    _own(d, 0, 1)
    _own(d, 1, 2)
    prog = _load(d)
    op = OpDesc(type="conditional_block")                    # block 2 now owns block 1
    op.attrs.add(name="sub_block", type=A.BLOCK, block_idx=1)
    prog.block(2).table.ops.append(op)
    problems = validate(prog, raise_on_error=False)
    assert [p.kind for p in problems if p.kind == "structure"] == ["structure"]
    assert "refers to block 1, an earlier block" in str(problems[0])
    with pytest.raises(pd.ProgramFormatError, match="an earlier block"):
        prog.clone()


def test_validate_raises_one_error_listing_every_problem():
    d = _desc("paddle/mlp_train.pdesc")
    ops = d.blocks[0].ops
    ops[2].type = "relu_v9"
    ops[3].inputs[0].arguments[0] = "nowhere"
    a = next(a for a in ops[1].attrs if a.name == "axis")
    a.type, a.f = A.FLOAT, 1.0
    prog = _load(d)
    before = prog.to_bytes()
    with pytest.raises(ValidationError) as e:
        validate(prog)
    assert isinstance(e.value, PaddleNBError) and isinstance(e.value, ValueError)
    text = str(e.value)
    assert text.splitlines()[0] == "the program has 3 problems:"
    assert "  block 0 > op 1 elementwise_add: attribute axis: declared int by op " \
           "elementwise_add, given float (1)" in text
    assert "  block 0 > op 2 relu_v9: unknown op type 'relu_v9'" in text
    assert "  block 0 > op 3 mul: input slot X: variable 'nowhere' is not declared" in text
    assert [p.kind for p in e.value.problems] == ["attr-type", "unknown-op", "undeclared-var"]
    assert [p.kind for p in validate(prog, raise_on_error=False)] == [
        "attr-type", "unknown-op", "undeclared-var"]
    assert prog.to_bytes() == before


def test_a_long_list_of_problems_is_cut_in_the_message_but_kept_whole():
    main = pd.Program()
    gb = main.global_block()
    for k in range(100):
        gb.create_var(f"v{k}", [-3], "float32")
    with pytest.raises(ValidationError) as e:
        validate(main)
    assert len(e.value.problems) == 100
    assert f"... and {100 - limits.MAX_REPORTED} more" in str(e.value)
    with pytest.raises(ValidationError, match="validate needs a Program"):
        validate("not a program")


# --- allocations --------------------------------------------------------------------------------
HUGE = [2 ** 20, 2 ** 20]          # 4 TiB of float32


def _alloc_program(op_type):
    """A program whose only interesting op is ``op_type`` with a small shape; returns
    (program, the op, feed)."""
    main, startup = pd.Program(), pd.Program()
    feed = {}
    with pd.program_guard(main, startup):
        if op_type == "fill_constant":
            out = pd.layers.fill_constant([2], "float32", 1.0)
        elif op_type == "assign_value":
            out = pd.var(np.ones(2, np.float32))
        elif op_type == "fill_constant_batch_size_like":
            x = pd.data("x", [None, 3])
            feed = {"x": np.ones((2, 3), np.float32)}
            out = pd.op.fill_constant_batch_size_like(Input=x, shape=[-1, 3], dtype=5)
        elif op_type == "randint":       # integers only: int32, 4 bytes as float32's
            out = pd.op.randint(shape=[2], dtype=2, low=0, high=10)
        else:
            out = getattr(pd.op, op_type)(shape=[2], dtype=5)
    op = next(op for op in main.global_block().ops if op.type == op_type)
    return main, op, out, feed


@pytest.mark.parametrize("op_type", registry.types_where("allocates"))
def test_ops_asked_for_terabytes_are_flagged_and_refused_before_allocating(op_type):
    main, op, out, feed = _alloc_program(op_type)
    exe = pd.Executor()
    assert validate(main) == []
    exe.run(main, feed=feed, fetch_list=[out], scope=pd.Scope())      # small: fine
    op._set_attr("shape", [-1] + HUGE if op_type == "fill_constant_batch_size_like" else HUGE)
    problems = validate(main, raise_on_error=False)
    assert [p.kind for p in problems] == ["too-large"]
    assert "would allocate 4.0 TiB" in problems[0].message
    start = time.perf_counter()
    # the executor's guard (core/runtime_shapes.py) sizes the output before the kernel runs;
    # assign_value's own rule sees first that its 2 values cannot fill 2**40 places
    guard = r"output Out .* would have shape .* TiB.* the limit is .*MAX_TENSOR_BYTES.*" \
            r"Nothing was allocated" if op_type != "assign_value" else \
        r"holds 2 float32 values for shape \[1048576, 1048576\]"
    with pytest.raises(pd.ExecutionError, match=rf"block 0 > op \d+ {op_type}: .*{guard}"):
        exe.run(main, feed=feed, fetch_list=[out], scope=pd.Scope())
    assert time.perf_counter() - start < 2


def test_a_shape_attribute_with_a_negative_dim_is_flagged_and_refused():
    main, op, out, _ = _alloc_program("fill_constant")
    op._set_attr("shape", [-3, 2])
    assert [p.kind for p in validate(main, raise_on_error=False)] == ["dims"]
    with pytest.raises(pd.ExecutionError, match=r"fill_constant: .*shape \[-3, 2\]"):
        pd.Executor().run(main, fetch_list=[out], scope=pd.Scope())


def test_the_tensor_limit_is_configurable(monkeypatch):
    main, op, out, _ = _alloc_program("fill_constant")
    op._set_attr("shape", [1000, 1000])                 # 4 MB
    assert validate(main) == []
    monkeypatch.setattr(limits, "MAX_TENSOR_BYTES", 2 ** 20)
    with pytest.raises(ValidationError, match=r"3.8 MiB; the limit is paddle_nb.core.limits."
                                              r"MAX_TENSOR_BYTES = 1.0 MiB"):
        validate(main)
    with pytest.raises(pd.ExecutionError, match="MAX_TENSOR_BYTES = 1.0 MiB"):
        pd.Executor().run(main, fetch_list=[out], scope=pd.Scope())


@pytest.mark.parametrize("op_type", ["elementwise_add", "matmul"])
def test_broadcasting_and_outer_products_that_grow_past_the_limit_are_refused(monkeypatch,
                                                                             op_type):
    """[2048, 1] + [1, 2048] and [2048, 1] @ [1, 2048]: 16 KiB in, 16 MiB out."""
    monkeypatch.setattr(limits, "MAX_TENSOR_BYTES", 2 ** 20)
    a = pd.data("a", [2048, 1])
    b = pd.data("b", [1, 2048])
    out = a + b if op_type == "elementwise_add" else pd.matmul(a, b)
    feed = {"a": np.ones((2048, 1), np.float32), "b": np.ones((1, 2048), np.float32)}
    with pytest.raises(pd.ExecutionError, match=rf"{op_type}(_v2)?: output Out .* would have "
                                                rf"shape \[2048, 2048\].*16.0 MiB"):
        pd.Executor().run(feed=feed, fetch_list=[out], scope=pd.Scope())
    monkeypatch.setattr(limits, "MAX_TENSOR_BYTES", 2 ** 34)
    got, = pd.Executor().run(feed=feed, fetch_list=[out], scope=pd.Scope())
    assert got.shape == (2048, 2048)


def test_a_tensor_array_index_or_fetch_column_past_the_limit_is_refused():
    x = pd.layers.fill_constant([1], "float32", 1.0)
    i = pd.layers.fill_constant([1], "int64", 2 ** 40)
    array = pd.create_array("float32")
    pd.array_write(x, i, array)
    with pytest.raises(pd.ExecutionError, match=r"write_to_array: slot I: position 1099511627776 "
                                                r"at I\[0\] is out of range.*MAX_LIST_LENGTH"):
        pd.Executor().run(scope=pd.Scope())
    main = pd.Program()
    with pd.program_guard(main):
        y = pd.layers.fill_constant([1], "float32", 1.0)
        gb = main.global_block()
        fetch = gb.create_var("fetch", type=VarType.FETCH_LIST, persistable=True)
        with pytest.raises(pd.BuildError, match=r"attribute col=1073741824 of op fetch: "
                                                r"expected a column 0..16777215"):
            gb.append_op("fetch", {"X": [y]}, {"Out": [fetch]}, {"col": 2 ** 30})
        op = gb.append_op("fetch", {"X": [y]}, {"Out": [fetch]}, {"col": 0})
    op._set_attr("col", 2 ** 30)               # as an edited or loaded desc may have it
    with pytest.raises(ValidationError, match=r"op 1 fetch: attribute col=1073741824: expected "
                                              r"a column 0..16777215"):
        validate(main)
    with pytest.raises(ValidationError, match=r"(?s)fetch: attribute col=1073741824.*nothing ran"):
        pd.Executor().run(main, scope=pd.Scope())      # checked before anything runs


# --- while loops that never end -----------------------------------------------------------------
def _while_program(training, endless):
    """h = x; i = 0; while i < 3: h = tanh(h @ W + x); i += 1. ``endless``: the body's
    condition update is taken out afterwards, as a hand-edited desc would have it (the
    builder's own check cannot see that)."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2], "float64")
        W = pd.create_parameter([2, 2], "float64", name="W", initializer=pd.Normal(0, 0.5, 1))
        i = pd.layers.fill_constant([1], "int64", 0)
        n = pd.layers.fill_constant([1], "int64", 3)
        i, h = pd.while_loop(lambda i, h: pd.layers.less_than(i, n),
                             lambda i, h: [pd.increment(i, in_place=False),
                                           pd.tanh(pd.matmul(h, W) + x)],
                             [i, pd.layers.scale(x, 1.0)])
        loss = pd.mean(h * h)
        if training:
            pd.optimizer.SGD(0.1).minimize(loss)
    w = next(op for op in main.global_block().ops if op.type == "while")
    cond = w.input("Condition")[0]
    if endless:
        body = main.block(w.attr("sub_block"))
        writers = [k for k, op in enumerate(body.ops) if cond in op.output_arg_names]
        assert len(writers) == 1
        body._remove_op(writers[0])
    return main, startup, loss, cond


@pytest.mark.parametrize("training", [False, True])
def test_a_while_that_never_ends_stops_at_the_step_limit(monkeypatch, training):
    monkeypatch.setattr(while_op, "MAX_STEPS", 25)
    main, startup, loss, cond = _while_program(training, endless=True)
    assert validate(main) == []                       # nothing static says it never ends
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": np.ones((3, 2))}
    with pytest.raises(pd.ExecutionError, match=rf"block 0 > op \d+ while: while ran 25 steps "
                                                rf"and its condition '{cond}' still holds: does "
                                                rf"the body update it\? \(the limit is "
                                                rf"paddle_nb.ops.while_op.MAX_STEPS, or the "
                                                rf"environment variable "
                                                rf"PADDLE_NB_MAX_WHILE_STEPS\)"):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert scope.kids == []                           # every step scope went with the run
    assert "W" in scope.local_var_names()
    good, good_startup, good_loss, _ = _while_program(training, endless=False)
    exe.run(good_startup, scope=scope)                # the scope still works
    got, = exe.run(good, feed=feed, fetch_list=[good_loss], scope=scope)
    assert np.isfinite(got) and scope.kids == []


def test_the_step_limit_comes_from_the_environment():
    env = while_op.MAX_STEPS_ENV
    assert env == "PADDLE_NB_MAX_WHILE_STEPS"
    assert while_op.max_steps_from_env({}) == while_op.DEFAULT_MAX_STEPS == 1_000_000
    assert while_op.max_steps_from_env({env: " 7 "}) == 7
    for bad in ("0", "-3", "lots", "1.5"):
        with pytest.warns(UserWarning, match=f"{env}=.* is not a positive integer"):
            assert while_op.max_steps_from_env({env: bad}) == while_op.DEFAULT_MAX_STEPS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert while_op.max_steps_from_env({env: ""}) == while_op.DEFAULT_MAX_STEPS
    out = subprocess.run([sys.executable, "-c", "import paddle_nb.ops.while_op as w; "
                          "print(w.MAX_STEPS)"], capture_output=True, text=True, check=True,
                         env={**os.environ, env: "5"})
    assert out.stdout.strip() == "5"


# --- Paddle's own programs stay valid -------------------------------------------------------------
@pytest.mark.parametrize("path", PADDLE_PROGRAMS, ids=os.path.basename)
def test_paddle_fixtures_pass_validation(path):
    prog = pd.Program.from_bytes(open(path, "rb").read())
    assert validate(prog, strict=False) == []
    assert validate(prog) == []          # and we have every op type they use


def test_a_bad_inference_model_leaves_the_scope_alone(tmp_path):
    x = pd.data("x", [None, 4])
    y = pd.layer.fc(x, 3)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    pd.io.save_inference_model(str(tmp_path), ["x"], [y], exe, scope=scope)
    model = tmp_path / "model.pdmodel"
    d = ProgramDesc()
    d.ParseFromString(model.read_bytes())
    d.blocks.add(idx=1, parent_idx=3)
    model.write_bytes(d.SerializeToString())
    fresh = pd.Scope()
    with pytest.raises(pd.ProgramFormatError, match=r"model.pdmodel: block 1: has "
                                                    r"parent_idx=3"):
        pd.io.load_inference_model(str(tmp_path), exe, scope=fresh)
    assert fresh.local_var_names() == [] and fresh.kids == []


# --- bookkeeping attributes of a type Paddle never writes ------------------------------------
def _training_program():
    """A small classifier trained with SGD: forward, backward and optimizer ops, so that
    op_role decides what clone(for_test=True) keeps."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 3])
        h = pd.layer.fc(x, 2, param_attr=pd.ParamAttr(initializer=pd.Constant(0.5)))
        loss = pd.mean(h * h)
        pd.optimizer.SGD(0.1).minimize(loss)
    return main, startup, loss


def _replace_attr(op: OpDesc, name: str, type_, value) -> None:
    for i, a in enumerate(op.attrs):
        if a.name == name:
            del op.attrs[i]
            break
    a = op.attrs.add(name=name, type=type_)
    setattr(a, {A.STRING: "s", A.INT: "i", A.FLOAT: "f", A.BOOLEAN: "b"}.get(type_, "i"),
            value) if type_ not in A.LIST_TYPES else getattr(
                a, {A.INTS: "ints", A.STRINGS: "strings", A.FLOATS: "floats"}[type_]).extend(value)


MALFORMED_BOOKKEEPING = [          # (attribute, type, value, the op it is put on)
    ("op_role", A.STRING, "backward", "elementwise_mul_grad"),
    ("op_role", A.FLOAT, 1.0, "sgd"),
    ("op_callstack", A.INT, 7, "mul"),
    ("op_callstack", A.STRING, "File x.py", "mean"),
    ("op_role_var", A.INT, 3, "sgd"),
    ("op_namescope", A.INT, 4, "mul"),
    ("op_device", A.INTS, [1, 2], "mul"),
    ("with_quant_attr", A.STRING, "yes", "mean"),
    ("is_test", A.STRING, "no", "mul"),
]


_MALFORMED_IDS = [f"{m[0]}-{A.TYPE_NAMES[m[1]]}" for m in MALFORMED_BOOKKEEPING]


def _malformed(name, type_, value, op_type):
    """(the clean program, its startup, loss, the op's index, the bytes with ``name`` on
    the first ``op_type`` op replaced by a value of ``type_``)."""
    main, startup, loss = _training_program()
    d = main.desc
    j, op = next((j, o) for j, o in enumerate(d.blocks[0].ops) if o.type == op_type)
    _replace_attr(op, name, type_, value)
    return main, startup, loss, j, d.SerializeToString()


def _load_quietly(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.Program.from_bytes(data)


@pytest.mark.parametrize("name,type_,value,op_type", MALFORMED_BOOKKEEPING, ids=_MALFORMED_IDS)
def test_a_malformed_bookkeeping_attribute_is_named_in_a_warning(name, type_, value, op_type):
    """A tool's slip in an attribute only Paddle's bookkeeping reads (op_role as a string,
    op_callstack as an int): the program opens, with a warning naming op and attribute;
    validate() warns the same and finds no problem (it runs), and readers take the
    attribute as absent."""
    _, _, _, j, data = _malformed(name, type_, value, op_type)
    with pytest.warns(UserWarning, match=rf"block 0 > op {j} {op_type}: attribute {name} is "
                                         rf"{A.TYPE_NAMES[type_]} .*; ignored: read as absent"):
        bad = pd.Program.from_bytes(data)
    with pytest.warns(UserWarning, match=rf"op {j} {op_type}: attribute {name}"):
        assert validate(bad) == []
    bad_op = bad.global_block().ops[j]
    assert bad_op.attr(name, "absent") == "absent" and name not in bad_op.attrs
    assert bad.to_bytes() == data                       # kept as it came, not rewritten


@pytest.mark.parametrize("reader", ["exe.run", "clone(for_test=True)", "Debugger",
                                    "ProgramView"])
@pytest.mark.parametrize("name,type_,value,op_type", MALFORMED_BOOKKEEPING, ids=_MALFORMED_IDS)
def test_every_reader_of_bookkeeping_attributes_works_with_a_malformed_one(name, type_, value,
                                                                          op_type, reader):
    from paddle_nb.interactive.debugger import Debugger
    from paddle_nb.notebook.widgets import ProgramView
    main, startup, loss, j, data = _malformed(name, type_, value, op_type)
    bad = _load_quietly(data)
    feed = {"x": np.float32([[1, 2, 3], [0, 1, 0]])}
    exe = pd.Executor()

    def run(program):
        scope = pd.Scope()
        exe.run(startup, scope=scope)
        return exe.run(program, feed=feed, fetch_list=[loss.name], scope=scope)[0]
    if reader == "exe.run":                             # the same numbers
        np.testing.assert_array_equal(run(bad), run(main))
    elif reader == "clone(for_test=True)":              # op_role read as absent: forward
        kept = [o.type for o in bad.clone(for_test=True).global_block().ops]
        want = [o.type for i, o in enumerate(main.global_block().ops)
                if not o.attr("op_role", 0) & 3 or (name == "op_role" and i == j)]
        assert kept == want and len(want) < len(main.global_block().ops)
    elif reader == "Debugger":
        dbg = Debugger(bad, feed, [loss.name], scope=pd.Scope(), startup=startup)
        while (step := dbg.step()) is not None:
            dbg.forward_op_of(step.op)                  # as the debugger's view asks
        assert dbg.error is None and dbg.finished
        np.testing.assert_array_equal(dbg.results[0], run(main))
    else:                                               # the program view (the Lab tab)
        view = ProgramView(bad)
        assert op_type in view.graph_text


def test_a_bookkeeping_attribute_of_the_wrong_type_is_refused_when_built():
    """Built in code it is the user's mistake: refused where it is written, by name."""
    x = pd.data("x", [None, 3])
    gb = pd.default_main_program().global_block()
    y = gb.create_var("y")
    with pytest.raises(pd.BuildError, match=r"op relu, attribute op_role: expected an "
                                            r"integer, got 'backward'"):
        gb.append_op("relu", {"X": [x]}, {"Out": [y]}, {"op_role": "backward"})
    op = gb.append_op("relu", {"X": [x]}, {"Out": [y]}, {"op_role_var": []})
    assert op.desc.attrs[-1].type == A.STRINGS          # typed as Paddle types it
    _replace_attr(op.desc, "is_test", A.STRING, "no")
    op._set_attr("is_test", True)                       # as clone(for_test=True) does
    assert op.attr("is_test") is True and op.attr_type("is_test") == A.BOOLEAN
    with pytest.raises(TypeError, match="expected an integer"):
        op._set_attr("op_role", "forward")
    assert op.attr("op_role", "none") == "none"         # the refused value changed nothing


def test_paddle_writes_an_empty_op_callstack_as_ints_and_that_is_fine():
    """Paddle 2.6's grad ops carry op_callstack = [] typed INTS: not malformed."""
    data = _bytes(os.path.join("paddle", "recipe_lstm_sgd.pdesc"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prog = pd.Program.from_bytes(data)
        validate(prog)
    grads = [op for op in prog.global_block().ops if op.type.endswith("_grad")]
    assert grads and all(op.attr_type("op_callstack") == A.INTS for op in grads)
    assert all(op.created_at is None for op in grads)


def test_a_pass_copying_a_malformed_creating_line_skips_it(exe):
    """fc_fuse copies mul's op_callstack and op_role onto the fc op it makes."""
    x = pd.data("x", [None, 3])
    h = pd.layer.fc(x, 2, param_attr=pd.ParamAttr(initializer=pd.Constant(0.5)))
    main = pd.default_main_program()
    d = main.desc
    mul = next(o for o in d.blocks[0].ops if o.type == "mul")
    _replace_attr(mul, "op_callstack", A.INT, 7)
    _replace_attr(mul, "op_role", A.STRING, "forward")
    with pytest.warns(UserWarning, match="op 0 mul: attribute op_callstack is int 7"):
        bad = pd.Program.from_bytes(d.SerializeToString())
    fused = pd.passes.apply(bad, ["fc_fuse"])
    fc, = fused.global_block().ops
    assert fc.type == "fc" and fc.attr_type("op_callstack") == A.STRINGS   # its own line
    assert fc.attr("op_role", 0) == 0
    exe.run(pd.default_startup_program())
    feed = {"x": np.float32([[1, 2, 3]])}
    np.testing.assert_allclose(exe.run(fused, feed=feed, fetch_list=[h.name])[0],
                               exe.run(main, feed=feed, fetch_list=[h.name])[0])
