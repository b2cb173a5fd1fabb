"""The source of one compiled segment: a Python function that numba compiles.

A segment is a run of ops that all have a lowered form (kernels/lowered.py). Its function
takes the arrays the segment reads before writing them and returns every array it writes,
in the block's numbering (``v7`` is name number 7 of the block: core/fast_path.bind_slots).
Each op is one line (or, fused, one statement of a loop) under a comment naming the op,
its operands and the line of the user's code that built it, so that a learner reading
``CompiledProgram.source()`` sees the program they wrote::

    # op 0 mul: X=x, Y=w1 -> Out=fc_0.tmp_0    [model.py:12]
    v2 = F0(v0, v1, 1, 1)

**Fusion.** Consecutive Elementwise ops whose outputs have one shape become one loop: each
element goes through the whole chain in registers, every output is stored once (a value
some later op or the user may read), and no intermediate array is read back. Each step
rounds to its output's dtype, as the interpreter's separate kernels do, so a fused chain
gives the same bits. An operand of another shape is read the way Fluid's ``axis``
broadcast reads it: a run of the loop's dims ``[lo, hi)`` (a bias over the last dim, a
[C] scale over the channels of [N, C, H, W]) at ``(i // post) % n``, or one element.
Anything else (numpy broadcasting growing both operands) stays out of the compiled code.

The function checks at its start that its operands have the sizes it was generated for,
and raises otherwise (the executor then runs the block in the interpreter, which names the
op): a compiled segment is specialised on shapes' patterns, not on their sizes, so one
batch size or another runs the same machine code.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np

from ..core.grad_maker import EMPTY_VAR
from ..kernels.cpu import tensor_array as KT
from ..kernels.lowered import Elementwise
from ..ops.common import broadcast_read


@dataclass
class Source:
    """A segment's generated function: its text, the globals it calls, which block names
    (by number) it takes and returns."""
    text: str
    scope: dict
    reads: list[int]
    writes: list[int]
    report: bool = False      # takes a first argument: an int64 array a limit's error reads
    arrays: dict = None       # the tensor arrays it reads or writes: number -> (dtype, rank)


def op_comment(pop, names: list[str]) -> str:
    """``# op 3 relu: X=fc_0.tmp_1 -> Out=fc_0.tmp_2    [file.py:12]``."""
    def slots(numbers):
        return ", ".join(f"{slot}={'/'.join(names[i] if i >= 0 else EMPTY_VAR for i in ix)}"
                         for slot, ix in numbers.items() if ix)
    where = f"    [{user_line(pop.created_at)}]" if pop.created_at else ""
    return f"# op {pop.index} {pop.op.type}: {slots(pop.in_ix)} -> {slots(pop.out_ix)}{where}"


def user_line(created_at: str) -> str:
    """``model.py:12`` from an op's creation record (``File "/x/model.py", line 12, in
    build: code``), or the record itself when it is not one of those."""
    found = re.match(r'File "([^"]+)", line (\d+)', created_at)
    return f"{os.path.basename(found[1])}:{found[2]}" if found else created_at


def literal(value, scope: dict) -> str:
    """``value`` (an attribute, a scalar parameter) as source text."""
    if isinstance(value, np.generic):
        name = np.dtype(value.dtype).name
        scope[name] = value.dtype.type
        return f"{name}({literal(value.item(), scope)})"
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "math.nan"
        if math.isinf(value):
            return "math.inf" if value > 0 else "-math.inf"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "(" + "".join(literal(v, scope) + ", " for v in value) + ")"
    raise TypeError(f"no literal for {value!r}")


class Writer:
    """Builds one segment's function, op by op."""

    def __init__(self, names: list[str], learned, needed: set[int],
                 fresh: set[int] = frozenset()):
        self.names = names
        self.learned = learned
        self.needed = needed             # returned: read after the segment, or kept
        # tensor arrays local to the block that nothing wrote before the segment: each run
        # starts them empty (the executor declares the block's locals anew for every run)
        self.fresh = fresh
        self.arrays: dict[int, tuple] = {}   # tensor arrays (by number): (dtype, rank)
        self.scope: dict = {"np": np, "math": math}
        self.body: list[str] = []
        self.defined: set[int] = set()     # numbers written so far
        self.reads: list[int] = []         # numbers read before being written
        self.writes: list[int] = []
        self._count = 0
        self.reports = False

    def report(self) -> str:
        """The name of an int64 array the function takes first, where compiled code leaves
        numbers for the error it raises (exceptions leave the cached machine code with
        constant arguments only): compiler/plan.Segment passes its own."""
        self.reports = True
        return "report"

    def _global(self, value) -> str:
        """The global name the source calls the numba function ``value`` by: its own name
        (a second function of that name gets a number), so the source says what it calls
        and two sources calling different functions differ (disk_cache keys on the text)."""
        for name, known in self.scope.items():
            if known is value:
                return name
        base = name = getattr(value, "__name__", "fn")
        count = 1
        while name in self.scope:
            count += 1
            name = f"{base}_{count}"
        self.scope[name] = value
        return name

    def _dtype(self, dtype) -> str:
        name = np.dtype(dtype).name
        self.scope[name] = np.dtype(dtype).type
        return name

    def _use(self, i: int) -> str:
        if i not in self.defined and i not in self.reads:
            self.reads.append(i)
        return f"v{i}"

    def _define(self, i: int) -> str:
        self.defined.add(i)
        if i not in self.writes:
            self.writes.append(i)
        return f"v{i}"

    def array(self, i: int, dtype, ndim: int) -> str:
        """Tensor array number ``i`` (entries of ``dtype`` and rank ``ndim``), as a value:
        what the segment holds or takes in, or an empty one made here if it is fresh
        (kernels/cpu/tensor_array.py)."""
        self.arrays.setdefault(i, (np.dtype(dtype), ndim))
        if i in self.defined or i in self.reads or i not in self.fresh:
            return self._use(i)
        empty = f"np.empty(({'0, ' * (ndim + 1)}), {self._dtype(dtype)})"
        self.body.append(f"    {self._define(i)} = {self._global(KT.fresh)}({empty})")
        return f"v{i}"

    # --- calls --------------------------------------------------------------------------
    def calls(self, pop, forms: tuple) -> None:
        """The op as one line per Call (its gradients for X and for Y, say)."""
        self.body.append("    " + op_comment(pop, self.names))
        for form in forms:
            arrays = {slot: (dtype, ndim) for slot, dtype, ndim in form.arrays}
            args = []
            for slot in form.reads:
                ix = pop.in_ix.get(slot) or pop.out_ix[slot]    # an output: as it was
                if slot in arrays:
                    args.append(self.array(ix[0], *arrays[slot]))
                elif pop.op_def.input(slot).duplicable:
                    args.append("(" + "".join(self._use(i) + ", " for i in ix) + ")")
                else:
                    args.append(self._use(ix[0]))
            args += [literal(c, self.scope) for c in form.consts]
            fn = self._global(form.fn)
            targets, lists = [], []
            for k, slot in enumerate(form.writes):
                ix = pop.out_ix.get(slot) or (-1,)
                if slot in arrays and ix[0] >= 0:
                    self.arrays.setdefault(ix[0], (np.dtype(arrays[slot][0]),
                                                   arrays[slot][1]))
                if pop.op_def.output(slot).duplicable:    # a list, one array per output
                    targets.append(f"l{pop.index}_{len(lists)}")
                    lists.append((targets[-1], ix))
                else:                                     # (one nobody asked for: dropped)
                    targets.append(self._define(ix[0]) if ix[0] >= 0 else f"_{pop.index}_{k}")
            call = f"{fn}({', '.join(args)})"
            self.body.append(f"    {', '.join(targets)} = {call}" if targets else
                             f"    {call}")      # a check (assert), with no outputs
            for name, ix in lists:
                self.body += [f"    {self._define(i)} = {name}[{k}]"
                              for k, i in enumerate(ix) if i >= 0]

    # --- a fused chain of elementwise ops -----------------------------------------------
    def fused(self, group: list, read_after: set[int]) -> None:
        """One loop for ``group``, a list of (pop, Elementwise, patterns) all of whose
        outputs have one shape; the first op has a flat array operand (the loop's shape).
        An output is stored (in an array) only if ``read_after`` holds it, by the last op
        of the group that writes it; inside the loop the next ops read it in a register."""
        last_writer = {pop.out_ix[form.writes][0]: k for k, (pop, form, _) in enumerate(group)}
        first_pop, first_form, first_patterns = group[0]
        ref = next(first_pop.in_ix[s][0] for s, p in zip(first_form.reads, first_patterns)
                   if p == ("flat",))
        b = self.body
        if len(group) > 1:
            b.append(f"    # ops {group[0][0].index}-{group[-1][0].index}: one loop")
        for pop, _, _ in group:
            b.append("    " + op_comment(pop, self.names))
        g = self._count
        self._count += 1
        b.append(f"    shape{g} = {self._use(ref)}.shape")
        b.append(f"    n{g} = {self._use(ref)}.size")
        rank = len(self._shape_of(first_pop, first_form))
        split = _split(group, rank)
        if split:                           # rows of the dims before ``split``, then cols
            cols = " * ".join(f"shape{g}[{d}]" for d in range(split, rank))
            b.append(f"    cols{g} = {cols}")
            b.append(f"    rows{g} = n{g} // cols{g} if cols{g} > 0 else 0")
        pad = " " * (12 if split else 8)
        inside: dict[int, str] = {}         # numbers computed in this loop: temp names
        read_arrays: dict[int, str] = {}    # array operands' flat views
        loop: list[str] = []
        stores: list[str] = []
        for k, (pop, form, patterns) in enumerate(group):
            args = []
            for slot, pattern in zip(form.reads, patterns):
                i = pop.in_ix[slot][0]
                if i in inside and pattern == ("flat",):
                    args.append(inside[i])
                    continue
                if pattern == ("flat",) and i != ref and math.prod(
                        self.learned[i].shape) == 1:
                    # learned at one element, the loop too: a value-sized operand (a
                    # masked_select's) may be one element or the loop's size next time
                    pattern = ("either",)
                if i not in read_arrays:
                    v = self._use(i)
                    read_arrays[i] = f"r{i}_{g}"
                    if i != ref:                  # (the loop's shape is ref's)
                        b.append(self._check(v, pattern, g, pop, slot))
                    b.append(f"    r{i}_{g} = {v}.ravel()")
                r = read_arrays[i]
                if pattern == ("flat",):
                    args.append(f"{r}[i]")
                elif pattern == ("either",):
                    args.append(f"{r}[i % {r}.size]")
                elif pattern == ("one",):
                    args.append(f"{r}[0]")
                else:
                    args.append(f"{r}[{_run_index(pattern, r, g, split, rank)}]")
            args += [literal(p, self.scope) for p in form.params]
            out = pop.out_ix[form.writes][0]
            dtype = self._dtype(self.learned[out].dtype)
            kernel = self._global(form.kernel.scalar)
            t = f"t{out}"
            loop.append(f"{pad}{t} = {dtype}({kernel}({', '.join(args)}))")
            inside[out] = t
            read_arrays.pop(out, None)      # rewritten here: later reads see the new one
            if out in read_after and last_writer[out] == k:
                loop.append(f"{pad}w{out}_{g}[i] = {t}")
                v = self._define(out)
                stores.append(f"    {v} = np.empty(shape{g}, {dtype})")
                stores.append(f"    w{out}_{g} = {v}.ravel()")
        b += stores
        if split:
            b.append(f"    for row in range(rows{g}):")
            b.append(f"        for col in range(cols{g}):")
            b.append(f"            i = row * cols{g} + col")
        else:
            b.append(f"    for i in range(n{g}):")
        b += loop

    def _shape_of(self, pop, form: Elementwise) -> tuple:
        return self.learned[pop.out_ix[form.writes][0]].shape

    def _check(self, v: str, pattern, g: int, pop, slot: str) -> str:
        """The line that refuses an operand of another size than the one compiled for."""
        if pattern == ("flat",):
            test = f"{v}.shape != shape{g}"
        elif pattern == ("either",):
            test = f"{v}.size != 1 and {v}.shape != shape{g}"
        elif pattern == ("one",):
            test = f"{v}.size != 1"
        else:
            _, lo, hi = pattern
            test = f"{v}.size != " + " * ".join(f"shape{g}[{d}]" for d in range(lo, hi))
        return (f"    if {test}:\n        raise ValueError(\"op {pop.index} {pop.op.type}: "
                f"{slot} has another shape than the compiled segment was made for\")")

    def finish(self, name: str) -> Source:
        """The function: it returns what is read after it or kept (``needed``)."""
        returned = [i for i in self.writes if i in self.needed]
        args = ", ".join(["report"] * self.reports + [f"v{i}" for i in self.reads])
        rets = "".join(f"v{i}, " for i in returned)
        text = "\n".join([f"def {name}({args}):", *self.body, f"    return ({rets})", ""])
        return Source(text, self.scope, list(self.reads), returned, self.reports,
                      dict(self.arrays))


def _split(group: list, rank: int) -> int:
    """Where a fused loop over dims of ``rank`` splits into rows and columns, or 0 for one
    flat loop: at the edge of the first operand read as a run of dims (a bias over the last
    dims: its run is the columns, read at ``col``; a channel scale over [N, C, H, W]: the
    rows end with it, and it is read once per row). A flat loop would read such an operand
    at ``(i // post) % n``, an integer division per element, which costs fifteen times the add
    and keeps LLVM from vectorising the loop."""
    for _, _, patterns in group:
        for pattern in patterns:
            if pattern[0] == "run":
                _, lo, hi = pattern
                return lo if hi == rank else hi
    return 0


def _run_index(pattern, r: str, g: int, split: int, rank: int) -> str:
    """The index into ``r`` (an operand read as the run of dims ``[lo, hi)`` of loop
    ``g``) of element ``i``: from the column alone where the run lies in the columns, from
    the row alone where it lies in the rows, else ``(i // post) % n``."""
    _, lo, hi = pattern

    def dims(a, b):
        return " * ".join(f"shape{g}[{d}]" for d in range(a, b))
    if split and lo >= split:
        if hi == rank:
            return "col" if lo == split else f"col % {r}.size"
        return f"(col // ({dims(hi, rank)})) % {r}.size"
    if split and hi <= split:
        post = dims(hi, split)
        return f"(row // ({post})) % {r}.size" if post else f"row % {r}.size"
    post = dims(hi, rank)
    return f"(i // ({post})) % {r}.size" if post else f"i % {r}.size"


def elementwise_patterns(pop, form: Elementwise, learned) -> list | None:
    """How a loop over the op's output reads each operand (ops/common.broadcast_read),
    or None."""
    loop_shape = learned[pop.out_ix[form.writes][0]].shape
    patterns = []
    for slot in form.reads:
        p = broadcast_read(learned[pop.in_ix[slot][0]].shape, loop_shape, form.axis)
        if p is None:
            return None
        patterns.append(p)
    return patterns
