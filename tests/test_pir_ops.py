"""The rows of the PIR op table (paddle_nb/io/pir/op_table.py), each proved by numbers.

tests/fixtures/pir/ops/<program>/ holds small programs saved by paddlepaddle 3.3.1 (made by
tests/fixtures/pir/make_op_programs.py from some 250 user-level calls: ``paddle.nn`` layers,
``paddle.nn.functional``, tensor methods) with their inputs and Paddle's outputs (io.npz).
Checked here, for each program:

* it translates, loads its parameters and computes Paddle's outputs within 1e-5, in the
  dtype Paddle returns them (int64 indices, bool masks);
* every attribute of every op in it either has a Fluid attribute to go to or is one its row
  says Fluid has no place for (``ignored``): a renamed attribute dropped by mistake would
  leave Fluid's default in its place and could still match on lucky inputs.

The programs in ``NO_COUNTERPART`` call Paddle ops this package has no Fluid op for: loading
them is an error that names the op.
"""
import json
import os

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import registry
from paddle_nb.io.pir import PirFormatError, program_from_pir
from paddle_nb.io.pir.op_table import BY_PIR, DROPPED_ATTRS, lookup
from paddle_nb.io.pir.reader import _SPECIAL

OPS = os.path.join(os.path.dirname(__file__), "fixtures", "pir", "ops")
PROGRAMS = sorted(d for d in os.listdir(OPS) if os.path.isdir(os.path.join(OPS, d)))
# program -> the Paddle ops in it with no Fluid counterpart, the first of which the error names
NO_COUNTERPART = {"no_counterpart": ["einsum", "masked_fill", "median"]}
# ops the reader translates itself, not through a row
SPECIAL = set(_SPECIAL) | {"2.yield"}


def _ops(folder: str) -> list[dict]:
    with open(os.path.join(folder, "model.json")) as f:
        doc = json.load(f)
    out, todo = [], [doc["program"]["regions"][0]]
    while todo:
        for block in todo.pop()["blocks"]:
            for op in block["ops"]:
                out.append(op)
                todo.extend(op.get("regions") or [])
    return out


def _load(folder: str, exe):
    with open(os.path.join(folder, "model.json")) as f:
        program = program_from_pir(f.read())
    scope = pd.Scope()
    if os.path.exists(os.path.join(folder, "model.pdiparams")):
        pd.io.load_persistables(exe, folder, program, "model.pdiparams", scope)
    return program, scope


@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in NO_COUNTERPART])
def test_each_program_computes_paddles_outputs(name, exe):
    folder = os.path.join(OPS, name)
    program, scope = _load(folder, exe)
    gb = program.global_block()
    feeds = [op.output("Out")[0] for op in gb.ops if op.type == "feed"]
    fetches = [op.input("X")[0] for op in gb.ops if op.type == "fetch"]
    io = np.load(os.path.join(folder, "io.npz"))
    want = [io[f"out{i}"] for i in range(len(fetches))]
    assert sorted(feeds) == sorted(k for k in io.files if not k.startswith("out"))
    got = exe.run(program, feed={k: io[k] for k in feeds}, fetch_list=fetches, scope=scope)
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"out{i} ({fetches[i]})"
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"out{i} ({fetches[i]})")


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_attribute_of_every_op_has_a_place_or_is_said_to_be_ignored(name):
    lost = set()
    for op in _ops(os.path.join(OPS, name)):
        row = lookup(op["#"].partition(".")[2])
        if op["#"] in SPECIAL or row is None:
            continue
        fluid = registry.lookup(row.fluid)
        for a in op.get("A") or []:
            pir_name = a["N"]
            if pir_name in DROPPED_ATTRS or pir_name in row.ignored:
                continue
            if fluid.attr(row.attrs.get(pir_name, pir_name)) is None:
                lost.add(f"{row.pir}.{pir_name}")
    assert not lost, "attributes dropped without a row saying so"


@pytest.mark.parametrize("name", sorted(NO_COUNTERPART))
def test_ops_with_no_fluid_counterpart_are_an_error_naming_the_op(name):
    names = [op["#"].partition(".")[2] for op in _ops(os.path.join(OPS, name))]
    for op in NO_COUNTERPART[name]:
        assert op in names and lookup(op) is None
    first = next(n for n in names if n in NO_COUNTERPART[name])
    with open(os.path.join(OPS, name, "model.json")) as f:
        text = f.read()
    with pytest.raises(PirFormatError, match=f"the Paddle op '{first}' has no Fluid "
                                             f"counterpart"):
        program_from_pir(text)


def test_every_row_names_a_registered_fluid_op():
    assert [r.pir for r in BY_PIR.values() if not registry.is_registered(r.fluid)] == []


def _edited(name: str, edit) -> str:
    """The text of program ``name`` after ``edit(op)`` on each of its ops."""
    with open(os.path.join(OPS, name, "model.json")) as f:
        doc = json.load(f)
    for op in doc["program"]["regions"][0]["blocks"][0]["ops"]:
        edit(op)
    return json.dumps(doc)


def test_an_ignored_attribute_with_a_value_fluid_does_not_compute_is_an_error():
    def round_to_2_decimals(op):
        if op["#"] == "1.round":
            for a in op["A"]:
                if a["N"] == "decimals":
                    a["AT"]["D"] = 2
    with pytest.raises(PirFormatError, match=r"decimals=2; Fluid's round has no such "
                                             r"attribute and computes as decimals=0 only"):
        program_from_pir(_edited("math_unary", round_to_2_decimals))


def test_a_reversed_slice_reads_paddle_3s_end_and_refuses_the_end_fluid_reads_otherwise():
    # x[:, 1:3, ::-1]: Paddle 3 saves the end of the reversed axis as INT32_MIN (through
    # index 0), which the table makes Fluid's -1; an end of -1 means "before the last
    # element" in Paddle 3, which Fluid's strided_slice cannot say
    def end_minus_1(op):
        if op["#"] == "1.full_int_array":
            value = op["A"][0]["AT"]["D"]
            if [v["D"] for v in value] == [3, -2 ** 31]:
                value[1]["D"] = -1
    with pytest.raises(PirFormatError, match="end -1 with stride -1 stops before the last"):
        program_from_pir(_edited("slicing", end_minus_1))
