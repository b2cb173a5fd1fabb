"""Writing blocks and scopes as Paddle 3's PIR: :func:`program_to_pir`.

The reader's table read backwards. A Fluid program names variables and lets ops write
them again; PIR defines each value once. So the writer walks the ops in order keeping, per
block, which value each variable name holds *now* (a :class:`_Names` chain: a region sees
its parents' names), and every op reads the current values and binds its outputs to new
ones. What else changes on the way:

==========================================  ==============================================
Fluid (this package, Paddle 2)              PIR (Paddle 3.3.1 reads it)
==========================================  ==============================================
a persistable variable                      a parameter op ``p`` (its value: .pdiparams)
``feed`` / ``fetch``                        ``1.data`` / ``1.fetch``
an attribute PIR takes as an operand        ``1.full_int_array`` / ``1.full`` feeding it
an attribute tensor (``Shape``)             the operand itself
a slot holding a list                       ``0.combine``; a list output: ``0.split``
``assign``                                  nothing: the name now holds the same value
``conditional_block`` + ``logical_not`` +   one ``1.if`` whose two regions end in
``conditional_block`` + ``select_input``    ``2.yield`` (what Paddle 2's ``cond`` writes)
a ``conditional_block`` alone (a Switch     ``1.if``: the false region yields the values
case writing variables that hold values)    its variables held before it
``while`` over a sub-block                  ``1.while``: the loop variables are block
                                            arguments, the body yields [cond, vars...]
``mul``, ``elementwise_*`` with ``axis``    ``1.matmul`` / ``1.add`` ..., reshapes around
``fill_constant``, ``assign_value``         ``1.full`` (``1.full_with_tensor`` for a shape
                                            given by tensors), ``1.full_int_array`` or
                                            ``1.full`` + ``1.assign_value_``
==========================================  ==============================================

What Paddle writes for each PIR op (its attributes in order and their kinds, its results,
the constants feeding its operands) is ``signatures.json``, derived from Paddle itself. An op
the writer cannot translate is a :class:`PirWriteError` naming the block, the op's index
and its type; nothing is returned, so no caller writes a file Paddle cannot read.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ...core import dtypes, registry
from ...core.errors import PaddleNBError
from ...core.framework_pb2 import VarType
from . import format as F
from .op_table import ANY, BY_PIR, Attr, OpRow
from .signatures import SIGNATURES

NULL_TYPE = {"#": "NULL"}
UNDEFINED_DTYPE = "Undefined(ALL_DTYPE)"   # PIR's "the input's dtype" (Fluid's -1)


class PirWriteError(PaddleNBError, ValueError):
    """A program that cannot be written as PIR (an op with no PIR counterpart here, a
    control-flow shape the writer does not translate); the message names the op."""


def program_to_pir(program) -> str:
    """``program`` (an inference program with feed and fetch ops, as
    ``pd.io.load_inference_model`` or ``program_from_pir`` return it) as the JSON text of a
    PIR file, format version 4, which paddlepaddle 3.3.1 loads with ``paddle.jit.load`` and
    ``paddle.inference``. Its parameters are :func:`pir_parameters`, in that order."""
    doc = _Writer(program).document()
    return json.dumps(doc, separators=(",", ":"), sort_keys=True, allow_nan=False)


def pir_parameters(program) -> list[str]:
    """The persistable variables the written file declares (parameter ops), sorted by name:
    the tensors of its ``.pdiparams``, in the order Paddle 3 reads them."""
    gb = program.global_block()
    used = {n for b in program.blocks for op in b.ops
            for n in op.input_arg_names + op.output_arg_names}
    return sorted(name for name, var in gb.vars.items()
                  if var.persistable and var.type == VarType.LOD_TENSOR and name in used)


# --- values and names -------------------------------------------------------------------------
@dataclass
class _Value:
    id: int
    type: dict                  # the JSON type Paddle reads
    dtype: str | None = None
    shape: list | None = None


class _Names:
    """Which value each variable name holds now, in one block; a region's names are a
    child of its parent's, so it reads outer values and its writes stay inside. A name
    bound to a string cannot be read: the string says why (a result PIR does not have)."""

    def __init__(self, parent: "_Names | None" = None):
        self.parent, self.bound = parent, {}

    def get(self, name: str):
        names = self
        while names is not None:
            if name in names.bound:
                return names.bound[name]
            names = names.parent
        return None

    def set(self, name: str, value) -> None:
        self.bound[name] = value


def _rows_by_fluid() -> dict[str, list[OpRow]]:
    """op_table.py read backwards: Fluid op type -> the rows of the PIR ops it may be."""
    rows: dict[str, list[OpRow]] = {}
    for r in BY_PIR.values():
        rows.setdefault(r.fluid, []).append(r)
    return rows


# --- the writer -------------------------------------------------------------------------------
class _Writer:
    def __init__(self, program):
        self.program = program
        self.rows = _rows_by_fluid()
        self.next_id, self.next_arg = 1, -1
        self.regions, self.blocks = 1, 1        # region_0 / block_0: the program's own
        self.ops: list = []                     # the op list being written

    def document(self) -> dict:
        gb = self.program.global_block()
        if not any(op.type == "fetch" for op in gb.ops):
            raise PirWriteError("the program has no fetch op: a PIR file is an inference "
                                "program (feed and fetch ops, as save_inference_model "
                                "writes it)")
        top, names = self.ops, _Names()
        for name in pir_parameters(self.program):
            self._parameter(gb.var(name), names)
        # the inputs, in feed-column order (paddle.jit.load's positional arguments)
        feeds = sorted((op.attr("col", 0), k) for k, op in enumerate(gb.ops)
                       if op.type == "feed")
        for _, k in feeds:
            self._data(gb.ops[k], names)
        self._block(gb, names)
        block = {"#": "block_0", "args": [], "ops": top}
        return {"base_code": {"magic": F.MAGIC, "trainable": True,
                              "version": F.WRITTEN_VERSION},
                "program": {"regions": [{"#": "region_0", "blocks": [block]}]}}

    # --- blocks ---------------------------------------------------------------------------
    def _block(self, block, names: _Names) -> None:
        ops, i = block.ops, 0
        while i < len(ops):
            where = f"block {block.idx}, op {i} ({ops[i].type})"
            try:
                i += self._op(block, ops, i, names, where)
            except PirWriteError as e:
                if str(e).startswith("block "):  # said where already (maybe deeper)
                    raise
                raise PirWriteError(f"{where}: {e}") from None
            except (PaddleNBError, KeyError, TypeError, ValueError) as e:
                raise PirWriteError(f"{where}: {e}") from None

    def _op(self, block, ops, i, names, where) -> int:
        """Write op ``i`` (and the ops of a pattern it starts); returns how many it took."""
        op = ops[i]
        special = _SPECIAL.get(op.type)
        if special is not None:
            return special(self, block, ops, i, names, where) or 1
        rows = self.rows.get(op.type)
        if not rows:
            raise PirWriteError(f"{where}: the Fluid op {op.type!r} has no PIR counterpart "
                                f"in paddle_nb/io/pir/op_table.py, so this program cannot "
                                f"be written as PIR")
        self._generic(op, self._choose(op, rows), names, where)
        return 1

    def _choose(self, op, rows: list[OpRow]) -> OpRow:
        """Of the PIR ops one Fluid op may be, the one Paddle writes for this op."""
        if op.type == "batch_norm":     # Fluid's batch norm updates Mean in place
            in_place = op.output("MeanOut") == op.input("Mean")
            rows = [r for r in rows if r.pir.endswith("_") == in_place] or rows
        # a row's fixed attributes say which op it is (tril_triu: lower=True is tril)
        rows = [r for r in rows if all(self._fixed_holds(op, name, value)
                                       for name, value in r.fixed.items())] or rows
        rows = [r for r in rows if "1." + r.pir in SIGNATURES] or rows
        # then the one that uses the attributes this op sets (split: num, or sections)
        return max(rows, key=lambda r: self._attributes_used(op, r))

    def _attributes_used(self, op, row: OpRow) -> int:
        sig = SIGNATURES.get("1." + row.pir)
        names = {spec.name for spec in row.ins if isinstance(spec, Attr)}
        names |= {row.attrs.get(a, a) for a, _, _ in (sig.attrs if sig else ())}
        return sum(1 for n in names if self._attr_value(op, n) not in (None, 0, [], "", False))

    def _fixed_holds(self, op, name: str, value) -> bool:
        if name == "axis" and "X" in op.input_names and "Y" in op.input_names:
            return self._axis_written(op)       # an elementwise op's axis: see below
        return self._attr_value(op, name) in (value, None)

    # --- writing ops ----------------------------------------------------------------------
    def _emit(self, name: str, operands, attrs, types, *, regions=None,
              stop_gradient=None, oa=None) -> list[_Value]:
        values = [_Value(self._new_id(), t, *_dtype_shape(t)) for t in types]
        op = {"#": name, "A": [{"AT": at, "N": n} for n, at in attrs],
              "I": [{"%": v.id if isinstance(v, _Value) else 0} for v in operands],
              "O": [{"%": v.id, "TT": v.type} for v in values]}
        if oa is None:
            flags = stop_gradient if stop_gradient is not None else [False] * len(values)
            oa = [_bool_array("stop_gradient", flags)] if values else []
        op["OA"] = oa
        if regions is not None:
            op["regions"] = regions
        self.ops.append(op)
        return values

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def _parameter(self, var, names: _Names) -> None:
        t = _var_type(var)
        value = _Value(self._new_id(), t, *_dtype_shape(t))
        stop = bool(var.stop_gradient)
        self.ops.append({"#": "p", "A": [0, 1, 1, var.name], "DA": [],
                         "O": {"%": value.id, "TT": t}, "OA": [1, int(stop), int(not stop)],
                         "QA": []})
        names.set(var.name, value)

    def _read(self, names: _Names, name: str, where: str) -> _Value:
        value = names.get(name)
        if isinstance(value, _Value):
            return value
        if isinstance(value, str):
            raise PirWriteError(f"{where}: reads {name!r}, which {value}")
        raise PirWriteError(f"{where}: reads {name!r}, which no op before it writes and no "
                            f"feed or parameter provides")

    def _type_of(self, block, name: str) -> dict:
        return _var_type(block.var(name))

    # --- the generic op: a row of the table read backwards --------------------------------
    def _generic(self, op, row: OpRow, names: _Names, where: str) -> None:
        sig = _signature(row.pir, where)
        block = op.block
        used_slots = set()
        operands = []
        for j, spec in enumerate(row.ins):
            operands.append(self._operand(op, spec, j, sig, names, where, used_slots))
        unused = [s for s in op.input_names if op.input(s) and s not in used_slots]
        if unused:
            raise PirWriteError(f"{where}: the input slot(s) {unused} have no operand in PIR's "
                                f"{row.pir} here (an attribute given as a tensor list?); "
                                f"this op cannot be written")
        attrs = self._attrs(op, row, sig, where)
        for fluid_name, fixed in row.fixed.items():
            if not self._fixed_holds(op, fluid_name, fixed):
                raise PirWriteError(f"{where}: {fluid_name}={op.attr(fluid_name)!r}; PIR's "
                                    f"{row.pir} has no such attribute (only "
                                    f"{fluid_name}={fixed!r} can be written)")
        slots = list(row.outs[:len(sig.results)])
        slots += [None] * (len(sig.results) - len(slots))
        types, bound = [], []
        for i, slot in enumerate(slots):
            names_out = op.output(slot.rstrip("*")) if slot else []
            if not names_out:
                types.append(NULL_TYPE)
            elif slot.endswith("*"):
                types.append({"#": "0.t_vec",
                              "D": [self._type_of(block, n) for n in names_out]})
                bound.append((i, names_out))
            else:
                types.append(self._type_of(block, names_out[0]))
                bound.append((i, names_out[0]))
        results = self._emit("1." + row.pir, operands, attrs, types)
        written = set()
        for i, target in bound:
            if isinstance(target, list):
                items = self._emit("0.split", [results[i]], [], results[i].type["D"])
                for n, v in zip(target, items):
                    names.set(n, v)
                written.update(target)
            else:
                names.set(target, results[i])
                written.add(target)
        for slot in op.output_names:            # outputs PIR does not have (XShape)
            for n in op.output(slot):
                if n not in written:
                    names.set(n, f"is {row.fluid}'s {slot}, which PIR's {row.pir} does not "
                                 f"compute")

    def _operand(self, op, spec, j, sig, names, where, used_slots):
        if spec is None:                         # an operand Fluid has no slot for
            return self._constant_for(sig, j, None, where) if j in sig.constants else 0
        if isinstance(spec, Attr):
            if spec.slot and op.input(spec.slot):
                used_slots.add(spec.slot)
                return self._single(op, spec.slot, names, where)
            value = self._attr_value(op, spec.name)
            if value is None:
                raise PirWriteError(f"{where}: has neither the attribute {spec.name!r} nor a "
                                    f"tensor for it, which PIR's operand {j} needs")
            return self._constant_for(sig, j, value, where, spec.dtype)
        if spec.endswith("*"):
            slot = spec[:-1]
            used_slots.add(slot)
            values = [self._read(names, n, where) for n in op.input(slot)]
            return self._combine(values)
        used_slots.add(spec)
        if not op.input(spec):
            return 0                             # an optional input left empty
        if spec == "Y" and "axis" in op.attr_names and self._broadcasts(op):
            return self._broadcast_y(op, names, where)
        return self._single(op, spec, names, where)

    def _single(self, op, slot, names, where) -> _Value:
        arg = op.input(slot)
        if len(arg) != 1:
            raise PirWriteError(f"{where}: the slot {slot} holds {len(arg)} variables; PIR's "
                                f"operand takes one")
        return self._read(names, arg[0], where)

    def _combine(self, values: list[_Value]) -> _Value:
        [vec] = self._emit("0.combine", values, [], [{"#": "0.t_vec",
                                                       "D": [v.type for v in values]}])
        return vec

    def _attr_value(self, op, name: str):
        """The op's attribute as PIR says it (:data:`_AS_PIR_SAYS_IT`), or the default its
        declaration gives."""
        adjust = _AS_PIR_SAYS_IT.get((op.type, name))
        if adjust is not None:
            return adjust(op)
        if op.has_attr(name):
            return op.attr(name)
        decl = registry.lookup(op.type).attr(name) if registry.is_registered(op.type) \
            else None
        return decl.default if decl is not None else None

    def _attrs(self, op, row: OpRow, sig, where: str) -> list:
        out = []
        for pir_name, kind, seen in sig.attrs:
            fluid_name = row.attrs.get(pir_name, pir_name)
            value = self._attr_value(op, fluid_name)
            if value is None:                    # an attribute only PIR has
                value = row.ignored.get(pir_name, ANY)
                if value is ANY:                 # any value will do: Paddle's own, or for
                    value = seen                 # a dtype, the dtype of what the op makes
                    if kind == "1.a_dtype" and op.output_arg_names:
                        value = op.block.var(op.output_arg_names[0]).dtype
            elif fluid_name in row.dtype_attrs or kind == "1.a_dtype":
                value = self._dtype_name(op, value)
            out.append((pir_name, _encode(value, kind, f"{where} attribute {pir_name!r}")))
        return out

    def _dtype_name(self, op, value) -> str:
        if value == "undefined":                 # the reader's name for it
            return UNDEFINED_DTYPE
        if isinstance(value, str):
            return value
        if value == -1:                          # Fluid's "as the input"
            if op.type == "fill_any_like":
                return op.block.var(op.input("X")[0]).dtype
            return UNDEFINED_DTYPE
        return dtypes.name(int(value))

    # --- constants ------------------------------------------------------------------------
    def _constant_for(self, sig, j, value, where, dtype="int64") -> _Value:
        """Operand ``j``'s constant made the way Paddle makes it (signature: ``constants``)."""
        maker, const_dtype, shape = sig.constants.get(j, (None, None, None))
        if maker == "1.full_int_array" or maker is None and isinstance(value, (list, tuple)):
            return self._full_int_array(list(value if isinstance(value, (list, tuple))
                                             else [value]), const_dtype or "int64")
        if isinstance(value, (list, tuple)):
            if len(value) != 1:
                raise PirWriteError(f"{where}: operand {j} is one number in PIR; the Fluid "
                                    f"attribute holds {list(value)}")
            value = value[0]
        return self._full(value if value is not None else 0, const_dtype or dtype,
                          shape if shape is not None else [1])

    def _full_int_array(self, values: list, dtype: str = "int64") -> _Value:
        t = F.encode_tensor_type(dtype, [len(values)])
        [v] = self._emit("1.full_int_array", [], [
            ("value", F.encode_array([int(x) for x in values], "0.a_i64")),
            ("dtype", F.encode_attr(dtype, "1.a_dtype")),
            ("place", F.encode_attr([1, 0, ""], "1.a_place"))], [t], stop_gradient=[True])
        return v

    def _full(self, value, dtype: str, shape, place=(1, 0, "")) -> _Value:
        t = F.encode_tensor_type(dtype, shape)
        [v] = self._emit("1.full", [], [
            ("shape", F.encode_attr([int(d) for d in shape], "1.a_intarray")),
            ("value", _encode(float(value), "0.a_f64", "full")),
            ("dtype", F.encode_attr(dtype, "1.a_dtype")),
            ("place", F.encode_attr(list(place), "1.a_place"))], [t], stop_gradient=[True])
        return v

    def _reshape(self, value: _Value, shape: list) -> _Value:
        target = self._full_int_array(shape)
        t = F.encode_tensor_type(value.dtype, shape)
        [v] = self._emit("1.reshape", [value, target], [], [t])
        return v

    # --- elementwise ops with Fluid's axis ------------------------------------------------
    def _axis_written(self, op) -> bool:
        """Is Fluid's ``axis`` of this elementwise op said in PIR (by numpy's broadcast, or
        by the reshape of :meth:`_broadcast_y`)?"""
        rx, ry = (len(op.block.var(op.input(s)[0]).shape) for s in ("X", "Y"))
        return op.attr("axis", -1) in (-1, rx - ry) or ry <= rx

    def _broadcasts(self, op) -> bool:
        """Does Fluid's ``axis`` say something numpy's trailing broadcast does not?"""
        axis = op.attr("axis", -1)
        rx, ry = (len(op.block.var(op.input(s)[0]).shape) for s in ("X", "Y"))
        return axis not in (-1, None) and ry < rx and axis != rx - ry

    def _broadcast_y(self, op, names, where) -> _Value:
        """Y reshaped so that it lines up with X from ``axis`` on, as Paddle's translator does
        (``[4]`` against ``[N, 4, H, W]`` at axis 1 becomes ``[1, 4, 1, 1]``)."""
        x = op.block.var(op.input("X")[0])
        y_value = self._single(op, "Y", names, where)
        y_shape = list(y_value.shape or op.block.var(op.input("Y")[0]).shape)
        axis = op.attr("axis")
        shape = [1] * axis + y_shape + [1] * (len(x.shape) - axis - len(y_shape))
        if sum(d < 0 for d in shape) > 1:
            raise PirWriteError(f"{where}: Y {y_shape} at axis {axis} has more than one "
                                f"unknown dimension; it cannot be reshaped to line up with X")
        return self._reshape(y_value, shape)

    # --- feeds, fetches and the special ops ------------------------------------------------
    def _data(self, op, names):
        [name] = op.output("Out")
        block = op.block
        var = block.var(name)
        t = _var_type(var)
        [v] = self._emit("1.data", [], [
            ("name", F.encode_attr(name, "0.a_str")),
            ("shape", F.encode_attr([int(d) for d in var.shape], "1.a_intarray")),
            ("dtype", F.encode_attr(_numpy_name(var.dtype), "1.a_dtype")),
            ("place", F.encode_attr([0, 0, ""], "1.a_place"))], [t],
            stop_gradient=[bool(var.stop_gradient)])
        names.set(name, v)

    def _fetch(self, block, ops, i, names, where):
        op = ops[i]
        [name] = op.input("X")
        value = self._read(names, name, where)
        self._emit("1.fetch", [value], [("name", F.encode_attr(name, "0.a_str")),
                                        ("col", F.encode_attr(op.attr("col", 0), "0.a_i32"))],
                   [value.type], oa=[_bool_array("persistable", [True]),
                                     _bool_array("stop_gradient", [False])])

    def _assign(self, block, ops, i, names, where):
        """A copy is the same value under another name: nothing to write."""
        op = ops[i]
        [src], [dst] = op.input("X"), op.output("Out")
        names.set(dst, self._read(names, src, where))

    def _assign_value(self, block, ops, i, names, where):
        """A constant: a 1-D list of ints is PIR's ``full_int_array`` (what the reader makes
        of one); anything else is written as Paddle writes ``paddle.to_tensor([...])``: a
        ``full`` placeholder that ``assign_value_`` fills (values as doubles)."""
        op = ops[i]
        dtype = dtypes.name(op.attr("dtype"))
        shape = [int(d) for d in op.attr("shape", [])]
        values = next((list(op.attr(f)) for f in _VALUE_FIELDS if op.attr(f)), [])
        [out] = op.output("Out")
        if dtype in ("int32", "int64") and len(shape) == 1:
            names.set(out, self._full_int_array(values, dtype))
            return
        if math.prod(shape) != len(values):
            raise PirWriteError(f"{where}: {len(values)} values for the shape {shape}")
        sig = _signature("assign_value_", where)
        placeholder = self._full(0, dtype, shape, place=(0, 0, ""))
        given = {"shape": shape, "dtype": _numpy_name(dtype),
                 "values": [float(v) for v in values]}
        attrs = [(n, _encode(given.get(n, seen), kind, f"{where} attribute {n!r}"))
                 for n, kind, seen in sig.attrs]
        [v] = self._emit("1.assign_value_", [placeholder], attrs,
                         [F.encode_tensor_type(_numpy_name(dtype), shape)])
        names.set(out, v)

    def _fill_constant(self, block, ops, i, names, where):
        op = ops[i]
        [out] = op.output("Out")
        t = self._type_of(block, out)
        dtype = dtypes.name(op.attr("dtype"))
        value = _fill_value(op)
        if not any(op.input(s) for s in ("ValueTensor", "ShapeTensor", "ShapeTensorList")):
            [v] = self._emit("1.full", [], [
                ("shape", F.encode_attr([int(d) for d in op.attr("shape", [])],
                                        "1.a_intarray")),
                ("value", _encode(value, "0.a_f64", "value")),
                ("dtype", F.encode_attr(_numpy_name(dtype), "1.a_dtype")),
                ("place", F.encode_attr([1, 0, ""], "1.a_place"))], [t], stop_gradient=[True])
            names.set(out, v)
            return
        fill = (self._single(op, "ValueTensor", names, where) if op.input("ValueTensor")
                else self._full(value, "float32", [1]))
        if op.input("ShapeTensor"):
            shape = self._single(op, "ShapeTensor", names, where)
        elif op.input("ShapeTensorList"):
            shape = self._shape_from_list(op, names, where)
        else:
            shape = self._full_int_array(list(op.attr("shape", [])))
        [v] = self._emit("1.full_with_tensor", [fill, shape],
                         [("dtype", F.encode_attr(_numpy_name(dtype), "1.a_dtype"))], [t])
        names.set(out, v)

    def _shape_from_list(self, op, names, where) -> _Value:
        """ShapeTensorList: one tensor per dimension, made one shape tensor (0-D items are
        stacked, as Paddle does; one-element items are concatenated)."""
        items = [self._read(names, n, where) for n in op.input("ShapeTensorList")]
        dtype = items[0].dtype or "int64"
        vec = self._combine(items)
        t = F.encode_tensor_type(dtype, [len(items)])
        if all(v.shape == [] for v in items):
            [v] = self._emit("1.stack", [vec], [("axis", F.encode_attr(0, "0.a_i32"))], [t],
                             stop_gradient=[True])
        else:
            axis = self._full(0, "int32", [1])
            [v] = self._emit("1.concat", [vec, axis], [], [t], stop_gradient=[True])
        return v

    def _mul(self, block, ops, i, names, where):
        """Fluid's ``mul`` flattens X to 2-D at x_num_col_dims and Y at y_num_col_dims; PIR
        has only ``matmul``, with reshapes around it where the inputs are not 2-D."""
        op = ops[i]
        x, y = (self._single(op, s, names, where) for s in ("X", "Y"))
        kx, ky = op.attr("x_num_col_dims", 1), op.attr("y_num_col_dims", 1)
        [out] = op.output("Out")
        out_shape = list(block.var(out).shape)
        flat_x, flat_y = _flat2d(x.shape, kx, where, "X"), _flat2d(y.shape, ky, where, "Y")
        if flat_x != x.shape:
            x = self._reshape(x, flat_x)
        if flat_y != y.shape:
            y = self._reshape(y, flat_y)
        t2 = F.encode_tensor_type(x.dtype, [flat_x[0], flat_y[1]])
        [v] = self._emit("1.matmul", [x, y], [("transpose_x", F.encode_attr(False, "0.a_bool")),
                                              ("transpose_y", F.encode_attr(False, "0.a_bool"))],
                         [t2])
        if len(out_shape) != 2:
            if sum(d < 0 for d in out_shape) > 1:
                raise PirWriteError(f"{where}: the output {out_shape} has more than one "
                                    f"unknown dimension; mul cannot be written as matmul")
            v = self._reshape(v, out_shape)
        names.set(out, v)

    def _select_input(self, block, ops, i, names, where):
        op = ops[i]
        mask = self._single(op, "Mask", names, where)
        xs = [self._read(names, n, where) for n in op.input("X")]
        [out] = op.output("Out")
        [v] = self._emit("1.select_input", [mask, *xs], [], [self._type_of(block, out)])
        names.set(out, v)

    # --- control flow ---------------------------------------------------------------------
    def _conditional_block(self, block, ops, i, names, where):
        """Paddle 2's ``cond`` (and the reader's ``1.if``): conditional_block(c),
        logical_not(c), conditional_block(not c), cast(c), select_input... -> one ``1.if``
        whose branches yield what select_input picks. Any other conditional_block (a
        Switch case) is an ``1.if`` of its own: the true branch yields what its block
        writes, the false branch the values those variables held before it."""
        if not ops[i].attr("is_scalar_condition", False):
            raise PirWriteError(f"{where}: a row-wise conditional_block (is_scalar_condition "
                                f"false: IfElse's) has no PIR counterpart")
        found = _if_pattern(ops, i)
        if found is None:
            self._lone_conditional_block(block, ops[i], names, where)
            return 1
        true_op, false_op, selects, taken = found
        cond = self._single(true_op, "Cond", names, where)
        outs = [s.output("Out")[0] for s in selects]
        results = self._emit("1.if", [cond], [], [self._type_of(block, o) for o in outs],
                             regions=[])
        if_op = self.ops[-1]
        for branch, owner, pick in (("true", true_op, 1), ("false", false_op, 0)):
            yielded = [s.input("X")[pick] for s in selects]
            sub = self.program.block(owner.attr("sub_block"))
            if_op["regions"].append(self._region(sub, names, yielded,
                                                 f"{where} {branch} branch"))
        for o, v in zip(outs, results):
            names.set(o, v)
        for n in true_op.output("Out") + false_op.output("Out"):
            if n not in outs and not isinstance(names.get(n), _Value):
                names.set(n, "is written in one branch of a cond only")
        return taken

    def _lone_conditional_block(self, block, op, names, where):
        outs = op.output("Out")
        before = [names.get(n) for n in outs]
        missing = [n for n, v in zip(outs, before) if not isinstance(v, _Value)]
        if missing:
            raise PirWriteError(f"{where}: this conditional_block writes {missing}, which hold "
                                f"no value before it, so PIR's if has nothing to give when "
                                f"the condition is false (Paddle's cond pairs it with a "
                                f"second conditional_block and select_input)")
        cond = self._single(op, "Cond", names, where)
        results = self._emit("1.if", [cond], [], [v.type for v in before], regions=[])
        if_op = self.ops[-1]
        sub = self.program.block(op.attr("sub_block"))
        if_op["regions"].append(self._region(sub, names, outs, f"{where} true branch"))
        if_op["regions"].append(self._region(None, names, outs, f"{where} false branch"))
        for n, v in zip(outs, results):
            names.set(n, v)

    def _region(self, sub, names, yielded, where, args=()) -> dict:
        """The region of a control-flow op: the ops of the block ``sub`` (None: no ops),
        then ``2.yield`` of ``yielded`` (variable names, read in the region)."""
        inner = _Names(names)
        for name, value in args:
            inner.set(name, value)
        outer_ops, self.ops = self.ops, []
        region_id, block_id = self.regions, self.blocks
        self.regions, self.blocks = self.regions + 1, self.blocks + 1
        if sub is not None:
            self._block(sub, inner)
        self._emit("2.yield", [self._read(inner, n, where) for n in yielded], [], [],
                   oa=[])
        ops, self.ops = self.ops, outer_ops
        block = {"#": f"block_{block_id}",
                 "args": [{"#": v.id, "TT": v.type} for _, v in args], "ops": ops}
        return {"#": f"region_{region_id}", "blocks": [block]}

    def _while(self, block, ops, i, names, where):
        """``while``: the variables it writes that hold a value before it are carried
        (operands, block arguments, results); the body yields [condition, carried...]."""
        op = ops[i]
        [cond_name] = op.input("Condition")
        cond = self._read(names, cond_name, where)
        carried = [n for n in op.output("Out")
                   if n != cond_name and isinstance(names.get(n), _Value)]
        initial = [names.get(n) for n in carried]
        results = self._emit("1.while", [cond, *initial], [],
                             [v.type for v in initial], regions=[])
        while_op = self.ops[-1]
        args = []
        for n, v in zip(carried, initial):
            args.append((n, _Value(self.next_arg, v.type, v.dtype, v.shape)))
            self.next_arg -= 1
        body = self.program.block(op.attr("sub_block"))
        while_op["regions"].append(self._region(body, names, [cond_name, *carried],
                                                f"{where} body", args))
        for n, v in zip(carried, results):
            names.set(n, v)
        for n in op.output("Out"):
            if n not in carried:
                names.set(n, "is the loop's condition or a variable of its body, which "
                             "PIR's while does not return")


_VALUE_FIELDS = ("fp32_values", "int32_values", "int64_values", "bool_values", "fp64_values")
INT32_MIN = -2 ** 31


def _strided_ends(op) -> list:
    """Fluid's strided_slice runs a negative stride through index 0 when the end is -1;
    Paddle 3 reads -1 as the last element, and goes through index 0 for an end before the
    axis: INT32_MIN (what Paddle saves for ``x[::-1]``)."""
    ends, strides = list(op.attr("ends", [])), op.attr("strides", [])
    return [INT32_MIN if stride < 0 and end == -1 else end
            for end, stride in zip(ends, strides)]


# Fluid attributes PIR says otherwise: (op type, attribute) -> its value as PIR has it
_AS_PIR_SAYS_IT = {("strided_slice", "ends"): _strided_ends}
for _reduce in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                "reduce_all", "reduce_any"):
    # PIR reduces over every axis when the axis list is empty; Fluid says reduce_all
    _AS_PIR_SAYS_IT[(_reduce, "dim")] = lambda op: [] if op.attr("reduce_all", False) \
        else list(op.attr("dim", []))

_SPECIAL = {"feed": lambda *args: 1,           # written first, as 1.data: see document()
            "fetch": _Writer._fetch, "assign": _Writer._assign,
            "assign_value": _Writer._assign_value, "fill_constant": _Writer._fill_constant,
            "mul": _Writer._mul, "select_input": _Writer._select_input,
            "conditional_block": _Writer._conditional_block, "while": _Writer._while}


# --- helpers ----------------------------------------------------------------------------------
def _signature(pir_name: str, where: str):
    sig = SIGNATURES.get("1." + pir_name)
    if sig is None:
        raise PirWriteError(f"{where}: no signature for PIR's {pir_name} in "
                            f"paddle_nb/io/pir/signatures.json (what Paddle writes for it is "
                            f"not known here: add the op to tests/fixtures/pir/"
                            f"derive_signatures.py and re-run it)")
    return sig


def _if_pattern(ops, i):
    """(true op, false op, select_inputs, how many ops) when ops[i:] is Paddle's cond."""
    cb = ops[i]
    [c] = cb.input("Cond") or [None]
    k = i + 1
    if k + 2 >= len(ops) or ops[k].type != "logical_not" or ops[k].input("X") != [c]:
        return None
    not_c = ops[k].output("Out")
    false_op = ops[k + 1]
    if false_op.type != "conditional_block" or false_op.input("Cond") != not_c:
        return None
    k += 2
    selects = []
    if k < len(ops) and ops[k].type == "cast" and ops[k].input("X") == [c]:
        mask = ops[k].output("Out")
        k += 1
        while k < len(ops) and ops[k].type == "select_input" and ops[k].input("Mask") == mask \
                and len(ops[k].input("X")) == 2:
            selects.append(ops[k])
            k += 1
    return cb, false_op, selects, k - i


def _flat2d(shape, k: int, where: str, slot: str) -> list:
    shape = list(shape)
    if len(shape) == 2 and k == 1:
        return shape
    head, tail = shape[:k], shape[k:]
    dims = [-1 if any(d < 0 for d in part) else math.prod(part) for part in (head, tail)]
    if dims.count(-1) > 1:
        raise PirWriteError(f"{where}: {slot} {shape} flattened at {k} has unknown sizes on "
                            f"both sides; mul cannot be written as matmul")
    return dims


def _fill_value(op) -> float:
    text = op.attr("str_value", "")
    if text:
        try:
            return float(text)
        except ValueError:
            pass
    return float(op.attr("value", 0.0))


def _numpy_name(dtype: str) -> str:
    """A dtype name as format.py's tables spell it (bfloat16 is numpy's uint16 there)."""
    return "uint16" if dtype == "bfloat16" else dtype


def _var_type(var) -> dict:
    dtype = _numpy_name(var.dtype)
    if var.type == VarType.LOD_TENSOR_ARRAY:
        return F.encode_tensor_type(dtype, var.shape, array=True)
    if var.type != VarType.LOD_TENSOR:
        kind = dtypes.KIND_NAMES.get(var.type, var.type)
        raise PirWriteError(f"the variable {var.name!r} is a {kind}; PIR values here are "
                            f"dense tensors and tensor arrays")
    return F.encode_tensor_type(dtype, var.shape)


def _dtype_shape(t: dict):
    if t.get("#") in ("0.t_dtensor", "1.t_tensor_array"):
        elem = F.decode_type(t["D"][0], "type")
        return elem.dtype, list(t["D"][1])
    return None, None


def _bool_array(name: str, flags) -> dict:
    return {"AT": F.encode_array([bool(f) for f in flags], "0.a_bool"), "N": name}


def _encode(value, kind: str, where: str) -> dict:
    """``value`` as an attribute of ``kind`` (a signature's kind; arrays ``0.a_array:K``)."""
    if kind.startswith("0.a_array"):
        element = kind.partition(":")[2]
        if not isinstance(value, (list, tuple)):
            raise PirWriteError(f"{where}: expected a list, got {value!r:.60}")
        if element in ("", "?"):
            element = _kind_of(value[0]) if value else "0.a_i64"
        return {"#": "0.a_array", "D": [_encode(v, element, where) for v in value]}
    if kind == "0.a_bool":
        return F.encode_attr(bool(value), kind)
    if kind in ("0.a_i32", "0.a_i64", "0.a_index"):
        if isinstance(value, (list, tuple)) or isinstance(value, float) and \
                not value.is_integer():
            raise PirWriteError(f"{where}: expected an integer, got {value!r:.60}")
        return F.encode_attr(int(value), kind)
    if kind in ("0.a_f32", "0.a_f64"):
        value = float(value)
        return {"#": kind, "D": value if math.isfinite(value) else None}
    if kind == "0.a_str":
        return F.encode_attr(str(value), kind)
    if kind == "1.a_intarray":
        return F.encode_attr([int(v) for v in value], kind)
    if kind == "1.a_dtype":
        if value == UNDEFINED_DTYPE:
            return {"#": kind, "D": value}
        return F.encode_attr(_numpy_name(value), kind)
    if kind in ("1.a_place", "1.a_layout"):
        return F.encode_attr(value, kind)
    raise PirWriteError(f"{where}: the attribute kind {kind!r} is not one the writer writes")


def _kind_of(value) -> str:
    if isinstance(value, bool):
        return "0.a_bool"
    if isinstance(value, int):
        return "0.a_i64"
    if isinstance(value, float):
        return "0.a_f64"
    return "0.a_str"
