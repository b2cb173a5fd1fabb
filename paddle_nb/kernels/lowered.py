"""What an op is inside a compiled block: its *lowered form*.

The block compiler (paddle_nb/compiler/) turns a run of ops into one generated Python
function that numba compiles, so that the ops' kernels are called from machine code and not
one by one from the interpreter (2-3 us of numba's dispatcher per call before any work).
For that, an op declares beside its kernels a ``lowered(info)`` function that says what it
is there, given what the compiler learned of its operands (``info``: the op's attributes and
its operands' dtypes, ranks and shapes; paddle_nb/compiler/lowering.py). It returns one of:

- :class:`Elementwise`: ``Out = f(a, b, ..., *params)`` element by element, ``f`` a
  ``@pointwise`` scalar function. The compiler fuses a chain of them into one loop.
- :class:`Call`: ``outputs = fn(*inputs, *consts)``, ``fn`` an ``njit`` function that
  returns new arrays (never writes into its inputs: a run stays all or nothing).
- None, or a text saying why: no lowered form for these operands or attributes; the op
  runs in the interpreter between two compiled segments, and ``CompiledProgram.source()``
  says so (with the text).

A lowered form computes what the op's CPU kernel computes, in the same order where it can
(the tests compare every op-table program both ways).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Elementwise:
    """``writes = kernel.scalar(*reads, *params)`` element by element (``kernel`` a
    kernels.pointwise.Pointwise); operands other than the output's shape broadcast as
    Fluid's elementwise ops do (``axis``: where the smaller one's dims start; -1: at the
    end, as numpy aligns them)."""
    kernel: object
    reads: tuple[str, ...]
    writes: str = "Out"
    params: tuple = ()
    axis: int = -1


@dataclass(frozen=True)
class Call:
    """``writes = fn(*reads, *consts)``: ``fn`` an ``njit`` function returning one array per
    slot of ``writes`` (a tuple when there are several; a list of arrays for a duplicable
    slot, one per output, in order; a slot the op has no output for is dropped), ``consts``
    attribute values
    written into the generated source as literals (a compiled function is specialised on
    them, which is what an attribute is).

    ``arrays``: the slots that hold tensor arrays, as ``(slot, dtype, ndim)`` of their
    entries (kernels/cpu/tensor_array.py: a tuple inside compiled code). A slot named in
    both ``reads`` and ``writes`` is read as the output's value before the op (the array
    write_to_array grows; an empty one where nothing wrote it yet this run)."""
    fn: object
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    consts: tuple = ()
    arrays: tuple = ()


def takes_tensor_arrays(lowered):
    """Marks an op's ``lowered`` function as one whose forms may name slots holding tensor
    arrays (``Call.arrays``): the compiler asks it even where an operand is not a dense
    tensor, and ``info.element(slot)`` gives an array's entry dtype and rank."""
    lowered.takes_tensor_arrays = True
    return lowered


def reads_attribute_tensors(lowered):
    """Marks an op's ``lowered`` function as one that reads its run-time attribute tensors
    itself (slice's StartsTensorList: Paddle's ``x[:, t]``): the compiler asks it even
    where a tensor gives an attribute, whose value ``info.attr`` does not know."""
    lowered.reads_attribute_tensors = True
    return lowered
