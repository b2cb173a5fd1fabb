"""Reading a PIR program into blocks and scopes: :func:`program_from_pir`.

PIR and the Block-and-Scope design say the same things differently:

============================  ==========================================================
PIR (Paddle 3)                Block and Scope (this package, Fluid)
============================  ==========================================================
a value ``%7``, defined once  a variable with a name, looked up in the block's scope
``1.data`` / ``1.fetch``      a ``feed`` op / a ``fetch`` op
a parameter op ``p``          a persistable variable, its value in ``.pdiparams``
``0.combine`` / ``0.split``   a slot that takes a list of variables
``1.full_int_array``          an attribute (constant) or an attribute tensor (computed)
``1.batch_norm_`` (in place)  ``batch_norm`` whose MeanOut names its Mean's variable
``1.if`` with two regions     two ``conditional_block`` ops and ``select_input``
``1.while``, block arguments  a ``while`` op over a sub-block, loop variables, ``assign``
============================  ==========================================================

Each variable made from a value keeps its PIR id as the VarDesc attribute ``pir_id`` (block
arguments have negative ids), so the program view can show ``%7`` beside the name. Names:
the data, parameter and fetch names Paddle gives; else the producing op's,
``matmul_0.tmp_0``, as Fluid names its temporaries.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...core import dtypes, registry, validate as _limits
from ...core.block_deps import external_reads_and_writes
from ...core.errors import BuildError, PaddleNBError
from ...core.framework_pb2 import AttrType, VarType
from ...core.program import Program
from . import format as F
from .format import PirFormatError
from .op_table import DROPPED_ATTRS, Attr, lookup


def program_from_pir(data) -> Program:
    """The program of a PIR file (its JSON text, bytes or str) as blocks and scopes: a
    ProgramDesc that runs, steps and prints like any other. Its ``feed`` / ``fetch`` ops
    are the file's ``1.data`` / ``1.fetch`` ops, so ``pd.io.load_inference_model`` treats it
    as an inference model. Anything that is not a PIR program this package reads is a
    :class:`PirFormatError` naming the op and what was wrong."""
    return _Translator(F.parse(data)).program


@dataclass
class _Const:
    """A constant PIR passes as a value (``full_int_array``, ``full``) that Fluid usually
    takes as an attribute: made into a variable only where one is needed."""
    value: object
    dtype: str
    shape: list
    vid: int


@dataclass
class _Defined:
    block: int          # the Fluid block whose scope holds it
    ref: object         # a variable name, a list of names (a vector), or a _Const


class _Translator:
    def __init__(self, doc: dict):
        self.program = Program()
        self.values: dict[int, _Defined] = {}
        self.used_names: set[str] = set()
        self.counts: dict[str, int] = {}
        self.feeds: list[str] = []
        self.materialised: dict[tuple[int, int], str] = {}
        regions = doc["program"].get("regions")
        if not isinstance(regions, list) or len(regions) != 1:
            raise PirFormatError(f"program.regions should hold one region (the program's "
                                 f"module), holds {_count(regions)}")
        block = self._only_block(regions[0], "program.regions[0]")
        self.fetch_names = self._fetch_names(block)
        self._translate_block(block, self.program.global_block(), "block 0", depth=0)
        self.program.current_block_idx = 0

    # --- structure --------------------------------------------------------------------------
    def _only_block(self, region, where: str) -> dict:
        blocks = region.get("blocks") if isinstance(region, dict) else None
        if not isinstance(blocks, list) or len(blocks) != 1 or not isinstance(blocks[0], dict):
            raise PirFormatError(f"{where} should hold one block, holds {_count(blocks)}")
        ops = blocks[0].get("ops")
        if not isinstance(ops, list):
            raise PirFormatError(f"{where}.blocks[0] has no list of ops")
        return blocks[0]

    def _fetch_names(self, block: dict) -> dict[int, str]:
        """The values the top block fetches, by id: a fetched value takes the fetch's name."""
        names = {}
        for op in block["ops"]:
            if isinstance(op, dict) and op.get("#") == "1.fetch":
                attrs = self._attrs(op, "1.fetch")
                operands = op.get("I") or []
                if len(operands) == 1 and isinstance(operands[0], dict) and \
                        isinstance(attrs.get("name"), str):
                    names.setdefault(operands[0].get("%"), attrs["name"])
        return names

    def _translate_block(self, block_json: dict, block, path: str, depth: int,
                         yielded=None) -> None:
        if depth > _limits.MAX_BLOCK_DEPTH:
            raise PirFormatError(f"{path}: regions nest {depth} deep, more than the limit "
                                 f"paddle_nb.core.validate.MAX_BLOCK_DEPTH = "
                                 f"{_limits.MAX_BLOCK_DEPTH}")
        ops = block_json["ops"]
        for k, op in enumerate(ops):
            if not isinstance(op, dict) or not isinstance(op.get("#"), str):
                raise PirFormatError(f"{path} op {k}: an op is an object with \"#\" (its "
                                     f"name), got {op!r:.80}")
            where = f"{path} > op {k} ({op['#']})"
            if op["#"] == "2.yield":
                if k != len(ops) - 1 or yielded is None:
                    raise PirFormatError(f"{where}: a yield ends an if or while region's "
                                         f"block; here it is not its last op")
                yielded(self._operand_ids(op, where), where)
                return
            try:
                self._translate_op(op, block, where, depth)
            except PirFormatError:
                raise
            except PaddleNBError as e:     # shape inference, attribute checks: say which op
                raise PirFormatError(f"{where}: {e}") from None
        if yielded is not None:
            raise PirFormatError(f"{path}: an if or while region's block ends with 2.yield; "
                                 f"this one does not")

    def _translate_op(self, op: dict, block, where: str, depth: int) -> None:
        name = op["#"]
        special = _SPECIAL.get(name)
        if special is not None:
            return special(self, op, block, where, depth)
        dialect, _, short = name.partition(".")
        if dialect != "1":
            raise PirFormatError(f"{where}: {name!r} is not an op this package reads (dialect "
                                 f"{dialect!r}: ops of the builtin dialect 0 are combine, "
                                 f"split and parameters, of the Paddle dialect 1 any op of "
                                 f"the table in paddle_nb/io/pir/op_table.py)")
        row = lookup(short)
        if row is None:
            raise PirFormatError(f"{where}: the Paddle op {short!r} has no Fluid counterpart "
                                 f"in paddle_nb/io/pir/op_table.py yet, so this program "
                                 f"cannot be read")
        self._generic(row, op, block, where)

    # --- values -----------------------------------------------------------------------------
    def _operand_ids(self, op: dict, where: str) -> list[int]:
        operands = op.get("I", [])
        if not isinstance(operands, list):
            raise PirFormatError(f"{where}: \"I\" (the operands) should be a list")
        ids = []
        for j, o in enumerate(operands):
            vid = o.get("%") if isinstance(o, dict) else None
            if type(vid) is not int:
                raise PirFormatError(f"{where}: operand {j} should be {{\"%\": id}}, got "
                                     f"{o!r:.60}")
            ids.append(vid)
        return ids

    def _results(self, op: dict, where: str) -> list[tuple[int, F.TensorType]]:
        results = op.get("O", [])
        if isinstance(results, dict):      # a parameter op has one result, not a list
            results = [results]
        if not isinstance(results, list):
            raise PirFormatError(f"{where}: \"O\" (the results) should be a list")
        out = []
        for j, r in enumerate(results):
            vid = r.get("%") if isinstance(r, dict) else None
            if type(vid) is not int:
                raise PirFormatError(f"{where}: result {j} should be {{\"%\": id, \"TT\": "
                                     f"type}}, got {r!r:.60}")
            if vid in self.values:
                raise PirFormatError(f"{where}: result {j} defines value %{vid}, which op "
                                     f"{self._definer(vid)} defined already (a PIR value is "
                                     f"defined once)")
            out.append((vid, F.decode_type(r.get("TT"), f"{where} result {j}")))
        return out

    def _definer(self, vid: int) -> str:
        return f"of block {self.values[vid].block}"

    def _define(self, vid: int, block, ref) -> None:
        if vid in self.values:
            raise PirFormatError(f"value %{vid} is defined twice")
        self.values[vid] = _Defined(block.idx, ref)

    def _get(self, vid: int, block, where: str, j: int):
        d = self.values.get(vid)
        if d is None:
            raise PirFormatError(f"{where}: operand {j} reads value %{vid}, which no op "
                                 f"before it defines (used before it is defined, or never "
                                 f"defined)")
        if not self._visible(d.block, block):
            raise PirFormatError(f"{where}: operand {j} reads value %{vid}, defined inside "
                                 f"another region (block {d.block}); a value is seen only "
                                 f"in its own block and the blocks nested in it")
        return d.ref

    def _visible(self, defined_in: int, block) -> bool:
        b = block
        while b is not None:
            if b.idx == defined_in:
                return True
            b = b.parent_block
        return False

    def _tensor(self, vid: int, block, where: str, j: int) -> str:
        """The variable of value ``vid``: a constant is made one here (once per block)."""
        ref = self._get(vid, block, where, j)
        if isinstance(ref, list):
            raise PirFormatError(f"{where}: operand {j} (%{vid}) is a vector of {len(ref)} "
                                 f"values where one tensor is expected")
        if isinstance(ref, _Const):
            return self._materialise(ref, block)
        if ref is None:
            raise PirFormatError(f"{where}: operand {j} reads %{vid}, a result that has no "
                                 f"variable in the Fluid op it came from")
        return ref

    def _materialise(self, c: _Const, block) -> str:
        key = (c.vid, block.idx)
        if key not in self.materialised:
            op_name = "full_int_array" if isinstance(c.value, list) else "full"
            name = self._new_name(f"{op_name}_{self._number(op_name)}.tmp_0", c.vid)
            self._declare(block, name, c.vid, F.TensorType("tensor", c.dtype, c.shape))
            code = dtypes.to_code(c.dtype)
            if isinstance(c.value, list):
                block.append_op("assign_value", outputs={"Out": [name]},
                                attrs={"shape": list(c.shape), "dtype": code,
                                       _VALUE_FIELD[c.dtype]: list(c.value)})
            else:
                block.append_op("fill_constant", outputs={"Out": [name]},
                                attrs={"shape": list(c.shape), "dtype": code,
                                       "value": float(c.value), "str_value": _text(c.value)})
            self.materialised[key] = name
        return self.materialised[key]

    def _number(self, op_name: str) -> int:
        """The next number of ``op_name``'s ops: names are ``relu_0.tmp_0``, ``relu_1...``."""
        op_name = op_name.rstrip("_")
        n = self.counts.get(op_name, 0)
        self.counts[op_name] = n + 1
        return n

    def _new_name(self, stem: str, vid: int) -> str:
        """``stem``, or the fetch name of the value, made unique among the names used."""
        if vid in self.fetch_names and self.fetch_names[vid] not in self.used_names:
            return self.fetch_names[vid]
        name, k = stem, 1
        while name in self.used_names:          # a parameter may already have this name
            name, k = f"{stem}_{k}", k + 1
        return name

    def _declare(self, block, name: str, vid: int, t: F.TensorType, *,
                 persistable: bool = False):
        kind = VarType.LOD_TENSOR_ARRAY if t.kind == "array" else VarType.LOD_TENSOR
        var = block.create_var(name, shape=t.shape if t.kind == "tensor" else None,
                               dtype=t.dtype or "float32", persistable=persistable, type=kind)
        attr = var.desc.attrs.add()
        attr.name, attr.type, attr.i = "pir_id", AttrType.INT, vid
        self.used_names.add(name)
        return var

    # --- attributes -------------------------------------------------------------------------
    def _attrs(self, op: dict, where: str) -> dict:
        attrs = op.get("A", [])
        if not isinstance(attrs, list):
            raise PirFormatError(f"{where}: \"A\" (the attributes) should be a list")
        out = {}
        for a in attrs:
            if not isinstance(a, dict) or not isinstance(a.get("N"), str):
                raise PirFormatError(f"{where}: an attribute is {{\"N\": name, \"AT\": "
                                     f"value}}, got {a!r:.60}")
            out[a["N"]] = F.decode_attr(a.get("AT"), f"{where} attribute {a['N']!r}")
        return out

    # --- the ops of the table ---------------------------------------------------------------
    def _generic(self, row, op: dict, block, where: str) -> None:
        op_def = registry.lookup(row.fluid)
        ids = self._operand_ids(op, where)
        if len(ids) != len(row.ins):
            raise PirFormatError(f"{where}: {len(ids)} operands; {row.pir} has "
                                 f"{len(row.ins)} ({', '.join(map(str, row.ins))})")
        inputs: dict[str, list[str]] = {}
        attrs: dict = {}
        by_operand: list = []
        for j, (spec, vid) in enumerate(zip(row.ins, ids)):
            by_operand.append(None)
            if vid == 0 or spec is None:
                continue
            if isinstance(spec, Attr):
                ref = self._get(vid, block, where, j)
                if isinstance(ref, _Const):
                    attrs[spec.name] = ref.value
                elif spec.slot is not None:
                    inputs[spec.slot] = [self._tensor(vid, block, where, j)]
                else:
                    raise PirFormatError(f"{where}: operand {j} ({spec.name}) is computed at "
                                         f"run time; {row.fluid} takes {spec.name} only as a "
                                         f"constant attribute")
            elif spec.endswith("*"):
                ref = self._get(vid, block, where, j)
                names = ref if isinstance(ref, list) else [ref]
                inputs[spec[:-1]] = [self._materialise(n, block) if isinstance(n, _Const)
                                     else n for n in names]
            else:
                inputs[spec] = by_operand[j] = [self._tensor(vid, block, where, j)]
        for pir_name, value in self._attrs(op, where).items():
            if pir_name in DROPPED_ATTRS:
                continue
            fluid_name = row.attrs.get(pir_name, pir_name)
            if op_def.attr(fluid_name) is None:
                continue                       # a PIR-only attribute (Fluid has no place)
            if fluid_name in row.dtype_attrs:
                value = -1 if value == "undefined" else dtypes.to_code(value)
            attrs[fluid_name] = value
        attrs.update((k, v) for k, v in row.fixed.items() if op_def.attr(k) is not None)
        if row.post is not None:
            row.post(attrs)
        if op_def.attr("in_dtype") is not None and "X" in inputs and "in_dtype" not in attrs:
            # PIR's cast knows its input's type; Fluid's says it (its gradient casts back)
            attrs["in_dtype"] = block.var(inputs["X"][0]).desc.type.lod_tensor.tensor.data_type
        if row.fluid == "fill_constant" and "value" in attrs:
            attrs["str_value"] = _text(attrs["value"])
        outputs: dict[str, list[str]] = {}
        results = self._results(op, where)
        if len(results) > len(row.outs):
            raise PirFormatError(f"{where}: {len(results)} results; {row.pir} has "
                                 f"{len(row.outs)}")
        n = self._number(row.pir)
        stem = f"{row.pir.rstrip('_')}_{n}.tmp_"
        for i, ((vid, t), slot) in enumerate(zip(results, row.outs)):
            if slot is None:
                self._define(vid, block, None)
                continue
            if i in row.aliases:             # in place: the input's variable
                source = by_operand[row.aliases[i]]
                if source is None:
                    raise PirFormatError(f"{where}: result {i} writes over operand "
                                         f"{row.aliases[i]}, which is missing")
                outputs[slot] = source
                self._define(vid, block, source[0])
            elif slot.endswith("*"):
                items = t.items if t.kind == "vector" else [t]
                names = [self._declare(block, self._new_name(f"{stem}{i}_{k}", vid), vid,
                                       item).name for k, item in enumerate(items)]
                outputs[slot[:-1]] = names
                self._define(vid, block, names)
            else:
                name = self._new_name(f"{stem}{i}", vid)
                self._declare(block, name, vid, t)
                outputs[slot] = [name]
                self._define(vid, block, name)
        block.append_op(row.fluid, inputs=inputs, outputs=outputs, attrs=attrs)

    def _owner_op(self, block, sub, op_type: str, cond: dict, attrs: dict,
                  scopes: str) -> None:
        """The ``conditional_block`` or ``while`` op that runs ``sub``: its inputs are what
        the sub-block reads from outside, its outputs what it writes there, as the
        control-flow builders wire them (paddle_nb/control_flow/blocks.py)."""
        [cond_name] = next(iter(cond.values()))
        reads, writes = external_reads_and_writes(self.program, sub.idx)
        scopes = block.create_var(scopes, type=VarType.STEP_SCOPES)
        data_slot, scope_slot = ("Input", "Scope") if op_type == "conditional_block" \
            else ("X", "StepScopes")
        block.append_op(op_type, {**cond, data_slot: [r for r in reads if r != cond_name]},
                        {"Out": writes, scope_slot: [scopes]}, attrs)

    # --- special ops ------------------------------------------------------------------------
    def _parameter(self, op, block, where, depth):
        attrs = op.get("A")
        if not isinstance(attrs, list) or not attrs or not isinstance(attrs[-1], str):
            raise PirFormatError(f"{where}: a parameter op's \"A\" is [..., name], got "
                                 f"{attrs!r:.60}")
        result_attrs = op.get("OA") or [1, 0, 1]
        persistable = bool(result_attrs[0]) if isinstance(result_attrs, list) else True
        [(vid, t)] = self._results(op, where) or [(None, None)]
        name = attrs[-1]
        if name in self.used_names:
            raise PirFormatError(f"{where}: the parameter {name!r} is defined twice")
        var = self._declare(block, name, vid, t, persistable=persistable)
        if persistable:
            var.desc.is_parameter = True
            var.desc.stop_gradient = bool(result_attrs[1]) if len(result_attrs) > 1 else False
        self._define(vid, block, name if persistable else None)

    def _data(self, op, block, where, depth):
        attrs = self._attrs(op, where)
        name = attrs.get("name")
        if not isinstance(name, str) or not name:
            raise PirFormatError(f"{where}: a data op names its input (attribute \"name\")")
        [(vid, t)] = self._results(op, where)
        if name in self.used_names:
            raise PirFormatError(f"{where}: the input name {name!r} is used twice")
        self._declare(block, name, vid, t)
        self._define(vid, block, name)
        if not block.has_var("feed"):
            block.create_var("feed", type=VarType.FEED_MINIBATCH, persistable=True)
        block._insert_op(len(self.feeds), "feed", inputs={"X": ["feed"]},
                         outputs={"Out": [name]}, attrs={"col": len(self.feeds)})
        self.feeds.append(name)

    def _fetch(self, op, block, where, depth):
        attrs = self._attrs(op, where)
        [vid] = self._operand_ids(op, where) or [0]
        name = self._tensor(vid, block, where, 0)
        col = attrs.get("col", 0)
        if not block.has_var("fetch"):
            block.create_var("fetch", type=VarType.FETCH_LIST, persistable=True)
        block.append_op("fetch", inputs={"X": [name]}, outputs={"Out": ["fetch"]},
                        attrs={"col": col})
        for rid, _ in self._results(op, where):
            self._define(rid, block, name)

    def _full_int_array(self, op, block, where, depth):
        attrs = self._attrs(op, where)
        values = attrs.get("value")
        if not isinstance(values, list) or not all(type(v) is int for v in values):
            raise PirFormatError(f"{where}: \"value\" should be a list of ints, got "
                                 f"{values!r:.60}")
        [(vid, t)] = self._results(op, where)
        self._define(vid, block, _Const(values, attrs.get("dtype", "int64"), [len(values)],
                                        vid))

    def _full(self, op, block, where, depth):
        attrs = self._attrs(op, where)
        [(vid, t)] = self._results(op, where)
        shape = attrs.get("shape", [])
        value = attrs.get("value", 0.0)
        dtype = attrs.get("dtype", "float32")
        if dtype.startswith("int") or dtype == "bool":
            value = int(value) if value == value else 0
        self._define(vid, block, _Const(value, dtype, list(shape), vid))

    def _shape64(self, op, block, where, depth):
        """Paddle 3's int64 shape: Fluid's ``shape`` (int32) and a ``cast``."""
        [vid_in] = self._operand_ids(op, where) or [0]
        [(vid, t)] = self._results(op, where)
        n = self._number("shape64")
        as_int32 = self._declare(block, f"shape64_{n}.tmp_int32", 0,
                                 F.TensorType("tensor", "int32", t.shape)).name
        block.append_op("shape", {"Input": [self._tensor(vid_in, block, where, 0)]},
                        {"Out": [as_int32]})
        name = self._new_name(f"shape64_{n}.tmp_0", vid)
        self._declare(block, name, vid, t)
        block.append_op("cast", {"X": [as_int32]}, {"Out": [name]},
                        {"in_dtype": dtypes.to_code("int32"),
                         "out_dtype": dtypes.to_code("int64")})
        self._define(vid, block, name)

    def _combine(self, op, block, where, depth):
        ids = self._operand_ids(op, where)
        refs = [self._get(v, block, where, j) for j, v in enumerate(ids)]
        [(vid, t)] = self._results(op, where)
        self._define(vid, block, refs)

    def _split(self, op, block, where, depth):
        [src] = self._operand_ids(op, where) or [0]
        ref = self._get(src, block, where, 0)
        results = self._results(op, where)
        if not isinstance(ref, list) or len(ref) != len(results):
            raise PirFormatError(f"{where}: splits %{src} into {len(results)} values; it "
                                 f"holds {len(ref) if isinstance(ref, list) else 'one'}")
        for (vid, _), r in zip(results, ref):
            self._define(vid, block, r)

    def _if(self, op, block, where, depth):
        [cond_id] = self._operand_ids(op, where) or [0]
        cond = self._tensor(cond_id, block, where, 0)
        regions = op.get("regions")
        if not isinstance(regions, list) or len(regions) != 2:
            raise PirFormatError(f"{where}: an if has two regions (true, false), has "
                                 f"{_count(regions)}")
        results = self._results(op, where)
        n = self._number("if")
        not_cond = self._declare(block, f"if_{n}.not_cond", 0, F.TensorType("tensor", "bool",
                                                                             [1])).name
        branch_outs = []
        for branch, region in zip(("true", "false"), regions):
            pred = cond
            if branch == "false":
                block.append_op("logical_not", {"X": [cond]}, {"Out": [not_cond]})
                pred = not_cond
            copies = [self._declare(block, f"if_{n}.{branch}_{i}", 0, t).name
                      for i, (_, t) in enumerate(results)]
            sub = self.program.create_block(block.idx)
            sub_path = f"{where} {branch} region (block {sub.idx})"

            def yielded(ids, ywhere, sub=sub, copies=copies):
                if len(ids) != len(copies):
                    raise PirFormatError(f"{ywhere}: yields {len(ids)} values; the if has "
                                         f"{len(copies)} results")
                for j, (vid, c) in enumerate(zip(ids, copies)):
                    sub.append_op("assign", {"X": [self._tensor(vid, sub, ywhere, j)]},
                                  {"Out": [c]})
            self._translate_block(self._only_block(region, sub_path), sub, sub_path,
                                  depth + 1, yielded)
            self._owner_op(block, sub, "conditional_block", {"Cond": [pred]},
                           {"sub_block": sub, "is_scalar_condition": True},
                           f"if_{n}.{branch}_scopes")
            branch_outs.append(copies)
        if results:
            mask = self._declare(block, f"if_{n}.mask", 0,
                                 F.TensorType("tensor", "int32", [1])).name
            block.append_op("cast", {"X": [cond]}, {"Out": [mask]},
                            {"in_dtype": dtypes.to_code("bool"),
                             "out_dtype": dtypes.to_code("int32")})
        for i, (vid, t) in enumerate(results):
            name = self._new_name(f"if_{n}.tmp_{i}", vid)
            self._declare(block, name, vid, t)
            block.append_op("select_input", {"X": [branch_outs[1][i], branch_outs[0][i]],
                                             "Mask": [mask]}, {"Out": [name]})
            self._define(vid, block, name)

    def _while(self, op, block, where, depth):
        ids = self._operand_ids(op, where)
        if not ids:
            raise PirFormatError(f"{where}: a while's first operand is its condition")
        regions = op.get("regions")
        if not isinstance(regions, list) or len(regions) != 1:
            raise PirFormatError(f"{where}: a while has one region, has {_count(regions)}")
        body = self._only_block(regions[0], f"{where} region")
        args = body.get("args", [])
        results = self._results(op, where)
        if not isinstance(args, list) or len(args) != len(ids) - 1 or \
                len(results) != len(ids) - 1:
            raise PirFormatError(f"{where}: a while carries as many values as it has block "
                                 f"arguments and results: operands {len(ids) - 1} (after the "
                                 f"condition), arguments {_count(args)}, results "
                                 f"{len(results)}")
        n = self._number("while")
        cond_var = self._declare(block, f"while_{n}.cond", 0,
                                 F.TensorType("tensor", "bool", [1])).name
        block.append_op("assign", {"X": [self._tensor(ids[0], block, where, 0)]},
                        {"Out": [cond_var]})
        loop_vars = []
        for j, (arg, vid) in enumerate(zip(args, ids[1:])):
            aid = arg.get("#") if isinstance(arg, dict) else None
            if type(aid) is not int:
                raise PirFormatError(f"{where}: block argument {j} should be {{\"#\": id, "
                                     f"\"TT\": type}}")
            t = F.decode_type(arg.get("TT"), f"{where} block argument {j}")
            name = self._declare(block, f"while_{n}.var_{j}", aid, t).name
            block.append_op("assign", {"X": [self._tensor(vid, block, where, j + 1)]},
                            {"Out": [name]})
            loop_vars.append(name)
        sub = self.program.create_block(block.idx)
        for arg, name in zip(args, loop_vars):
            self._define(arg["#"], block, name)   # block arguments: the loop variables

        def yielded(yids, ywhere):
            if len(yids) != len(loop_vars) + 1:
                raise PirFormatError(f"{ywhere}: a while body yields its condition and "
                                     f"{len(loop_vars)} values, yields {len(yids)}")
            new = [self._tensor(v, sub, ywhere, j) for j, v in enumerate(yids)]
            targets = [cond_var] + loop_vars
            # yielded values may be other loop variables (a swap): copy through temporaries
            clash = any(s in targets and s != t for s, t in zip(new, targets))
            if clash:
                temps = []
                for j, s in enumerate(new):
                    tmp = sub.create_var(f"while_{n}.next_{j}", dtype=sub.var(s).dtype)
                    sub.append_op("assign", {"X": [s]}, {"Out": [tmp]})
                    temps.append(tmp.name)
                new = temps
            for s, t in zip(new, targets):
                if s != t:
                    sub.append_op("assign", {"X": [s]}, {"Out": [t]})
        sub_path = f"{where} body (block {sub.idx})"
        self._translate_block(body, sub, sub_path, depth + 1, yielded)
        self._owner_op(block, sub, "while", {"Condition": [cond_var]},
                       {"sub_block": sub, "is_test": True}, f"while_{n}.scopes")
        for (vid, _), name in zip(results, loop_vars):
            self._define(vid, block, name)


_SPECIAL = {"p": _Translator._parameter, "1.data": _Translator._data,
            "1.fetch": _Translator._fetch, "1.full_int_array": _Translator._full_int_array,
            "1.full": _Translator._full, "1.shape64": _Translator._shape64, "0.combine": _Translator._combine,
            "0.split": _Translator._split, "1.if": _Translator._if,
            "1.while": _Translator._while}

_VALUE_FIELD = {"int32": "int32_values", "int64": "int64_values", "float32": "fp32_values",
                "float64": "fp64_values", "bool": "bool_values"}


def _text(value) -> str:
    """A fill value as fill_constant's ``str_value`` (exact for large integers)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 2 ** 63 else repr(value)
    return str(value)


def _count(x) -> str:
    return str(len(x)) if isinstance(x, list) else f"none ({type(x).__name__})"


__all__ = ["program_from_pir", "PirFormatError", "BuildError"]
