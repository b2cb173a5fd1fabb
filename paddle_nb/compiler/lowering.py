"""What the compiler knows of an op when it asks for the op's lowered form.

A block is compiled from one run of it in the interpreter: that run's values give every
variable of the block a dtype, a rank and a shape (all fixed for one signature of what
enters the block: core/fast_path.entry_signature). An op's ``lowered(info)``
(kernels/lowered.py) reads them through :class:`OpInfo`, and the compiler checks its answer:
an Elementwise form whose operands would be cast by its ufunc (an int32 X of a float
kernel) is not lowered, so that the compiled code computes in the dtypes the interpreter
computes in.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.grad_maker import EMPTY_VAR
from ..kernels.lowered import Call, Elementwise


class Learned:
    """One variable as the interpreter's run left it: an array's shape and dtype (None for
    anything else: a tensor array, a SelectedRows, a scope list, nothing); for a tensor
    array whose entries share one dtype and shape, ``element``: (dtype, rank)."""
    __slots__ = ("shape", "dtype", "nothing", "element")

    def __init__(self, value):
        self.nothing = value is None             # never written (an output no kernel sets)
        self.element = None
        if value.__class__ is np.ndarray:
            self.shape, self.dtype = value.shape, value.dtype
        else:
            self.shape = self.dtype = None
            if value.__class__ is list:
                self.element = _element(value)

    @classmethod
    def of(cls, shape: tuple, dtype) -> "Learned":
        """What a run that made an array of ``shape`` and ``dtype`` would have left."""
        made = cls(None)
        made.shape, made.dtype, made.nothing = tuple(shape), np.dtype(dtype), False
        return made

    @property
    def is_array(self) -> bool:
        return self.dtype is not None


def _element(values: list):
    """(dtype, rank) of a tensor array's entries, if it has some and they agree in dtype
    and shape (what kernels/cpu/tensor_array.py's compiled arrays hold), else None."""
    entries = [v for v in values if v is not None]
    if not entries or any(v.__class__ is not np.ndarray or v.shape != entries[0].shape
                          or v.dtype != entries[0].dtype for v in entries):
        return None
    return entries[0].dtype, entries[0].ndim


class OpInfo:
    """An op's attributes and its operands' dtypes, ranks and shapes, for ``lowered``."""

    def __init__(self, pop, learned: list[Learned]):
        self.pop = pop
        self._learned = learned

    def attr(self, name: str):
        return self.pop.attrs[name]

    def has_input(self, slot: str) -> bool:
        return bool(self.pop.inputs.get(slot))

    def has_output(self, slot: str) -> bool:
        ix = self.pop.out_ix.get(slot)
        return bool(ix) and ix[0] >= 0

    def _get(self, slot: str, i: int) -> Learned:
        ix = self.pop.in_ix.get(slot) or self.pop.out_ix.get(slot)
        return self._learned[ix[i]]

    def dtype(self, slot: str, i: int = 0) -> np.dtype:
        return self._get(slot, i).dtype

    def shape(self, slot: str, i: int = 0) -> tuple:
        return self._get(slot, i).shape

    def ndim(self, slot: str, i: int = 0) -> int:
        return len(self._get(slot, i).shape)

    def element(self, slot: str, i: int = 0):
        """(dtype, rank) of the entries of the tensor array in ``slot``, or None."""
        return self._get(slot, i).element


def lowered_form(pop, learned: list[Learned]):
    """(the op's lowered form for these operands, "") or (None, why not): an Elementwise,
    or a tuple of Calls (one Call is given as a tuple of one)."""
    lower = pop.op_def.lowered
    if lower is None:
        return None, "no lowered form"
    if pop.tensor_attrs is not None and not getattr(lower, "reads_attribute_tensors", False):
        return None, "an attribute given by a tensor"
    # a dispensable slot may hold nothing (batch_norm's ReserveSpace, which the CPU kernel
    # never writes) if the form neither reads nor writes it (checked below)
    # (a tensor array, or nothing yet, may be what an array op's form names in ``arrays``)
    arrays_ok = getattr(lower, "takes_tensor_arrays", False)
    absent = {}
    for names, numbers, declared in ((pop.inputs, pop.in_ix, pop.op_def.input),
                                     (pop.outputs, pop.out_ix, pop.op_def.output)):
        for slot, ix in numbers.items():
            for name, i in zip(names[slot], ix):
                if name != EMPTY_VAR and i >= 0 and not learned[i].is_array:
                    absent[slot] = f"{slot} ({name!r}) is not a dense tensor"
                    if not (learned[i].nothing and
                            getattr(declared(slot), "dispensable", False)) and not (
                            arrays_ok and (learned[i].nothing or learned[i].element)):
                        return None, absent[slot]
    form = lower(OpInfo(pop, learned))
    if form is None:
        return None, "no lowered form for these dtypes or attributes"
    if isinstance(form, str):            # the form's own reason to stay interpreted
        return None, form
    for slot in _slots_used(form) & absent.keys() - _array_slots(form):
        return None, absent[slot]
    if isinstance(form, Elementwise) and not _computes_in_place(form, pop, learned):
        return None, "its kernel would cast these dtypes"
    if isinstance(form, Elementwise) and \
            math.prod(learned[pop.out_ix[form.writes][0]].shape) >= form.kernel.cpu.min_parallel:
        # the interpreter runs its prange twin across the cores from this size; a compiled
        # loop is serial (it cannot ask whether the cores are free: kernels/cpu/threads.py)
        return None, "large: the interpreter splits it across the cores"
    if isinstance(form, Call):
        form = (form,)
    if not isinstance(form, Elementwise) and not (
            isinstance(form, tuple) and form and all(isinstance(c, Call) for c in form)):
        raise TypeError(f"{pop.op.type}: lowered() gave {form!r}; expected an Elementwise, "
                        f"a Call, a tuple of Calls or None")
    return form, ""


def _slots_used(form) -> set[str]:
    """The slots a form reads or writes."""
    if isinstance(form, Elementwise):
        return {form.writes, *form.reads}
    calls = form if isinstance(form, tuple) else (form,)
    return {s for c in calls if isinstance(c, Call) for s in (*c.reads, *c.writes)}


def _array_slots(form) -> set[str]:
    """The slots a form's Calls say hold tensor arrays."""
    calls = form if isinstance(form, tuple) else (form,)
    return {a[0] for c in calls if isinstance(c, Call) for a in c.arrays}


def _computes_in_place(form: Elementwise, pop, learned) -> bool:
    """Does the kernel's ufunc have a loop for exactly these operand dtypes, giving the
    output's dtype (no casting, which the compiled loop would not repeat)?"""
    dtypes = tuple(learned[pop.in_ix[s][0]].dtype for s in form.reads)
    dtypes += tuple(np.asarray(p).dtype for p in form.params)
    out = learned[pop.out_ix[form.writes][0]].dtype
    try:
        resolved = form.kernel.cpu.ufunc.resolve_dtypes(dtypes + (None,))
    except TypeError:                        # no loop for them
        return False
    return resolved[:-1] == dtypes and resolved[-1] == out
