"""What a compiled loop checks at each step: Jupyter's Interrupt, and its limits.

Kernel > Interrupt sends the kernel SIGINT. Python's C handler only sets a flag, and the
Python handler that raises KeyboardInterrupt runs when the interpreter next executes
bytecode: never, while a numba function runs (it holds the thread, and the GIL). The
interpreter's executor is a Python loop, so an interrupt lands between two ops; a block
compiled into one function (paddle_nb/compiler) would hold it back for as long as its
loops run. So each step of a compiled loop calls :func:`stop_if_interrupted`, which asks
CPython whether a signal is waiting (``PyErr_CheckSignals``: a load of a flag when none
is) and, if one is, raises :class:`Interrupted`; the segment turns that into the
KeyboardInterrupt the user pressed for, and the executor undoes the run as it does for
an interrupt between ops.

The C function is called by its symbol, not through a ctypes pointer, so the functions
calling it keep numba's disk cache.
"""
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


class Interrupted(Exception):
    """Raised by compiled code at a waiting SIGINT (numba cannot raise KeyboardInterrupt
    itself); compiler/plan.Segment re-raises it as KeyboardInterrupt."""


@intrinsic
def _signals_checked(typingctx):
    """``PyErr_CheckSignals()``: runs the Python handlers of waiting signals; -1 when one
    raised (SIGINT's raises KeyboardInterrupt), else 0."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []),
                                            "PyErr_CheckSignals")
        return builder.call(fn, [])
    return types.int32(), codegen


@njit(cache=True, fastmath=False, error_model="numpy")
def stop_if_interrupted():
    """Raise Interrupted if SIGINT (Jupyter's Interrupt) arrived since the last check."""
    if _signals_checked() != 0:
        raise Interrupted("interrupted")


class LoopLimitReached(Exception):
    """Raised by a compiled ``while`` loop that ran past a limit of ops/while_op.py: its
    steps (MAX_STEPS), or the bytes a training loop keeps for its gradient
    (MAX_KEPT_BYTES). Its argument, a constant (numba's disk cache keeps no other), says
    which: ``"<op index> steps <limit>"`` or ``"<op index> bytes"`` (the steps and bytes
    are left in the segment's report array); compiler/plan.Segment re-raises it as the
    interpreter's error for that op."""
