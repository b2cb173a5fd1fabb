"""The PIR ops the translator handles itself, not through a row of op_table.py: parameters,
inputs and outputs (``p``, ``1.data``, ``1.fetch``), constants (``1.full``,
``1.full_int_array``, ``1.linspace``: kept as constants until a variable is needed), lists
(``0.combine``, ``0.split``) and the ops whose Fluid form takes more than one op
(``1.shape64``, ``1.arange``). Each is a function of the translator ``tr`` (reader.py)."""
from __future__ import annotations

from ...core import dtypes
from ...core.framework_pb2 import VarType
from . import format as F
from .format import PirFormatError
from .values import Const, const_dtype, fill_text

def parameter(tr, op, block, where, depth):
    attrs = op.get("A")
    if not isinstance(attrs, list) or not attrs or not isinstance(attrs[-1], str):
        raise PirFormatError(f"{where}: a parameter op's \"A\" is [..., name], got "
                             f"{attrs!r:.60}")
    result_attrs = op.get("OA", [1, 0, 1])     # persistable, stop_gradient, trainable
    if not isinstance(result_attrs, list) or len(result_attrs) != 3 or \
            not all(x in (0, 1) and type(x) in (int, bool) for x in result_attrs):
        raise PirFormatError(f"{where}: a parameter op's \"OA\" is [persistable, "
                             f"stop_gradient, trainable], each 0 or 1, got "
                             f"{result_attrs!r:.60}")
    persistable = bool(result_attrs[0])
    [(vid, t)] = tr.results(op, where, count=1)
    name = attrs[-1]
    if name in tr.used_names:
        raise PirFormatError(f"{where}: the parameter {name!r} is defined twice")
    var = tr.declare(block, name, vid, t, persistable=persistable)
    if persistable:
        var.desc.is_parameter = True
        var.desc.stop_gradient = bool(result_attrs[1])
    tr.define(vid, block, name if persistable else None)

def data(tr, op, block, where, depth):
    attrs = tr.read_attrs(op, where)
    name = attrs.get("name")
    if not isinstance(name, str) or not name:
        raise PirFormatError(f"{where}: a data op names its input (attribute \"name\")")
    [(vid, t)] = tr.results(op, where, count=1)
    if name in tr.used_names:
        raise PirFormatError(f"{where}: the input name {name!r} is used twice")
    var = tr.declare(block, name, vid, t)
    # whether gradients stop at the input: Paddle writes it per result ("OA"); kept so that
    # writing the program back says the same
    var.desc.stop_gradient = _first_flag(op, "stop_gradient", where)
    tr.define(vid, block, name)
    if not block.has_var("feed"):
        block.create_var("feed", type=VarType.FEED_MINIBATCH, persistable=True)
    block._insert_op(len(tr.feeds), "feed", inputs={"X": ["feed"]},
                     outputs={"Out": [name]}, attrs={"col": len(tr.feeds)})
    tr.feeds.append(name)


def _first_flag(op, name: str, where: str) -> bool:
    """The first result's flag ``name`` among an op's result attributes ("OA":
    ``[{"N": name, "AT": {"#": "0.a_array", "D": [{"#": "0.a_bool", "D": flag}]}}]``);
    False when the file does not say."""
    result_attrs = op.get("OA")
    if not isinstance(result_attrs, list):
        return False
    for a in result_attrs:
        if isinstance(a, dict) and a.get("N") == name:
            flags = F.decode_attr(a.get("AT"), f"{where} result attribute {name!r}")
            if isinstance(flags, list) and flags and isinstance(flags[0], bool):
                return flags[0]
    return False


def fetch(tr, op, block, where, depth):
    attrs = tr.read_attrs(op, where)
    [vid] = tr.operand_ids(op, where, count=1)
    name = tr.tensor(vid, block, where, 0)
    col = attrs.get("col", 0)
    if not block.has_var("fetch"):
        block.create_var("fetch", type=VarType.FETCH_LIST, persistable=True)
    block.append_op("fetch", inputs={"X": [name]}, outputs={"Out": ["fetch"]},
                    attrs={"col": col})
    for rid, _ in tr.results(op, where):
        tr.define(rid, block, name)

def full_int_array(tr, op, block, where, depth):
    attrs = tr.read_attrs(op, where)
    values = attrs.get("value")
    if not isinstance(values, list) or not all(type(v) is int for v in values):
        raise PirFormatError(f"{where}: \"value\" should be a list of ints, got "
                             f"{values!r:.60}")
    [(vid, t)] = tr.results(op, where, count=1)
    tr.define(vid, block, Const(values, const_dtype(attrs, "int64", where),
                                    [len(values)], vid))

def full(tr, op, block, where, depth):
    attrs = tr.read_attrs(op, where)
    [(vid, t)] = tr.results(op, where, count=1)
    shape = attrs.get("shape", [])
    value = attrs.get("value", 0.0)
    dtype = const_dtype(attrs, "float32", where)
    if dtype.startswith("int") or dtype == "bool":
        value = int(value) if value == value else 0
    tr.define(vid, block, Const(value, dtype, list(shape), vid))

def shape64(tr, op, block, where, depth):
    """Paddle 3's int64 shape: Fluid's ``shape`` (int32) and a ``cast``."""
    [vid_in] = tr.operand_ids(op, where, count=1)
    [(vid, t)] = tr.results(op, where, count=1)
    n = tr.number("shape64")
    as_int32 = tr.declare(block, f"shape64_{n}.tmp_int32", 0,
                             F.TensorType("tensor", "int32", t.shape)).name
    block.append_op("shape", {"Input": [tr.tensor(vid_in, block, where, 0)]},
                    {"Out": [as_int32]})
    name = tr.new_name(f"shape64_{n}.tmp_0", vid)
    tr.declare(block, name, vid, t)
    block.append_op("cast", {"X": [as_int32]}, {"Out": [name]},
                    {"in_dtype": dtypes.to_code("int32"),
                     "out_dtype": dtypes.to_code("int64")})
    tr.define(vid, block, name)

def arange(tr, op, block, where, depth):
    """Paddle's arange makes its ``dtype`` from bounds of any dtype (Python numbers come
    as float64 ``full``s); Fluid's ``range`` makes its Start's dtype. So each bound is
    made (a constant) or cast (a value) to ``dtype`` first."""
    dtype = tr.read_attrs(op, where).get("dtype", "int64")
    ids = tr.operand_ids(op, where)
    if len(ids) != 3:
        raise PirFormatError(f"{where}: an arange has 3 operands (start, end, step), has "
                             f"{len(ids)}")
    n = tr.number("arange")
    bounds = []
    for j, vid in enumerate(ids):
        ref = tr.get(vid, block, where, j)
        name = tr.new_name(f"arange_{n}.{('start', 'end', 'step')[j]}", 0)
        bound = tr.declare(block, name, 0, F.TensorType("tensor", dtype, [1])).name
        if isinstance(ref, Const):
            value = int(ref.value) if dtype.startswith("int") else float(ref.value)
            block.append_op("fill_constant", outputs={"Out": [bound]},
                            attrs={"shape": [1], "dtype": dtypes.to_code(dtype),
                                   "value": float(value), "str_value": fill_text(value)})
        else:
            source = tr.tensor(vid, block, where, j)
            block.append_op("cast", {"X": [source]}, {"Out": [bound]},
                            {"in_dtype": dtypes.to_code(block.var(source).dtype),
                             "out_dtype": dtypes.to_code(dtype)})
        bounds.append(bound)
    [(vid, t)] = tr.results(op, where, count=1)
    name = tr.new_name(f"arange_{n}.tmp_0", vid)
    tr.declare(block, name, vid, t)
    block.append_op("range", dict(zip(("Start", "End", "Step"), ([b] for b in bounds))),
                    {"Out": [name]})
    tr.define(vid, block, name)

def linspace(tr, op, block, where, depth):
    """Fluid has no linspace op; a linspace of constants (``paddle.linspace(0, 1, 5)``)
    is the constant it computes, as Paddle's kernel does: the first half counted up from
    start, the second down from stop, in double precision."""
    ids = tr.operand_ids(op, where)
    refs = [tr.get(v, block, where, j) for j, v in enumerate(ids)]
    if len(refs) != 3 or not all(isinstance(r, Const) for r in refs):
        raise PirFormatError(f"{where}: a linspace whose start, stop and number are "
                             f"computed at run time has no Fluid counterpart; only one "
                             f"of constants can be read")
    start, stop, num = (float(r.value) for r in refs)
    num = int(num)
    step = (stop - start) / (num - 1) if num > 1 else 0.0
    values = [start + step * i if i < num // 2 else stop - step * (num - 1 - i)
              for i in range(num)]
    dtype = tr.read_attrs(op, where).get("dtype", "float32")
    if dtype.startswith("int"):
        values = [int(v) for v in values]
    [(vid, t)] = tr.results(op, where, count=1)
    tr.define(vid, block, Const(values, dtype, [num], vid))

def combine(tr, op, block, where, depth):
    ids = tr.operand_ids(op, where)
    refs = [tr.get(v, block, where, j) for j, v in enumerate(ids)]
    [(vid, t)] = tr.results(op, where, count=1)
    tr.define(vid, block, refs)

def split(tr, op, block, where, depth):
    [src] = tr.operand_ids(op, where, count=1)
    ref = tr.get(src, block, where, 0)
    results = tr.results(op, where)
    if not isinstance(ref, list) or len(ref) != len(results):
        raise PirFormatError(f"{where}: splits %{src} into {len(results)} values; it "
                             f"holds {len(ref) if isinstance(ref, list) else 'one'}")
    for (vid, _), r in zip(results, ref):
        tr.define(vid, block, r)
