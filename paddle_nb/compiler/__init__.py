"""The block compiler: runs of a block's ops lowered into one numba function each.

``pd.CompiledProgram(program, build_strategy=pd.BuildStrategy())`` (compiled_program.py)
is what a user hands ``Executor.run``. Inside: lowering.py (what an op's lowered form is
told of its operands), plan.py (a block cut into compiled segments and interpreted ops),
codegen.py (a segment's Python source, elementwise chains fused into one loop),
control flow inside a segment (sub_blocks.py: a sub-block as one compiled function;
recurrent_loop.py, while_loop.py: loops; branch.py: conditional blocks), disk_cache.py
(segments compiled once, on disk, for every later process).
"""
from .build_strategy import BuildStrategy
from .compiled_program import CompiledProgram

__all__ = ["BuildStrategy", "CompiledProgram"]
