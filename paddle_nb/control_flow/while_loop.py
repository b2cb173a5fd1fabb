"""While loops (the Block design's while_op, Fluid's While, Paddle's while_loop) and tensor
arrays.

    i = pd.layers.fill_constant([1], "int64", 0)
    n = pd.layers.fill_constant([1], "int64", 3)
    cond = pd.layers.less_than(i, n)
    w = pd.While(cond)
    with w.block():
        ...                                    # the body
        pd.increment(i)                        # updates i in place
        pd.layers.less_than(i, n, cond=cond)   # the body must update cond

Arrays carry values across steps: ``create_array``, ``array_write(x, i, array)``,
``array_read(array, i)``, ``array_length(array)``.
"""
from __future__ import annotations

import contextlib

from ..builders import arg_checks as check
from ..layers.base import append, fill_constant
from ..layers.declare import assign
from ..core import unique_name
from ..core.block_deps import external_reads_and_writes
from ..core.framework_pb2 import VarType
from ..core.program import default_main_program
from ..core.variable import Variable
from .blocks import misuse, scope_list_var, sub_block


class While:
    def __init__(self, cond: Variable, is_test: bool = False, name: str | None = None):
        builder = type(self).__name__
        self.cond = check.variable(builder, "cond", cond, dtype="bool", one_element=True,
                                   hint=" (a bool condition the body updates)")
        self.is_test = check.boolean(builder, "is_test", is_test)
        self.parent = default_main_program().current_block()
        self.used = False

    @contextlib.contextmanager
    def block(self):
        if self.used:
            raise misuse("a While's block can be opened once")
        self.used = True
        with sub_block() as body:
            yield body
        reads, writes = external_reads_and_writes(self.parent.program, body.idx)
        if self.cond.name not in writes:
            raise misuse(f"the While body never updates its condition {self.cond.name!r}: the "
                         f"loop would not end (e.g. pd.layers.less_than(i, n, cond=cond))")
        self.parent.append_op(
            "while", {"X": [n for n in reads if n != self.cond.name], "Condition": [self.cond]},
            {"Out": writes, "StepScopes": [scope_list_var(self.parent, "while")]},
            {"sub_block": body, "is_test": self.is_test})

    stepnet = block       # the Block design's spelling


def while_loop(cond, body, loop_vars, is_test: bool = False, name=None):
    """Paddle's ``while_loop``: ``while cond(*vars): vars = body(*vars)``; returns vars."""
    check.function("while_loop", "cond", cond)
    check.function("while_loop", "body", body)
    loop_vars = check.variables("while_loop", "loop_vars", loop_vars)
    check.boolean("while_loop", "is_test", is_test)
    pre = cond(*loop_vars)
    check.variable("while_loop", "cond(*loop_vars)", pre, dtype="bool", one_element=True)
    w = While(pre, is_test)
    with w.block():
        new = body(*loop_vars)
        new = list(new) if isinstance(new, (list, tuple)) else [new]
        if len(new) != len(loop_vars):
            raise misuse(f"while_loop: body returned {len(new)} values for {len(loop_vars)} "
                         f"loop variables")
        for n, old in zip(new, loop_vars):
            if n is not old:
                assign(n, output=old)
        assign(cond(*loop_vars), output=pre)
    return loop_vars


class WhileOp(While):
    """The Block design's ``pd.while_op()``: with no condition, the block runs once (the design
    leaves the condition out); with one, it is a While."""

    def __init__(self, cond: Variable | None = None, name: str | None = None):
        self._once = cond is None
        check.variable("WhileOp", "cond", cond, dtype="bool", one_element=True, optional=True)
        if cond is None:
            cond = fill_constant([1], "bool", 1.0)
        super().__init__(cond, name=name)

    @contextlib.contextmanager
    def block(self):
        with super().block() as body:
            yield body
            if self._once:
                assign(fill_constant([1], "bool", 0.0), output=self.cond)

    stepnet = block


def while_op(cond: Variable | None = None, name=None) -> WhileOp:
    return WhileOp(cond, name)


# --- tensor arrays and counters ------------------------------------------------------------
def create_array(dtype="float32", name: str | None = None) -> Variable:
    check.data_type("create_array", "dtype", dtype)
    check.text("create_array", "name", name, optional=True)
    block = default_main_program().current_block()
    return block.create_var(name or unique_name.generate("array"), dtype=dtype,
                            type=VarType.LOD_TENSOR_ARRAY)


def array_write(x: Variable, i: Variable, array: Variable | None = None) -> Variable:
    check.variable("array_write", "x", x)
    check.variable("array_write", "i", i, dtype="int", one_element=True)
    check.tensor_array("array_write", "array", array, optional=True)
    array = array if array is not None else create_array(x.dtype)
    default_main_program().current_block().append_op(
        "write_to_array", {"X": [x], "I": [i]}, {"Out": [array]})
    return array


def array_read(array: Variable, i: Variable) -> Variable:
    check.tensor_array("array_read", "array", array)
    check.variable("array_read", "i", i, dtype="int", one_element=True)
    return append("read_from_array", {"X": [array], "I": [i]}, out_dtype=array.dtype)


def array_length(array: Variable) -> Variable:
    check.tensor_array("array_length", "array", array)
    return append("lod_array_length", {"X": [array]}, out_dtype="int64")


def increment(x: Variable, value: float = 1.0, in_place: bool = True) -> Variable:
    """``x + value`` for a one-element counter ``x``, in place unless ``in_place=False``."""
    check.variable("increment", "x", x)
    value = check.number("increment", "value", value)
    in_place = check.boolean("increment", "in_place", in_place)
    out = x if in_place else default_main_program().current_block().create_var(
        unique_name.generate("increment.tmp"), list(x.shape), x.dtype)
    default_main_program().current_block().append_op("increment", {"X": [x]}, {"Out": [out]},
                                                     {"step": value})
    return out


def tensor_array_to_tensor(array: Variable, axis: int = 0, use_stack: bool = False):
    check.tensor_array("tensor_array_to_tensor", "array", array)
    axis = check.integer("tensor_array_to_tensor", "axis", axis)
    use_stack = check.boolean("tensor_array_to_tensor", "use_stack", use_stack)
    block = default_main_program().current_block()
    out = block.create_var(unique_name.generate("tensor_array_to_tensor.tmp"), dtype=array.dtype)
    index = block.create_var(unique_name.generate("tensor_array_to_tensor.tmp"), dtype="int32")
    block.append_op("tensor_array_to_tensor", {"X": [array]},
                    {"Out": [out], "OutIndex": [index]}, {"axis": axis, "use_stack": use_stack})
    return out, index

