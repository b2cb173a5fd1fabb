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

from ...core import dtypes, limits as _limits, registry
from ...core.block_deps import external_reads_and_writes
from ...core.errors import PaddleNBError
from ...core.framework_pb2 import AttrType, VarType
from ...core.program import Program
from . import format as F
from .format import PirFormatError
from . import regions, special_ops
from .op_table import ANY, DROPPED_ATTRS, Attr, lookup
from .values import VALUE_FIELD, Const, Defined, count_of, fill_text, is_id


def program_from_pir(data) -> Program:
    """The program of a PIR file (its JSON text, bytes or str) as blocks and scopes: a
    ProgramDesc that runs, steps and prints like any other. Its ``feed`` / ``fetch`` ops
    are the file's ``1.data`` / ``1.fetch`` ops, so ``pd.io.load_inference_model`` treats it
    as an inference model. Anything that is not a PIR program this package reads is a
    :class:`PirFormatError` naming the op and what was wrong."""
    return _Translator(F.parse(data)).program


class _Translator:
    """One PIR program's translation. Its public methods are what the op handlers
    (special_ops.py, regions.py, and _generic here for the table's rows) build with:
    ``operand_ids`` / ``results`` / ``read_attrs`` read an op, ``get`` / ``tensor`` a
    value's variable (a constant made one where needed), ``declare`` / ``define`` make a
    value's variable, ``number`` / ``new_name`` name it, ``translate_block`` goes into a
    region."""

    def __init__(self, doc: dict):
        self.program = Program()
        self.values: dict[int, Defined] = {}
        self.used_names: set[str] = set()
        self.counts: dict[str, int] = {}
        self.feeds: list[str] = []
        self.materialised: dict[tuple[int, int], str] = {}
        top = doc["program"].get("regions")
        if not isinstance(top, list) or len(top) != 1:
            raise PirFormatError(f"program.regions should hold one region (the program's "
                                 f"module), holds {count_of(top)}")
        block = self.only_block(top[0], "program.regions[0]")
        self.fetch_names = self._fetch_names(block)
        self.translate_block(block, self.program.global_block(), "block 0", depth=0)
        self.program.current_block_idx = 0

    # --- structure --------------------------------------------------------------------------
    def only_block(self, region, where: str) -> dict:
        blocks = region.get("blocks") if isinstance(region, dict) else None
        if not isinstance(blocks, list) or len(blocks) != 1 or not isinstance(blocks[0], dict):
            raise PirFormatError(f"{where} should hold one block, holds {count_of(blocks)}")
        ops = blocks[0].get("ops")
        if not isinstance(ops, list):
            raise PirFormatError(f"{where}.blocks[0] has no list of ops")
        return blocks[0]

    def _fetch_names(self, block: dict) -> dict[int, str]:
        """The values the top block fetches, by id: a fetched value takes the fetch's name."""
        names = {}
        for op in block["ops"]:
            if isinstance(op, dict) and op.get("#") == "1.fetch":
                attrs = self.read_attrs(op, "1.fetch")
                operands = op.get("I")
                if isinstance(operands, list) and len(operands) == 1 and \
                        isinstance(operands[0], dict) and type(operands[0].get("%")) is int \
                        and isinstance(attrs.get("name"), str):
                    names.setdefault(operands[0].get("%"), attrs["name"])
        return names

    def translate_block(self, block_json: dict, block, path: str, depth: int,
                         yielded=None) -> None:
        if depth > _limits.MAX_BLOCK_DEPTH:
            inner = path if len(path) < 300 else "... " + path[-240:]   # the innermost ops
            raise PirFormatError(f"{inner}: regions nest {depth} deep, more than the limit "
                                 f"paddle_nb.core.limits.MAX_BLOCK_DEPTH = "
                                 f"{_limits.MAX_BLOCK_DEPTH}")
        ops = block_json["ops"]
        for k, op in enumerate(ops):
            if not isinstance(op, dict) or not isinstance(op.get("#"), str):
                raise PirFormatError(f"{path} op {k}: an op is an object with \"#\" (its "
                                     f"name), got {op!r:.80}")
            where = f"{path} > op {k} ({op['#']})"
            if op["#"] == "2.yield":
                if yielded is None:
                    raise PirFormatError(f"{where}: a yield ends the block of an if or while "
                                         f"region; {path} is not one")
                if k != len(ops) - 1:
                    raise PirFormatError(f"{where}: a yield ends its block; here it is op {k} "
                                         f"of {len(ops)}")
                yielded(self.operand_ids(op, where), where)
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
    def operand_ids(self, op: dict, where: str, count: int | None = None) -> list[int]:
        operands = op.get("I", [])
        if not isinstance(operands, list):
            raise PirFormatError(f"{where}: \"I\" (the operands) should be a list")
        if count is not None and len(operands) != count:
            raise PirFormatError(f"{where}: {len(operands)} operands; this op has {count}")
        ids = []
        for j, o in enumerate(operands):
            vid = o.get("%") if isinstance(o, dict) else None
            if type(vid) is not int:
                raise PirFormatError(f"{where}: operand {j} should be {{\"%\": id}}, got "
                                     f"{o!r:.60}")
            ids.append(vid)
        return ids

    def results(self, op: dict, where: str,
                 count: int | None = None) -> list[tuple[int, F.TensorType]]:
        results = op.get("O")              # Paddle writes it on every op ([] for none)
        if isinstance(results, dict):      # a parameter op has one result, not a list
            results = [results]
        if not isinstance(results, list):
            raise PirFormatError(f"{where}: \"O\" (the results) should be a list, got "
                                 f"{results!r:.60}")
        if count is not None and len(results) != count:
            raise PirFormatError(f"{where}: {len(results)} results; this op has {count}")
        out = []
        for j, r in enumerate(results):
            vid = r.get("%") if isinstance(r, dict) else None
            if not is_id(vid):
                raise PirFormatError(f"{where}: result {j} should be {{\"%\": id, \"TT\": "
                                     f"type}} (a 32-bit id), got {r!r:.60}")
            if vid in self.values:
                raise PirFormatError(f"{where}: result {j} defines value %{vid}, which "
                                     f"{self._definer(vid)} defined already (a PIR value is "
                                     f"defined once)")
            out.append((vid, F.decode_type(r.get("TT"), f"{where} result {j}")))
        return out

    def _definer(self, vid: int) -> str:
        return f"an op of block {self.values[vid].block}"

    def define(self, vid: int, block, ref) -> None:
        if vid in self.values:
            raise PirFormatError(f"value %{vid} is defined twice")
        self.values[vid] = Defined(block.idx, ref)

    def get(self, vid: int, block, where: str, j: int):
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

    def tensor(self, vid: int, block, where: str, j: int) -> str:
        """The variable of value ``vid``: a constant is made one here (once per block)."""
        ref = self.get(vid, block, where, j)
        if isinstance(ref, list):
            raise PirFormatError(f"{where}: operand {j} (%{vid}) is a vector of {len(ref)} "
                                 f"values where one tensor is expected")
        if isinstance(ref, Const):
            return self.materialise(ref, block)
        if ref is None:
            raise PirFormatError(f"{where}: operand {j} reads %{vid}, a result that has no "
                                 f"variable in the Fluid op it came from")
        return ref

    def materialise(self, c: Const, block) -> str:
        key = (c.vid, block.idx)
        if key not in self.materialised:
            op_name = "full_int_array" if isinstance(c.value, list) else "full"
            name = self.new_name(f"{op_name}_{self.number(op_name)}.tmp_0", c.vid)
            self.declare(block, name, c.vid, F.TensorType("tensor", c.dtype, c.shape))
            code = dtypes.to_code(c.dtype)
            if isinstance(c.value, list):
                block.append_op("assign_value", outputs={"Out": [name]},
                                attrs={"shape": list(c.shape), "dtype": code,
                                       VALUE_FIELD[c.dtype]: list(c.value)})
            else:
                block.append_op("fill_constant", outputs={"Out": [name]},
                                attrs={"shape": list(c.shape), "dtype": code,
                                       "value": float(c.value), "str_value": fill_text(c.value)})
            self.materialised[key] = name
        return self.materialised[key]

    def number(self, op_name: str) -> int:
        """The next number of ``op_name``'s ops: names are ``relu_0.tmp_0``, ``relu_1...``."""
        op_name = op_name.rstrip("_")
        n = self.counts.get(op_name, 0)
        self.counts[op_name] = n + 1
        return n

    def new_name(self, stem: str, vid: int) -> str:
        """``stem``, or the fetch name of the value, made unique among the names used."""
        if vid in self.fetch_names and self.fetch_names[vid] not in self.used_names:
            return self.fetch_names[vid]
        name, k = stem, 1
        while name in self.used_names:          # a parameter may already have this name
            name, k = f"{stem}_{k}", k + 1
        return name

    def declare(self, block, name: str, vid: int, t: F.TensorType, *,
                 persistable: bool = False):
        kind = VarType.LOD_TENSOR_ARRAY if t.kind == "array" else VarType.LOD_TENSOR
        var = block.create_var(name, shape=t.shape if t.kind == "tensor" else None,
                               dtype=t.dtype or "float32", persistable=persistable, type=kind)
        attr = var.desc.attrs.add()
        attr.name, attr.type, attr.i = "pir_id", AttrType.INT, vid
        self.used_names.add(name)
        return var

    # --- attributes -------------------------------------------------------------------------
    def read_attrs(self, op: dict, where: str) -> dict:
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
        ids = self.operand_ids(op, where)
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
                ref = self.get(vid, block, where, j)
                if isinstance(ref, Const):
                    attrs[spec.name] = ref.value
                elif spec.slot is not None:
                    inputs[spec.slot] = [self.tensor(vid, block, where, j)]
                else:
                    raise PirFormatError(f"{where}: operand {j} ({spec.name}) is computed at "
                                         f"run time; {row.fluid} takes {spec.name} only as a "
                                         f"constant attribute")
            elif spec.endswith("*"):
                ref = self.get(vid, block, where, j)
                names = ref if isinstance(ref, list) else [ref]
                inputs[spec[:-1]] = [self.materialise(n, block) if isinstance(n, Const)
                                     else n for n in names]
            else:
                inputs[spec] = by_operand[j] = [self.tensor(vid, block, where, j)]
        for pir_name, value in self.read_attrs(op, where).items():
            if pir_name in DROPPED_ATTRS:
                continue
            fluid_name = row.attrs.get(pir_name, pir_name)
            if op_def.attr(fluid_name) is None:  # a PIR-only attribute (Fluid has no place)
                only = row.ignored.get(pir_name, ANY)
                if only is not ANY and value != only:
                    raise PirFormatError(f"{where}: {pir_name}={value!r}; Fluid's {row.fluid} "
                                         f"has no such attribute and computes as "
                                         f"{pir_name}={only!r} only")
                continue
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
            attrs["str_value"] = fill_text(attrs["value"])
        outputs: dict[str, list[str]] = {}
        results = self.results(op, where)
        if len(results) > len(row.outs):
            raise PirFormatError(f"{where}: {len(results)} results; {row.pir} has "
                                 f"{len(row.outs)}")
        n = self.number(row.pir)
        stem = f"{row.pir.rstrip('_')}_{n}.tmp_"
        for i, ((vid, t), slot) in enumerate(zip(results, row.outs)):
            if slot is None:
                self.define(vid, block, None)
                continue
            if i in row.aliases:             # in place: the input's variable
                source = by_operand[row.aliases[i]]
                if source is None:
                    raise PirFormatError(f"{where}: result {i} writes over operand "
                                         f"{row.aliases[i]}, which is missing")
                outputs[slot] = source
                self.define(vid, block, source[0])
            elif slot.endswith("*"):
                items = t.items if t.kind == "vector" else [t]
                names = [self.declare(block, self.new_name(f"{stem}{i}_{k}", vid), vid,
                                       item).name for k, item in enumerate(items)]
                outputs[slot[:-1]] = names
                self.define(vid, block, names)
            else:
                name = self.new_name(f"{stem}{i}", vid)
                self.declare(block, name, vid, t)
                outputs[slot] = [name]
                self.define(vid, block, name)
        block.append_op(row.fluid, inputs=inputs, outputs=outputs, attrs=attrs)

    def owner_op(self, block, sub, op_type: str, cond: dict, attrs: dict,
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


_SPECIAL = {"p": special_ops.parameter, "1.data": special_ops.data,
            "1.fetch": special_ops.fetch, "1.full_int_array": special_ops.full_int_array,
            "1.full": special_ops.full, "1.shape64": special_ops.shape64,
            "1.arange": special_ops.arange, "1.linspace": special_ops.linspace,
            "0.combine": special_ops.combine, "0.split": special_ops.split,
            "1.if": regions.translate_if, "1.while": regions.translate_while}
