"""Checking a program that came from outside: structure at load time, the rest on request.

Two levels, so that a program Paddle saved with op types we lack can still be loaded,
printed and inspected:

- :func:`check_structure` runs in ``Program.from_bytes`` / ``from_desc``, before any object
  is made. It refuses what would make the library itself crash, hang or recurse without
  end: no blocks, blocks out of order, a ``parent_idx`` that is not an earlier block,
  blocks nested deeper than :data:`MAX_BLOCK_DEPTH`, a ``forward_block_idx`` that does not
  exist or forms a cycle, an op without a type, a BLOCK/BLOCKS attribute naming a block
  that does not exist or is not later than the op's own (a block owning itself, or two
  blocks owning each other, would be printed, pruned and run forever), a block owned by
  two ops, a variable declared twice in one block, names and text attributes that are not
  UTF-8 (protobuf hands those back as bytes), required fields left out. It raises
  :class:`~paddle_nb.core.errors.ProgramFormatError`.
- :func:`validate` runs everything: the structural checks again (a program edited in memory
  can break them), then, per op, unknown op types (only with ``strict=True``: real Paddle
  programs may use ops we lack), input/output variables that no block the op can see
  declares, missing required input slots, attributes whose type is not the one our OpProto
  declares (attributes it does not declare, Paddle's ``use_mkldnn`` and friends, are not
  checked), inputs that stand for an attribute the op does not read from a tensor
  (``attr_tensors.ATTRIBUTE_TENSORS``: fill_constant's ShapeTensorList...), and sizes:
  variables, and ops that allocate from a ``shape`` attribute, that would take more than
  :data:`MAX_TENSOR_BYTES`. These are checked in the blocks that can
  run: block 0 and the blocks its ops own (and theirs); a block no op owns never runs
  (prune leaves such blocks behind, and a program being built has them). It raises one
  :class:`ValidationError` listing every problem (``err.problems``), or returns the list
  with ``raise_on_error=False``.

Kernels that allocate from an attribute call :func:`check_tensor_size` first, so even a
program nobody validated cannot ask for terabytes. Nothing here uses pickle or eval:
a program is protobuf messages and nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import attrs as A
from . import attr_tensors, dtypes, limits, registry
from .errors import PaddleNBError, ProgramFormatError, did_you_mean
from .framework_pb2 import ProgramDesc, VarType
from .grad_maker import EMPTY_VAR
from .operator import created_at, warn_about_bookkeeping
from .symbol_table import tensor_desc

class ValidationError(PaddleNBError, ValueError):
    """A program that loaded but is not sound: ``problems`` lists every :class:`Problem`."""

    def __init__(self, message: str = "", problems=()):
        super().__init__(message)
        self.problems = list(problems)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a program: where (``block 0 > op 3 relu``), what, and a kind
    (``structure``, ``unknown-op``, ``undeclared-var``, ``slot``, ``attr-type``,
    ``attr-value``, ``missing-attr``, ``attr-tensor``, ``dtype``, ``dims``,
    ``too-large``)."""
    where: str
    message: str
    kind: str

    def __str__(self):
        return f"{self.where}: {self.message}"


def _summary(problems, what: str) -> str:
    if len(problems) == 1:
        return str(problems[0])
    lines = [f"{what} has {len(problems)} problems:"]
    lines += [f"  {p}" for p in problems[:limits.MAX_REPORTED]]
    if len(problems) > limits.MAX_REPORTED:
        lines.append(f"  ... and {len(problems) - limits.MAX_REPORTED} more (the error's "
                     f".problems lists them all)")
    return "\n".join(lines)


# --- structure (load time) ----------------------------------------------------------------------
def structure_problems(desc: ProgramDesc, text: bool = True) -> list[Problem]:
    """Everything wrong with the block tree and the block references of ``desc``.

    Afterwards (when the list is empty): block i has idx i; every block but 0 has an
    earlier parent, so the blocks form a tree at most MAX_BLOCK_DEPTH deep; following
    ``forward_block_idx`` ends within MAX_BLOCK_DEPTH steps; every block an op owns comes
    after the op's block and has that one owner, and chains of owners are at most
    MAX_BLOCK_DEPTH long. So walking sub-blocks (printer, prune, block_deps, backward, the
    executor) and resolving names always ends, in bounded depth, visiting each block once.
    ``text=False`` skips checking that names are text (bytes that are not UTF-8 can only
    come from parsing; messages made in memory hold str).
    """
    out: list[Problem] = []

    def bad(where, message):
        out.append(Problem(where, message, "structure"))

    blocks = desc.blocks
    n = len(blocks)
    if n == 0:
        bad("program", "the ProgramDesc has no blocks (a program has at least the global "
                       "block 0); the bytes are probably not a program")
        return out
    # the tree: idx, parent_idx, depth
    parent_ok = [False] * n
    depth = [0] * n
    for i, b in enumerate(blocks):
        if b.idx != i:
            bad(f"block at position {i}", f"says idx={b.idx}; blocks are numbered in order "
                                          f"(expected idx={i})")
        p = b.parent_idx
        if i == 0:
            parent_ok[0] = p == -1
            if p != -1:
                bad("block 0", f"has parent_idx={p}; the global block has no parent "
                               f"(expected -1)")
            continue
        if not 0 <= p < n:
            bad(f"block {i}", f"has parent_idx={p}: there is no block {p} (the program has "
                              f"{n} blocks, 0..{n - 1})")
        elif p >= i:
            bad(f"block {i}", f"has parent_idx={p}; a parent must be an earlier block "
                              f"(0..{i - 1}), so that the blocks form a tree, not a cycle")
        elif parent_ok[p]:
            parent_ok[i] = True
            depth[i] = depth[p] + 1
            if depth[i] == limits.MAX_BLOCK_DEPTH + 1:     # report the top of a too-deep subtree
                bad(f"block {i}", f"is nested {depth[i]} blocks deep (the blocks below it "
                                  f"deeper still); the limit is paddle_nb.core.limits."
                                  f"MAX_BLOCK_DEPTH = {limits.MAX_BLOCK_DEPTH}")
    # forward_block_idx: a gradient block resolves names through the forward block it
    # differentiates (Block.lookup); the chain must exist and end.
    for i, b in enumerate(blocks):
        f = b.forward_block_idx
        if f != -1 and not 0 <= f < n:
            bad(f"block {i}", f"has forward_block_idx={f}: there is no block {f} (the program "
                              f"has {n} blocks; -1 means none)")
        elif f == i:
            bad(f"block {i}", f"has forward_block_idx={f}, itself; a gradient block names "
                              f"the forward block it differentiates")
    hops = [None] * n           # forward steps from each block; None while unknown
    reported_cycles = set()
    for start in range(n):
        chain, seen, b = [], set(), start
        while 0 <= b < n and hops[b] is None and b not in seen:
            seen.add(b)
            chain.append(b)
            f = blocks[b].forward_block_idx
            b = f if (0 <= f < n and f != b) else -1
        if b in seen:               # a cycle: every block on it (and before it) is broken
            cycle = chain[chain.index(b):]
            key = frozenset(cycle)
            if key not in reported_cycles:
                reported_cycles.add(key)
                links = " -> ".join(str(c) for c in cycle + [b])
                bad(f"block {min(cycle)}", f"forward_block_idx links form a cycle (blocks "
                                           f"{links}); names would be looked up forever")
            base = limits.MAX_BLOCK_DEPTH + 1
        else:
            base = hops[b] if 0 <= b < n and hops[b] is not None else -1
        for c in reversed(chain):
            base += 1
            hops[c] = base
    for i in range(n):
        if hops[i] == limits.MAX_BLOCK_DEPTH + 1:
            bad(f"block {i}", f"is {hops[i]} forward_block_idx links from a block with none; "
                              f"the limit is paddle_nb.core.limits.MAX_BLOCK_DEPTH = "
                              f"{limits.MAX_BLOCK_DEPTH}")
    # variables and ops
    owner: dict[int, tuple[int, str]] = {}     # owned block -> (owner's block, where)
    for i, b in enumerate(blocks):
        names: dict[str, int] = {}
        for k, v in enumerate(b.vars):
            if text and type(v.name) is not str:
                bad(f"block {i}", f"variable {k} has a name that is not UTF-8 text: {v.name!r}")
            elif v.name in names:
                bad(f"block {i}", f"declares variable {v.name!r} twice (vars {names[v.name]} "
                                  f"and {k}); a block's variables have distinct names")
            else:
                names[v.name] = k
        for j, op in enumerate(b.ops):
            where = f"block {i} > op {j} {op.type}".rstrip()
            if not op.type:
                bad(where, "the op has no type")
            not_text = _not_text(op) if text else None
            if not_text:
                bad(where, f"{not_text} is not UTF-8 text")
            for a in op.attrs:
                if a.type == A.BLOCK:
                    subs = [a.block_idx]
                elif a.type == A.BLOCKS:
                    subs = list(a.blocks_idx)
                else:
                    continue
                for s in subs:
                    kind = "BLOCK" if a.type == A.BLOCK else "BLOCKS"
                    ref = f"attribute {a.name} ({kind}) refers to block {s}"
                    if not 0 <= s < n:
                        bad(where, f"{ref}: there is no block {s} (the program has {n} "
                                   f"blocks, 0..{n - 1})")
                    elif s == i:
                        bad(where, f"{ref}, the block the op is in: an op cannot own its own "
                                   f"block (running or printing it would never end)")
                    elif s < i:
                        bad(where, f"{ref}, an earlier block; an op owns only blocks made "
                                   f"after its own (index > {i}), so that ownership cannot "
                                   f"loop (block 1 owning block 2 owning block 1)")
                    elif s in owner:
                        bad(where, f"{ref}, which {owner[s][1]} owns already; a block has "
                                   f"one owning op")
                    else:
                        owner[s] = (i, where)
    # ownership depth: sub-blocks are walked recursively (printer, prune, block_deps, the
    # executor); owners come before the blocks they own, so one pass in order computes it
    owned_depth = [0] * n
    for s in range(n):
        if s in owner:
            owned_depth[s] = owned_depth[owner[s][0]] + 1
            if owned_depth[s] == limits.MAX_BLOCK_DEPTH + 1:
                bad(f"block {s}", f"is run by a chain of {owned_depth[s]} ops owning each "
                                  f"other's blocks; the limit is paddle_nb.core.limits."
                                  f"MAX_BLOCK_DEPTH = {limits.MAX_BLOCK_DEPTH}")
    return out


def _not_text(op) -> str | None:
    """What in an OpDesc should be text and is not. Protobuf hands back a ``string`` field
    holding bytes that are not UTF-8 as ``bytes``, which no part of the library expects."""
    if type(op.type) is not str:
        return f"the op type {op.type!r}"
    for kind, slots in (("input", op.inputs), ("output", op.outputs)):
        for v in slots:
            if type(v.parameter) is not str:
                return f"the {kind} slot name {v.parameter!r}"
            for name in v.arguments:
                if type(name) is not str:
                    return f"a variable name in {kind} slot {v.parameter}: {name!r}"
    for a in op.attrs:
        if type(a.name) is not str:
            return f"the attribute name {a.name!r}"
        values = ([a.s] if a.type == A.STRING else list(a.strings) if a.type == A.STRINGS
                  else [a.var_name] if a.type == A.VAR else list(a.vars_name)
                  if a.type == A.VARS else [])
        for v in values:
            if type(v) is not str:
                return f"attribute {a.name}'s value {v!r}"
    return None


def check_structure(desc: ProgramDesc, text: bool = True) -> None:
    """Raise :class:`ProgramFormatError` listing what :func:`structure_problems` finds."""
    if not isinstance(desc, ProgramDesc):
        raise ProgramFormatError(f"expected a ProgramDesc message, got {type(desc).__name__}")
    if not desc.IsInitialized():        # upb's parser does not check proto2 required fields
        missing = desc.FindInitializationErrors()
        more = f", ... ({len(missing)} in all)" if len(missing) > 10 else ""
        raise ProgramFormatError(f"the ProgramDesc lacks required fields: "
                                 f"{', '.join(missing[:10])}{more}")
    problems = structure_problems(desc, text)
    if problems:
        raise ProgramFormatError(_summary(problems, "the ProgramDesc"))


# --- validation ----------------------------------------------------------------------------------
# Attribute types that hold the same kind of value (Paddle 1.x wrote some shapes as INTS
# that later versions write as LONGS; the executor reads any of them).
_SAME_KIND = {A.INT: {A.INT, A.LONG}, A.LONG: {A.INT, A.LONG},
              A.INTS: {A.INTS, A.LONGS}, A.LONGS: {A.INTS, A.LONGS},
              A.FLOAT: {A.FLOAT, A.FLOAT64}, A.FLOAT64: {A.FLOAT, A.FLOAT64},
              A.FLOATS: {A.FLOATS, A.FLOAT64S}, A.FLOAT64S: {A.FLOATS, A.FLOAT64S}}

_TYPE_CODES = frozenset(VarType.Type.values())


class _Checker:
    def __init__(self, program, strict: bool):
        self.program = program
        self.strict = strict
        self.problems: list[Problem] = []
        self.sound = False
        self._paths: dict[int, str] = {}
        self._all_names = None

    def add(self, where, message, kind):
        self.problems.append(Problem(where, message, kind))

    # where things are
    def path(self, i: int) -> str:
        p = self._paths.get(i)
        if p is None:
            p = self._paths[i] = self.program.blocks[i].path if self.sound else f"block {i}"
        return p

    def visible(self, i: int, name: str) -> bool:
        """Does ``name`` resolve from block ``i``: its parents, then (for a gradient block)
        its forward block's, as Block.lookup resolves it (guarded against cycles)."""
        blocks, seen = self.program.blocks, set()
        while 0 <= i < len(blocks) and i not in seen:
            seen.add(i)
            table = blocks[i].table
            if table.find_var(name) is not None:
                return True
            i = table.header.forward_block_idx
        return False

    def hint(self, name: str) -> str:
        if len(self.problems) > limits.MAX_REPORTED:
            return ""
        if self._all_names is None:
            self._all_names = sorted({n for b in self.program.blocks for n in b.table.vars})
        if len(self._all_names) > 20000:
            return ""
        return did_you_mean(name, self._all_names)

    def live_blocks(self):
        """Block 0 and the blocks its ops own, and theirs: what can run. A block no op owns
        (prune leaves them behind; a program being built has them) never runs."""
        blocks, live, todo = self.program.blocks, {0}, [0]
        while todo:
            for op in blocks[todo.pop()].table.ops:
                for a in op.attrs:
                    subs = ([a.block_idx] if a.type == A.BLOCK else
                            list(a.blocks_idx) if a.type == A.BLOCKS else [])
                    for s in subs:
                        if 0 <= s < len(blocks) and s not in live:
                            live.add(s)
                            todo.append(s)
        return [blocks[i] for i in sorted(live)]

    # the checks
    def run(self):
        program = self.program
        structure = structure_problems(program.desc)
        self.problems.extend(structure)
        self.sound = not structure
        for b in self.live_blocks():
            for desc in b.table.vars.values():
                self.check_var(b.idx, desc)
            for j, op in enumerate(b.table.ops):
                self.check_op(b.idx, j, op)
        return self.problems

    def run_attributes(self):
        """The checks a run cannot do without: block references, then the type and value
        of every declared attribute of every op that can run (a kernel reading a FLOAT
        where it expects INTS fails deep inside; a ``sub_block`` stored as an INT would be
        followed into the op's own block, forever)."""
        structure = structure_problems(self.program.desc)
        self.problems.extend(structure)
        self.sound = not structure
        if structure:
            return self.problems
        for b in self.live_blocks():
            for j, op in enumerate(b.table.ops):
                if not registry.is_registered(op.type):
                    continue             # the executor names an unknown op itself
                op_def = registry.lookup(op.type)
                where = f"{self.path(b.idx)} > op {j} {op.type}"
                self.check_attrs(where, op, op_def)
                self.check_attr_tensors(where, op, op_def)
        return self.problems

    def check_var(self, i, desc):
        t = tensor_desc(desc)
        if t is None:
            return
        dims = list(t.dims)
        where = self.path(i)
        what = f"variable {desc.name!r} ({dtypes.name(t.data_type)}{dims})"
        if t.data_type not in dtypes._NAMES:
            code = t.data_type
            kind = VarType.Type.Name(code) if code in _TYPE_CODES else "unknown"
            self.add(where, f"{what}: data type {code} ({kind}) is not a tensor element type; "
                            f"expected one of {', '.join(sorted(dtypes._FROM_NAME))}", "dtype")
            return
        wrong = [d for d in dims if d < -1]
        if wrong:
            self.add(where, f"{what}: dim {wrong[0]} is not a size; expected dims >= 0, or "
                            f"-1 for 'any size'", "dims")
            return
        n = limits.tensor_bytes(dims, limits.item_size(t.data_type))
        if n > limits.MAX_TENSOR_BYTES:
            self.add(where, f"{what} would take {limits.human_bytes(n)}; {limits.limit_text()}",
                     "too-large")

    def check_op(self, i, j, op):
        where = f"{self.path(i)} > op {j} {op.type}"
        op_def = None
        try:
            op_def = registry.lookup(op.type)
        except PaddleNBError as e:         # the text names the closest registered types
            if self.strict:
                self.add(where, f"{e}; it cannot run here (validate(program, strict=False) "
                                f"skips this check)", "unknown-op")
        # variables: every name an op reads or writes is declared where the op can see it
        for kind, slots in (("input", op.inputs), ("output", op.outputs)):
            for v in slots:
                for name in v.arguments:
                    if name in ("", EMPTY_VAR) or self.visible(i, name):
                        continue
                    fwd = self.program.blocks[i].forward_block_idx
                    seen = f" or its forward block {fwd}" if fwd >= 0 else ""
                    self.add(where, f"{kind} slot {v.parameter}: variable {name!r} is not "
                                    f"declared in {self.path(i)}, any enclosing block{seen}"
                                    f"{self.hint(name)}", "undeclared-var")
        if op_def is None:
            return
        self.check_slots(where, op, op_def)
        self.check_attr_tensors(where, op, op_def)
        values = self.check_attrs(where, op, op_def)
        if op_def.allocates:
            self.check_allocation(where, op, op_def, values)
        if op_def.check_attrs is not None and not self.problems_at(where):
            problem = op_def.check_attrs(values)
            if problem:
                self.add(where, f"attributes: {problem}", "attr-value")

    def check_slots(self, where, op, op_def):
        given = {}
        for kind, slots, spec_of in (("input", op.inputs, op_def.input),
                                     ("output", op.outputs, op_def.output)):
            for v in slots:
                spec = spec_of(v.parameter)
                if kind == "input":
                    given[v.parameter] = [a for a in v.arguments if a]
                if spec is not None and not spec.duplicable and len(v.arguments) > 1:
                    self.add(where, f"{kind} slot {v.parameter} takes one variable (it is not "
                                    f"duplicable), given {len(v.arguments)}: "
                                    f"{list(v.arguments)[:5]}", "slot")
        for spec in op_def.inputs:
            if not spec.dispensable and not given.get(spec.name):
                self.add(where, f"needs input slot {spec.name} ({spec.comment or 'no doc'}); "
                                f"given input slots: {sorted(k for k, v in given.items() if v)}",
                         "slot")

    def check_attr_tensors(self, where, op, op_def):
        """An input standing for an attribute that the op does not read from a tensor
        (attr_tensors.unread_attr_tensors): run on the attribute's value, it would give
        another result than Paddle's."""
        given = {v.parameter for v in op.inputs
                 if any(a not in ("", EMPTY_VAR) for a in v.arguments)}
        for t in attr_tensors.unread_attr_tensors(op_def, given):
            message, expected = attr_tensors.attr_tensor_refusal(op.type, t)
            names = [a for v in op.inputs if v.parameter == t.slot for a in v.arguments]
            created = created_at(op)
            self.add(where, f"input slot {t.slot} {message}; expected {expected}, given "
                            f"{t.slot} {names}" +
                     (f"; op created at: {created}" if created else ""), "attr-tensor")

    def check_attrs(self, where, op, op_def) -> dict:
        """Type-check the attributes the OpProto declares; returns their values (those of a
        fitting type), defaults filled in."""
        values = {a.name: a.default for a in op_def.attrs}
        present = set()
        for a in op.attrs:
            spec = op_def.attr(a.name)
            if spec is None:
                continue             # Paddle-only attributes are kept, not checked
            present.add(a.name)
            if a.type != spec.type and a.type not in _SAME_KIND.get(spec.type, ()):
                try:
                    shown = f" ({A.format_value(A.read(a))})"
                except Exception:                 # noqa: BLE001 (only for the message)
                    shown = ""
                self.add(where, f"attribute {a.name}: declared {A.TYPE_NAMES[spec.type]} "
                                f"by op {op.type}, given {A.TYPE_NAMES.get(a.type, a.type)}"
                                f"{shown}", "attr-type")
                values.pop(a.name, None)
                continue
            value = A.read(a)
            values[a.name] = value
            if spec.check is not None:
                problem = spec.check(value)
                if problem:
                    self.add(where, f"attribute {a.name}={A.format_value(value)}: {problem}",
                             "attr-value")
        for spec in op_def.attrs:
            if spec.default is None and spec.name not in present:
                self.add(where, f"attribute {spec.name} is missing (type "
                                f"{A.TYPE_NAMES[spec.type]}, no default: {spec.comment})",
                         "missing-attr")
        return values

    def problems_at(self, where) -> bool:
        return any(p.where == where for p in self.problems)

    def check_allocation(self, where, op, op_def, values):
        """The size of the tensor an ``allocates`` op makes from its attributes: (shape
        attr, dtype attr[, attr naming the dim that is only known when it runs])."""
        shape_attr, dtype_attr, *run_time_dim = op_def.allocates
        tensors = attr_tensors.given(op_def, lambda slot: any(
            v.parameter == slot and any(v.arguments) for v in op.inputs))
        if shape_attr in tensors:
            return          # a tensor's value, known when it runs: the allocation guard's
        shape, code = values.get(shape_attr), values.get(dtype_attr)
        if not isinstance(shape, list) or not isinstance(code, int):
            return                   # a wrong type was reported already
        shape = list(shape)
        if run_time_dim:
            k = values.get(run_time_dim[0], 0)
            if not isinstance(k, int) or not -len(shape) <= k < len(shape):
                self.add(where, f"attribute {run_time_dim[0]}={k} is not a position in "
                                f"shape {shape}", "attr-value")
                return
            shape[k] = 1             # e.g. the batch size, known only when it runs
        if code not in dtypes._TO_NUMPY:
            self.add(where, f"attribute {dtype_attr}={code}: expected the VarType code of a "
                            f"tensor element type ({', '.join(sorted(dtypes._FROM_NAME))})",
                     "attr-value")
            return
        wrong = [d for d in shape if d < -1]
        if wrong:
            self.add(where, f"attribute {shape_attr}={A.format_value(shape)}: dim {wrong[0]} "
                            f"is not a size; expected dims >= 0 (-1 only where the size is "
                            f"given at run time)", "dims")
            return
        n = limits.tensor_bytes(shape, limits.item_size(code))
        if n > limits.MAX_TENSOR_BYTES:
            self.add(where, f"attribute {shape_attr}={A.format_value(shape)} "
                            f"({dtypes.name(code)}): the op would allocate "
                            f"{limits.human_bytes(n)}; "
                            f"{limits.limit_text()}", "too-large")
            return


def check_before_run(program) -> None:
    """What ``Executor.run`` and ``Executor.steps`` check once per version of a program
    (the executor caches the answer on the program): block references, attribute
    types and values, and inputs standing for an attribute that the op does not read.
    Raises a :class:`ValidationError` listing every problem; the rest of
    :func:`validate` (declared variables, sizes) is left to the kernels and the
    allocation guard, which meet the real values."""
    problems = _Checker(program, strict=False).run_attributes()
    if problems:
        raise ValidationError(_summary(problems, "the program") + "\n(found before running "
                              "it: nothing ran)", problems)


def validate(program, strict: bool = True, raise_on_error: bool = True) -> list[Problem]:
    """Check everything about ``program`` and report every problem at once.

    ``strict=True`` (the default) also reports op types that are not registered (a program
    from a newer Paddle: it loads and prints, but cannot run here); ``strict=False`` skips
    that check. Raises one :class:`ValidationError` listing all problems (``.problems``);
    with ``raise_on_error=False`` returns the list instead (empty when the program is
    sound). The program is not changed.
    """
    if not hasattr(program, "global_block"):     # (program.py imports this module)
        raise ValidationError(f"validate needs a Program, got {type(program).__name__}")
    problems = _Checker(program, strict).run()
    if not any(p.kind == "structure" for p in problems):   # (block paths need a sound tree)
        warn_about_bookkeeping(program.blocks)             # not a problem: the program runs
    if problems and raise_on_error:
        raise ValidationError(_summary(problems, "the program"), problems)
    return problems
