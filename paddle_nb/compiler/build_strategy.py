"""``pd.BuildStrategy``: which parts of the block compiler a CompiledProgram uses.

Paddle's ``paddle.static.BuildStrategy`` chooses the graph passes a ``CompiledProgram``
applies. Here a CompiledProgram exists to compile blocks, so the defaults compile; each
field turns one part off, to see (and time) what it does:

- ``compile_blocks``: lower runs of ops into compiled segments (off: the program runs on
  ``Executor.run``'s fast path, exactly as the plain program does);
- ``fuse_elementwise``: one loop for a chain of elementwise ops (off: one loop per op,
  still inside the compiled function);
- ``compile_loops``: a recurrent op (StaticRNN) and its gradient, and a while op that
  keeps no step scopes, as loops inside the compiled function, calling the step block's
  compiled function once per step (off: the op runs its steps in Python, each step one
  call of its block's segments);
- ``compile_branches``: a conditional_block (IfElse, cond) and its gradient as an ``if``
  inside the compiled function, calling the branch's compiled function (off: the op runs
  its branch from Python, one call of its block's segments).

Paddle's own fields (``fuse_elewise_add_act_ops``, ``enable_inplace``, ...) select C++
graph passes that have no counterpart here; setting one is refused with this list, not
silently ignored.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from ..core.errors import did_you_mean


@dataclass
class BuildStrategy:
    compile_blocks: bool = True
    fuse_elementwise: bool = True
    compile_loops: bool = True
    compile_branches: bool = True

    def __setattr__(self, name, value):
        known = [f.name for f in fields(self)]
        if name not in known:
            raise AttributeError(f"BuildStrategy has no field {name!r}{did_you_mean(name, known)}"
                                 f" (its fields: {', '.join(known)}; Paddle's other fields "
                                 f"choose C++ graph passes this package does not have)")
        if not isinstance(value, bool):
            raise TypeError(f"BuildStrategy.{name} is True or False, got {value!r}")
        object.__setattr__(self, name, value)
