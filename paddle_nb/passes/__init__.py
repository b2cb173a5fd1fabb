"""Program passes: rewrites of a program into one that computes the same thing faster, as
Paddle's IR passes do before inference (``fc_fuse_pass`` and others).

A pass never changes the program it is given: ``pd.passes.apply(program)`` returns a
rewritten copy, so a learner can print, draw and step both and see what was fused. Ops
whose intermediate values something else reads (a gradient op, a fetch named in
``keep``) are left alone, so a training program is unchanged and an inference program
(``program.clone(for_test=True)``) is fused.
"""
from __future__ import annotations

from ..core import fast_path
from ..core.program import Program
from . import elewise_add_act_fuse, fc_fuse, recurrent_grad_trim, recurrent_hoist

# name -> function(program, keep) rewriting ``program`` in place; the order they run in
PASSES = {"fc_fuse": fc_fuse.run, "recurrent_hoist": recurrent_hoist.run,
          "elewise_add_act_fuse": elewise_add_act_fuse.run,
          "recurrent_grad_trim": recurrent_grad_trim.run}

# What Executor.run's fast path applies (Executor.steps and the debugger never do).
FAST_PATH = ("recurrent_hoist", "fc_fuse", "elewise_add_act_fuse", "recurrent_grad_trim")
# every pass starts from one of these: a program without them is run as it is, uncopied
STARTS = frozenset({"mul", "elementwise_add", "recurrent_grad"})


def apply(program: Program, passes=None, keep=()) -> Program:
    """A copy of ``program`` with ``passes`` (names from ``PASSES``; all of them by
    default) applied in order. ``keep``: variables (or names) that must survive, such as
    what you will fetch; a fused op's intermediate is otherwise gone from the copy."""
    if not isinstance(program, Program):
        raise TypeError(f"pd.passes.apply needs a Program, got {type(program).__name__}")
    names = list(PASSES) if passes is None else list(passes)
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise ValueError(f"unknown pass(es) {unknown}; the passes are {list(PASSES)}")
    kept = frozenset(k if isinstance(k, str) else k.name for k in keep)
    fused = program.clone()
    for name in names:
        PASSES[name](fused, kept)
    return fused


def for_fast_path(program: Program, keep=frozenset()) -> Program | None:
    """The copy of ``program`` that ``Executor.run`` runs: FAST_PATH applied, keeping the
    names in ``keep``; None when none of them changes anything."""
    if not any(op.type in STARTS for b in program.blocks for op in b.ops):
        return None
    fused = program.clone()
    if sum(PASSES[name](fused, frozenset(keep)) for name in FAST_PATH) == 0:
        return None
    return fused


fast_path.rewrite = for_fast_path
