"""``Block``: one pair of curly braces, a view over its SymbolTable.

Blocks nest like C's ``{}`` (the Block and Scope design): a block's ops may use variables
declared in any enclosing block. ``append_op`` is where a program grows: it checks the call
against the op's OpProto, fills default attributes, records the user's line, declares the
outputs and runs shape inference, removing the op again if anything is wrong.
"""
from __future__ import annotations


from . import attrs as A
from . import registry
from .errors import BuildError, did_you_mean, user_line, user_stack
from .framework_pb2 import VarType
from .executor import Executor
from .infer_shape import InferShapeContext
from .operator import Operator, set_attr
from .printer import block_code
from .prune import prune
from .symbol_table import SymbolTable
from .unique_name import generate
from .variable import Parameter, Variable, view


class Block:
    def __init__(self, program, table: SymbolTable):
        self.program = program
        self.table = table

    # --- identity ------------------------------------------------------------------
    @property
    def idx(self) -> int:
        return self.table.idx

    @property
    def parent_idx(self) -> int:
        return self.table.header.parent_idx

    @property
    def forward_block_idx(self) -> int:
        return self.table.header.forward_block_idx

    @property
    def parent_block(self) -> "Block | None":
        return self.program.block(self.parent_idx) if self.parent_idx >= 0 else None

    @property
    def owner_op(self) -> tuple[int, Operator] | None:
        """(index, op) of the op in the parent block whose BLOCK attribute is this block
        (:func:`block_owners`: every block's at once)."""
        parent = self.parent_block
        if parent is None:
            return None
        for i, op in enumerate(parent.ops):
            if self.idx in op.sub_block_indices():
                return i, op
        return None

    @property
    def path(self) -> str:
        """Where this block sits: ``block 0 > conditional_block@3 (block 1)``
        (:func:`block_paths`: every block's at once)."""
        parent = self.parent_block
        return _path_text(self.idx, parent.path if parent is not None else None,
                          self.owner_op)

    # --- variables -------------------------------------------------------------------
    def lookup(self, name: str):
        """The VarDesc ``name`` resolves to from this block: this block and its parents,
        then, for a gradient block, the forward block it differentiates (it runs in that
        block's scope, so it sees the same variables)."""
        v = self.table.find_var(name)
        if v is None and self.forward_block_idx >= 0:
            return self.program.block(self.forward_block_idx).lookup(name)
        return v

    @property
    def vars(self) -> dict[str, Variable]:
        return {name: view(self, d) for name, d in self.table.vars.items()}

    def has_var(self, name: str) -> bool:
        return name in self.table.vars

    def var(self, name: str) -> Variable:
        """The variable ``name`` declared here or in an enclosing block."""
        owner = self.table.find_var_owner(name)
        if owner is None:
            every = [n for b in self.program.blocks for n in b.table.vars]
            raise BuildError(f"variable {name!r} is not declared in {self.path} or any "
                             f"enclosing block{did_you_mean(name, every)}")
        return view(self.program.block(owner.idx), owner.vars[name])

    def create_var(self, name: str | None = None, shape=None, dtype="float32", *,
                   persistable: bool = False, stop_gradient: bool = False,
                   type: int = VarType.LOD_TENSOR, lod_level: int = 0) -> Variable:
        name = name or generate("tmp")
        d = self.table.declare(name, shape=shape, dtype=dtype, kind=type,
                               persistable=persistable)
        if stop_gradient:
            d.stop_gradient = True
        if lod_level and type == VarType.LOD_TENSOR:
            d.type.lod_tensor.lod_level = lod_level
        return view(self, d)

    def create_parameter(self, name: str, shape, dtype="float32", *,
                         trainable: bool = True) -> Parameter:
        d = self.table.declare(name, shape=shape, dtype=dtype, persistable=True)
        d.is_parameter = True
        d.stop_gradient = not trainable
        return Parameter(self, d)

    def all_parameters(self) -> list[Parameter]:
        return [Parameter(self, d) for d in self.table.vars.values() if d.is_parameter]

    def _remove_var(self, name: str) -> None:
        self.table.remove_var(name)

    # --- operators ---------------------------------------------------------------------
    @property
    def ops(self) -> list[Operator]:
        return [Operator(self, d) for d in self.table.ops]

    def append_op(self, type: str, inputs: dict | None = None, outputs: dict | None = None,
                  attrs: dict | None = None, *, infer_shape: bool = True) -> Operator:
        return self._insert_op(None, type, inputs, outputs, attrs, infer_shape=infer_shape)

    def _insert_op(self, index: int | None, type: str, inputs=None, outputs=None,
                   attrs=None, *, infer_shape: bool = True) -> Operator:
        try:
            return self._insert_op_checked(index, type, inputs, outputs, attrs, infer_shape)
        except BuildError as e:
            if "created at:" not in str(e):   # errors before the op existed: add the line
                e.args = (f"{e}\n  at {user_line()}",)
            raise

    def _insert_op_checked(self, index, type, inputs, outputs, attrs, infer_shape):
        op_def = registry.lookup(type)
        inputs = _names_by_slot(op_def, "input", inputs or {}, self)
        outputs = _names_by_slot(op_def, "output", outputs or {}, self)
        declared_here = [n for names in outputs.values() for n in names
                         if self.table.find_var(n) is None]
        for name in declared_here:
            self.table.var(name)
        desc = self.table.new_op(type, index)
        try:
            _fill(desc, op_def, inputs, outputs, attrs or {})
            set_attr(desc, "op_callstack", user_stack(), A.STRINGS)
            op = Operator(self, desc)
            if infer_shape and op_def.infer_shape is not None:
                pos = op.idx
                ctx = InferShapeContext(self, op, op_def, f"{self.path} > op {pos} {type}",
                                        op.created_at)
                op_def.infer_shape(ctx)
        except BaseException:        # leave the block as it was
            self.table.remove_op(next(i for i, o in enumerate(self.table.ops) if o is desc))
            for name in declared_here:
                self.table.remove_var(name)
            raise
        return op

    def _remove_op(self, index: int) -> None:
        self.table.remove_op(index)

    def infer_shapes(self) -> None:
        """Run every op's shape inference again, in order (after a builder changed what a
        block reads: an RNN's step inputs, an IfElse branch's rows)."""
        for i, op in enumerate(self.ops):
            if not registry.is_registered(op.type):
                continue
            op_def = registry.lookup(op.type)
            if op_def.infer_shape is not None:
                op_def.infer_shape(InferShapeContext(self, op, op_def,
                                                     f"{self.path} > op {i} {op.type}",
                                                     op.created_at))

    # --- running and printing ------------------------------------------------------------
    def eval(self, targets, scope=None, feed=None, place=None):
        """The Block and Scope design's Eval: run just the ops the targets depend on and return
        their values."""
        targets = targets if isinstance(targets, (list, tuple)) else [targets]
        if self.idx != 0:
            raise BuildError(f"eval runs the global block; {self.path} runs inside the op "
                             "that owns it")
        pruned = prune(self.program, targets)
        return Executor(place).run(pruned, feed=feed, fetch_list=list(targets), scope=scope)

    def to_code(self, **kw) -> str:
        return block_code(self, **kw)

    def __repr__(self):
        return f"<Block {self.idx} parent={self.parent_idx} vars={len(self.table.vars)} " \
               f"ops={len(self.table.ops)}>"


def _arg_name(arg, block: Block, slot: str, op_type: str) -> str:
    if isinstance(arg, Variable):
        return arg.name
    if isinstance(arg, str):
        return arg
    raise BuildError(f"op {op_type}, slot {slot}: expected a Variable or a variable name, "
                     f"got {type(arg).__name__} {arg!r}")


def _names_by_slot(op_def, kind: str, given: dict, block: Block) -> dict[str, list[str]]:
    """Check the caller's slots against the OpProto and turn Variables into names."""
    declared = op_def.inputs if kind == "input" else op_def.outputs
    by_name = {s.name: s for s in declared}
    result = {}
    for slot, args in given.items():
        spec = by_name.get(slot)
        if spec is None:
            raise BuildError(f"op {op_def.type} has no {kind} slot {slot!r}; its {kind} "
                             f"slots are {[s.name for s in declared]}")
        if args is None:
            continue
        args = list(args) if isinstance(args, (list, tuple)) else [args]
        if len(args) > 1 and not spec.duplicable:
            raise BuildError(f"op {op_def.type}, {kind} slot {slot} takes one variable "
                             f"(it is not duplicable), got {len(args)}")
        names = [_arg_name(a, block, slot, op_def.type) for a in args]
        if kind == "input":
            for n in names:
                if block.lookup(n) is None:
                    raise BuildError(f"op {op_def.type}, input slot {slot}: variable {n!r} "
                                     f"is not declared in {block.path} or any enclosing block")
        result[slot] = names
    for spec in declared:
        if not spec.dispensable and not result.get(spec.name) and kind == "input":
            raise BuildError(f"op {op_def.type} needs input slot {spec.name} "
                             f"({spec.comment or 'no doc'}); given slots: {sorted(result)}")
    return result


def _fill(desc, op_def, inputs, outputs, attrs) -> None:
    for dst, declared, given in ((desc.inputs, op_def.inputs, inputs),
                                 (desc.outputs, op_def.outputs, outputs)):
        for spec in declared:           # declared order, as Fluid writes them
            if spec.name in given:
                dst.add(parameter=spec.name, arguments=given[spec.name])
    for spec in op_def.attrs:
        value = attrs.get(spec.name, spec.default)
        if value is None:
            continue
        registry.check_attr(op_def, spec.name, value)
        try:
            set_attr(desc, spec.name, value, spec.type)
        except (TypeError, ValueError) as e:
            raise BuildError(f"op {op_def.type}, attribute {spec.name}: {e} (declared "
                             f"{A.TYPE_NAMES[spec.type]})") from None
    for name, value in attrs.items():
        if op_def.attr(name) is None:       # not declared: kept, typed by its value
            try:
                set_attr(desc, name, value)
            except TypeError as e:
                raise BuildError(f"op {op_def.type}, attribute {name}: {e}") from None


# --- every block at once -------------------------------------------------------------------
# Block.owner_op walks the parent block's ops on each call, so asking it of every block is
# quadratic: a program of 2,000 sibling blocks (2,000 conditional_block ops in block 0)
# took 4 million steps. A view that shows every block asks these instead: one pass.
def block_owners(program) -> dict[int, tuple[int, Operator]]:
    """``{block idx: Block.owner_op}`` for every block that has an owner op."""
    owners: dict[int, tuple[int, Operator]] = {}
    n = program.num_blocks
    for block in program.blocks:
        for i, op in enumerate(block.ops):
            for sub in op.sub_block_indices():
                if 0 <= sub < n and sub not in owners and \
                        program.block(sub).parent_idx == block.idx:
                    owners[sub] = (i, op)
    return owners


def block_paths(program, owners: dict | None = None) -> list[str]:
    """``Block.path`` of every block, in block order (``owners``: :func:`block_owners`)."""
    owners = block_owners(program) if owners is None else owners
    paths: dict[int, str] = {}

    def path(idx: int) -> str:       # parents first; depth is bounded by MAX_BLOCK_DEPTH
        if idx not in paths:
            parent = program.block(idx).parent_idx
            paths[idx] = _path_text(idx, path(parent) if parent >= 0 else None,
                                    owners.get(idx))
        return paths[idx]
    return [path(b) for b in range(program.num_blocks)]


def _path_text(idx: int, parent_path: str | None, owner) -> str:
    if parent_path is None:
        return f"block {idx}"
    if owner is None:
        return f"{parent_path} > (block {idx})"
    i, op = owner
    return f"{parent_path} > {op.type}@{i} (block {idx})"
