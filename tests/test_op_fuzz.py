"""Every registered op driven with random and hostile inputs (hypothesis).

Each example starts from a row of the op table (``tests/test_ops_table.py``: a one-op
program with a numpy reference) and changes it the way a careless or hostile user would:
an input of another shape (rank 0 to 4, zero-sized dims), another dtype (float16, uint8,
complex64 among them), integer data far out of range (labels, masks, indices), or an
attribute set to an edge value (-1, 99, 2**40, NaN, an empty list) or to a value of the
wrong type. The property is the one docs/robustness.md promises:

* the run matches the row's numpy reference computed on the changed inputs (values,
  shape, dtype, and shape inference's declared shape fits what the kernel made), or
* it raises a :class:`paddle_nb.PaddleNBError`,

and nothing else: no other exception type, no crash, no hang (a watchdog dumps the stack
and stops the process after 120 s). Where the reference itself cannot compute a result
(numpy raises), the op must refuse too: a result there would be a value nobody can vouch
for.

Gradient ops are driven the same way from the rows of ``tests/test_op_gradients.py``: the
forward op and its gradient program run on changed inputs and each gradient must match
central differences of the numpy reference, or the build/run must raise a PaddleNBError.

The examples are derandomized (the same ones on every run, about 35 s here);
``PADDLE_NB_FUZZ_EXPLORE=5`` draws five times as many new ones, to look for more.
"""
from __future__ import annotations

import faulthandler
import math
import os
import resource
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import paddle_nb as pd
from paddle_nb.core import attrs as A
from paddle_nb.core import registry
from paddle_nb.core.errors import PaddleNBError
from paddle_nb.core.grad_maker import EMPTY_VAR

import op_kinds
import test_op_gradients as grad_table
import test_ops_table as table
from numpy_interpreter import NotComputed, interpret, stored_attrs

# PADDLE_NB_FUZZ_EXPLORE=N: N times the examples, new ones each run (pytest's
# --hypothesis-seed picks them), to look for bugs; CI runs the same examples every time.
EXPLORE = int(os.environ.get("PADDLE_NB_FUZZ_EXPLORE", "0"))
DETERMINISTIC = dict(derandomize=not EXPLORE, database=None, deadline=None, print_blob=True,
                     suppress_health_check=[HealthCheck.too_slow,
                                            HealthCheck.function_scoped_fixture])
# Sized for CI (2 cores, about 190 forward ops): the same examples every run, so a
# failure found once stays found; PADDLE_NB_FUZZ_EXPLORE=N draws N times as many, new
# ones, to look further.
FORWARD_EXAMPLES = 40 * max(EXPLORE, 1)
GRADIENT_EXAMPLES = 8 * max(EXPLORE, 1)
CUDA_EXAMPLES = 12 * max(EXPLORE, 1)
WATCHDOG_S = 120
HEADROOM_BYTES = 4 * 2**30

# One row per forward op: the first row of the op table for that op type.
FIRST_ROW = {}
for _case in table.CASES:
    FIRST_ROW.setdefault(_case.op, _case)
FORWARD_ROWS = sorted(FIRST_ROW.values(), key=lambda c: c.op)
GRAD_ROWS = sorted({c.op: c for c in reversed(grad_table.CASES)}.values(), key=lambda c: c.op)

def fuzzed(rows, examples, ids=lambda row: row.op):
    """A test run for each of ``rows``, ``examples`` hypothesis draws each."""
    def wrap(test):
        test = settings(max_examples=examples, **DETERMINISTIC)(given(data=st.data())(test))
        test = pytest.mark.parametrize("row", rows, ids=[ids(r) for r in rows])(test)
        return pytest.mark.filterwarnings("ignore::RuntimeWarning")(test)
    return wrap


# --- the values hostile examples are made of -------------------------------------------------
DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64,
          np.float16, np.uint8, np.int8, np.complex64]
DIMS = [0, 1, 2, 3, 5]
HOSTILE_INTS = [-2**63, -2**40, -2**31, -100, -99, -7, -2, -1, 0, 1, 2, 3, 4, 7, 99,
                2**31 - 1, 2**31, 2**40]
HOSTILE_FLOATS = [math.nan, math.inf, -math.inf, -1.0, 0.0, 1e-30, 0.5, 2.0, 1e30]


def arrays(dtype, shape, draw):
    """Data of ``dtype`` and ``shape``: small values, or for integers, hostile ones."""
    return np.asarray(_arrays(dtype, shape, draw))


def _arrays(dtype, shape, draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([v for v in HOSTILE_INTS if info.min <= v <= info.max], dtype)
        if draw(st.booleans()):
            return rng.integers(max(info.min, -3), min(info.max, 5) + 1, shape).astype(dtype)
        return rng.choice(pool, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    values = rng.uniform(-2, 2, shape)
    if draw(st.booleans()):                 # NaN, infinities, zeros sprinkled in
        values = np.where(rng.random(shape) < 0.2, rng.choice(HOSTILE_FLOATS, shape), values)
    return values.astype(dtype)


def hostile_attr(spec, draw, floats=HOSTILE_FLOATS):
    """A value for attribute ``spec``: an edge value of its type, or one of the wrong type."""
    if draw(st.integers(0, 9)) == 0:         # the wrong type altogether
        return draw(st.sampled_from([1.5, "x", [1, 2], None, True, -1, [[1]], {"a": 1}]))
    kind = spec.type
    if kind in (A.INT, A.LONG):
        return draw(st.sampled_from(HOSTILE_INTS))
    if kind == A.FLOAT:
        return draw(st.sampled_from(floats))
    if kind == A.BOOLEAN:
        return draw(st.booleans())
    if kind in (A.INTS, A.LONGS):
        return draw(st.lists(st.sampled_from(HOSTILE_INTS[4:-4]), max_size=5))
    if kind == A.FLOATS:
        return draw(st.lists(st.sampled_from(HOSTILE_FLOATS), max_size=4))
    if kind == A.STRING:
        return draw(st.sampled_from(["", "NCHW", "x" * 300, "\x00", "é"]))
    if kind == A.STRINGS:
        return draw(st.lists(st.sampled_from(["", "a", "\x00"]), max_size=3))
    if kind == A.BOOLEANS:
        return draw(st.lists(st.booleans(), max_size=3))
    return draw(st.sampled_from([-1, 0, 1, 99]))


def pick_input(inputs, draw):
    """(slot, position, array) of one input, drawn."""
    slot = draw(st.sampled_from(sorted(inputs)))
    i = draw(st.integers(0, len(table.as_list(inputs[slot])) - 1))
    return slot, i, table.as_list(inputs[slot])[i]


def put_input(inputs, slot, i, new, kind) -> str:
    """Put ``new`` in place of input ``slot``[i]; what changed, for the report."""
    old = table.as_list(inputs[slot])[i]
    if isinstance(inputs[slot], list):
        inputs[slot][i] = new
    else:
        inputs[slot] = new
    return f"{kind} of {slot}[{i}]: {old.dtype}{list(old.shape)} -> {new.dtype}{list(new.shape)}"


@st.composite
def changed_rows(draw, row):
    """``row`` with one to three changes; returns (row, [what was changed])."""
    inputs = {slot: list(v) if isinstance(v, list) else v for slot, v in row.inputs.items()}
    attrs = dict(row.attrs)
    changes = []
    op = registry.lookup(row.op)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["shape", "dtype", "values", "attr", "attr"]))
        if kind == "attr" or not inputs:
            settable = [a for a in op.attrs if a.name not in ("op_role", "op_role_var",
                                                               "op_namescope",
                                                               "op_callstack")]
            if not settable:
                continue
            spec = draw(st.sampled_from(settable))
            attrs[spec.name] = hostile_attr(spec, draw)
            changes.append(f"attr {spec.name}={attrs[spec.name]!r}")
            continue
        slot, i, old = pick_input(inputs, draw)
        if kind == "shape":
            shape = tuple(draw(st.lists(st.sampled_from(DIMS), max_size=4)))
            new = arrays(old.dtype, shape, draw)
        elif kind == "dtype":
            new = arrays(draw(st.sampled_from(DTYPES)), old.shape, draw)
        else:
            new = arrays(old.dtype, old.shape, draw)
        changes.append(put_input(inputs, slot, i, new, kind))
    return replace(row, inputs=inputs, attrs=attrs, id=row.id + "-fuzzed"), changes


# --- running one example -------------------------------------------------------------------
@contextmanager
def watchdog():
    """A hang is a failure too: dump every thread's stack and stop after WATCHDOG_S. And
    a runaway allocation (by paddle_nb or by a reference) is a MemoryError, not the
    machine's OOM killer: the address space may grow by at most HEADROOM_BYTES."""
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    cap = used + HEADROOM_BYTES if hard == resource.RLIM_INFINITY else min(
        used + HEADROOM_BYTES, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        faulthandler.cancel_dump_traceback_later()


def reference_of(row, out_counts):
    """``{slot: [array or NotComputed]}``: what numpy computes for the changed row (the
    op's one reference, tests/numpy_interpreter.py's, or the row's own where it has one),
    or None where numpy cannot compute it."""
    try:
        with watchdog(), np.errstate(all="ignore"):
            if row.reference is None:
                return interpret(row.op, row.inputs, row.attrs, out_counts)
            out = row.reference(row.inputs, stored_attrs(row.op, row.attrs))
            return {slot: [np.asarray(v) for v in table.as_list(out[slot])]
                    for slot in out_counts}
    except Exception:       # noqa: BLE001 - any numpy failure means "no reference"
        return None


def same(actual, expected):
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    if expected.dtype.kind in "fc":
        tol = 1e-2 if expected.dtype == np.float16 else 1e-5
        return np.allclose(actual, expected, rtol=tol, atol=tol * 0.1, equal_nan=True)
    return np.array_equal(actual, expected)


def check_row(row, changes, place):
    note(f"{row.op} on {place.kind}: " + "; ".join(changes))
    original = FIRST_ROW[row.op]
    template = table.expected_outputs(original)             # output slots and counts
    out_counts = {slot: len(table.as_list(v)) for slot, v in template.items()}
    expected = reference_of(row, out_counts)
    if expected is not None and row.op == "feed":       # the test declares feed's Out
        template = {"Out": expected["Out"][0]}
    try:
        with watchdog(), np.errstate(all="ignore"):
            actual, declared = table.run_case(row, template, place)
    except PaddleNBError:
        return "refused"
    assert expected is not None, (
        f"{row.op} gave a result where numpy's reference cannot compute one: {changes}")
    for slot, wants in expected.items():
        assert len(actual[slot]) == len(wants), (slot, len(actual[slot]), len(wants))
        for i, (got, want) in enumerate(zip(actual[slot], wants)):
            where = f"{row.op} {slot}[{i}] after {changes}"
            if declared[slot][i] is not None:
                table.assert_declared_fits(declared[slot][i], got, where)
            if isinstance(want, NotComputed) or not row.compare_values:
                assert (got.shape, got.dtype) == (tuple(want.shape), want.dtype), where
            else:
                assert same(got, want), f"{where}: got {got!r}, numpy says {want!r}"
    return "ran"


@fuzzed(FORWARD_ROWS, FORWARD_EXAMPLES)
def test_forward_op_matches_numpy_or_refuses(row, data):
    changed, changes = data.draw(changed_rows(row))
    check_row(changed, changes, pd.CPUPlace())


@fuzzed(FORWARD_ROWS, CUDA_EXAMPLES)
def test_forward_op_on_cuda_matches_numpy_or_refuses(row, data):
    """The same property on CUDA (numba's simulator in CI: fewer examples)."""
    changed, changes = data.draw(changed_rows(row))
    check_row(changed, changes, pd.CUDAPlace(0))


# --- gradients --------------------------------------------------------------------------------
def floats64(shape, draw):
    """float64 values in +-[0.2, 1]: no input on relu's kink or log's pole."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return np.asarray(rng.uniform(0.2, 1.0, shape) * rng.choice([-1.0, 1.0], shape))


# warpctc, warprnnt: attributes with which the gradient op scales its result away from the
# loss's derivative by design, as Paddle's does (norm_by_times: 1 / steps; fastemit_lambda:
# FastEmit's symbol transitions); central differences cannot judge them, so a fuzzed
# gradient row keeps the row's value (the forward fuzz still draws them)
GRADIENT_SHAPING_ATTRS = {"warpctc": {"norm_by_times"}, "warprnnt": {"fastemit_lambda"}}


@st.composite
def changed_grad_rows(draw, row):
    """A gradient row with one or two changes: a differentiable input of another shape or
    other values, integer inputs (labels, masks) of hostile values, an attribute at an
    edge value. Everything stays float64, so central differences can judge."""
    inputs = {slot: list(v) if isinstance(v, list) else v for slot, v in row.inputs.items()}
    attrs, changes = dict(row.attrs), []
    op = registry.lookup(row.op)
    specs = [a for a in op.attrs if a.name not in GRADIENT_SHAPING_ATTRS.get(row.op, ())]
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["shape", "values", "attr"]))
        if kind == "attr" and specs:
            spec = draw(st.sampled_from(specs))
            # no 1e30: central differences with a step of 1e-6 cannot see past it
            attrs[spec.name] = hostile_attr(spec, draw, floats=HOSTILE_FLOATS[:-1])
            changes.append(f"attr {spec.name}={attrs[spec.name]!r}")
            continue
        slot, i, old = pick_input(inputs, draw)
        shape = tuple(draw(st.lists(st.sampled_from(DIMS[:4]), max_size=3))) \
            if kind == "shape" else old.shape
        new = floats64(shape, draw) if old.dtype.kind == "f" else arrays(old.dtype, shape, draw)
        changes.append(put_input(inputs, slot, i, new, kind))
    return replace(row, inputs=inputs, attrs=attrs, id=row.id + "-fuzzed"), changes


def reference_loss(row, feed_of, weights):
    """L = sum(Out * W) over the weighted outputs, by the numpy interpreter."""
    as_table_row = table.Case(row.id, row.op, feed_of, row.attrs, reference=None)
    out = reference_of(as_table_row, row.outputs)
    op_def = registry.lookup(row.op)
    values = [v for slot, vs in out.items() if not op_def.output(slot).intermediate
              for v in vs]
    return sum(float((np.asarray(v, np.float64) * w).sum()) for v, w in zip(values, weights))


def check_gradient_row(row, changes):
    note(f"{row.op}_grad: " + "; ".join(changes))
    try:
        with watchdog(), np.errstate(all="ignore"):
            prog, _, wrt, feed, grads, _, weights = grad_table._with_gradients(row)
            got = pd.Executor().run(prog, feed=feed, fetch_list=[g.name for g in grads],
                                    scope=pd.Scope())
    except PaddleNBError:
        return "refused"
    # the slot and position of each input, to rebuild the row's inputs around a change
    for (var, a), analytic in zip(wrt, got):
        # (the longest slot the name starts with: atan2's X1 and X2 end in digits too)
        slot = max((s for s in row.inputs if var.name.startswith(s)
                    and var.name[len(s):].isdigit()), key=len)
        i = int(var.name[len(slot):])
        assert analytic.shape == a.shape, f"d/d{var.name}: shape {analytic.shape} != {a.shape}"
        numeric = np.full(a.shape, np.nan)
        for idx in np.ndindex(a.shape):
            total = 0.0
            for sign in (1, -1):
                shifted = a.copy()
                shifted[idx] += sign * grad_table.EPS
                ins = dict(row.inputs)
                if isinstance(ins[slot], list):
                    ins[slot] = [shifted if j == i else x for j, x in enumerate(ins[slot])]
                else:
                    ins[slot] = shifted
                with np.errstate(all="ignore"):
                    loss = reference_loss(row, ins, weights)
                total += sign * loss
            numeric[idx] = total / (2 * grad_table.EPS)
        judged = np.isfinite(numeric)
        np.testing.assert_allclose(analytic[judged], numeric[judged], rtol=1e-4, atol=1e-5,
                                   err_msg=f"d/d{var.name} of {row.op} after {changes}")
    return "ran"


@fuzzed(GRAD_ROWS, GRADIENT_EXAMPLES)
def test_gradient_matches_central_differences_or_refuses(row, data):
    changed, changes = data.draw(changed_grad_rows(row))
    check_gradient_row(changed, changes)


def grad_op_type(op_type: str) -> str:
    """The type of ``op_type``'s gradient op: ``<type>_grad``, or what its Grad names
    (cross_entropy2's is cross_entropy_grad2, as Paddle's)."""
    grad = registry.lookup(op_type).grad
    return grad.op_type(op_type) if hasattr(grad, "op_type") else op_type + "_grad"


# Forward ops whose gradient is a registered <type>_grad op (the others' gradients are
# forward ops, fuzzed above): one row each.
GRAD_OP_ROWS = [r for r in GRAD_ROWS if registry.is_registered(grad_op_type(r.op))]


@fuzzed(GRAD_OP_ROWS, GRADIENT_EXAMPLES, ids=lambda row: grad_op_type(row.op))
def test_gradient_op_refuses_a_gradient_of_the_wrong_shape(row, data):
    """The <type>_grad op alone, as an edited or hand-built program has it, fed the real
    values of a row except one incoming gradient (an ``@GRAD`` input) of another shape:
    a gradient has its variable's shape, so the op must refuse (not broadcast it into a
    plausible, wrong dX)."""
    prog, _, _, feed, _, _, _ = grad_table._with_gradients(row)
    gop = next(op for op in prog.global_block().ops if op.type == grad_op_type(row.op))
    reads = [n for slot in gop.input_names for n in gop.input(slot)]
    values = dict(zip(reads, pd.Executor().run(prog, feed=feed, fetch_list=reads,
                                                scope=pd.Scope())))
    incoming = sorted(n for slot in gop.input_names if slot.endswith("@GRAD")
                      for n in gop.input(slot))
    name = data.draw(st.sampled_from(incoming))
    shape = tuple(data.draw(st.lists(st.sampled_from(DIMS[:4]), max_size=3)))
    if shape == values[name].shape or np.prod(shape) == values[name].size == 1:
        return                       # the same shape; or one element for one (a [1] loss)
    values[name] = floats64(shape, data.draw)
    note(f"{gop.type}: {name} of shape {list(shape)}")

    alone = pd.Program()
    blk = alone.global_block()
    for n, v in values.items():
        blk.create_var(n, list(v.shape), v.dtype.name)
    outputs = {slot: [blk.create_var(n).name for n in gop.output(slot)]
               for slot in gop.output_names}
    blk.append_op(gop.type, {slot: gop.input(slot) for slot in gop.input_names}, outputs,
                  gop.attrs, infer_shape=False)
    fetch = [n for ns in outputs.values() for n in ns if n != EMPTY_VAR]
    with watchdog(), pytest.raises(PaddleNBError), np.errstate(all="ignore"):
        pd.Executor().run(alone, feed=values, fetch_list=fetch, scope=pd.Scope())


# --- every op is driven ---------------------------------------------------------------------
# Ops that own a sub-block or read tensor arrays take programs, not a feed: their hostile
# inputs are driven by other tests instead. Sub-block references of the wrong type:
# test_hostile_programs.py and test_run_guards.py (recurrent also test_rnn.py); loops that
# never end: test_run_guards.py's step and byte limits; array positions out of range:
# test_index_ranges.py (and test_hostile_programs.py for write_to_array);
# tensor_array_to_tensor's axis: test_run_guards.py; lod_array_length: test_while.py.
# A transpiled program's ops that talk to parameter servers through a transport, and the
# server's op that owns optimize blocks: bad endpoints, received values of the wrong shape
# and dtype, a missing transport, in test_distributed_transpiler.py. (tests/op_kinds.py
# asks the registry which ops own blocks or are remote.)
DRIVEN_ELSEWHERE = op_kinds.BLOCK_OWNERS | op_kinds.REMOTE | op_kinds.TENSOR_ARRAY_OPS


def test_every_registered_op_is_fuzzed():
    """A newly registered op is fuzzed as soon as it has a row in the op table (forward)
    and, if it has a gradient op, in the gradient table; this fails until it does."""
    forward = {r.op for r in FORWARD_ROWS} | set(DRIVEN_ELSEWHERE)
    missing = [t for t in pd.registered_ops(include_grad=False) if t not in forward]
    assert not missing, f"ops the fuzz does not drive: {missing}"
    grad_ops = {grad_op_type(r.op) for r in GRAD_OP_ROWS}
    block_grads = {t + "_grad" for t in DRIVEN_ELSEWHERE}
    # gradients central differences cannot judge (random noise, statistics, symmetric X):
    # their forward ops are fuzzed, the gradients checked apart (test_op_gradients.py)
    block_grads |= {t + "_grad" for t in grad_table.TESTED_APART}
    missing = [t for t in pd.registered_ops() if registry.lookup(t).grad_of
               and t not in grad_ops | block_grads]
    assert not missing, f"gradient ops the fuzz does not drive: {missing}"
