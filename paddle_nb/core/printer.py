"""Print a program as readable nested code (``program.to_code()``).

One line per op, ``out = op_type(X=[a], Y=[b]) {attr=value}``; an op that owns sub-blocks
is followed by them, indented, in braces, the way C nests ``{}``; each block starts with
its variable declarations (shape and dtype, ``-1`` for the batch dimension).
"""
from __future__ import annotations

from . import attrs as A
from . import dtypes, registry
from .framework_pb2 import OpDesc
from .symbol_table import describe

INDENT = "    "


def _args(vars_) -> str:
    return ", ".join(f"{v.parameter}=[{', '.join(v.arguments)}]" for v in vars_)


_DTYPE_ATTRS = frozenset({"dtype", "in_dtype", "out_dtype"})


def _attr_text(a, op_def, show_all: bool) -> str | None:
    """``name=value``, or None for attributes that only Paddle's own machinery reads:
    bookkeeping, and (unless ``show_all``) those our OpProto does not declare or marks extra."""
    if not show_all:
        if a.name in A.BOOKKEEPING_ATTRS:
            return None
        if op_def is not None:
            spec = op_def.attr(a.name)
            if spec is None or spec.extra:
                return None
            if spec.default == [] and a.type in A.LIST_TYPES and not A.read(a):
                return None          # an empty list left at its default says nothing
    if a.type == A.BLOCK:
        return f"{a.name}=block {a.block_idx}"
    if a.type == A.BLOCKS:
        return f"{a.name}=blocks {list(a.blocks_idx)}"
    value = A.read(a)
    if a.name in _DTYPE_ATTRS and isinstance(value, int) and value >= 0:
        return f"{a.name}={dtypes.name(value)}"
    return f"{a.name}={A.format_value(value)}"


def op_line(op: OpDesc, show_all_attrs: bool = False) -> str:
    outs = [v for v in op.outputs if v.arguments]
    if len(outs) == 1:
        lhs = ", ".join(outs[0].arguments)
    elif outs:
        lhs = _args(outs)
    else:
        lhs = ""
    op_def = registry.lookup(op.type) if registry.is_registered(op.type) else None
    attrs = [t for t in (_attr_text(a, op_def, show_all_attrs) for a in op.attrs) if t]
    text = f"{lhs} = " if lhs else ""
    text += f"{op.type}({_args([v for v in op.inputs if v.arguments])})"
    if attrs:
        text += " {" + ", ".join(attrs) + "}"
    return text


def _var_line(desc) -> str:
    flags = [f for f, on in (("persistable", desc.persistable and not desc.is_parameter),
                             ("param", desc.is_parameter),
                             ("stop_gradient", desc.stop_gradient and not desc.is_parameter))
             if on]
    return f"var {desc.name} : {describe(desc)}" + (f"  # {', '.join(flags)}" if flags else "")


def block_code(block, *, depth: int = 0, show_vars: bool = True,
               show_all_attrs: bool = False) -> str:
    pad = INDENT * depth
    lines = [f"{pad}{{  // block {block.idx}"
             + (f", parent {block.parent_idx}" if block.parent_idx >= 0 else "")]
    if show_vars:
        for desc in block.table.vars.values():
            lines.append(pad + INDENT + _var_line(desc))
        if block.table.vars and block.table.ops:
            lines.append("")
    program = block.program
    for op in block.ops:
        lines.append(pad + INDENT + op_line(op.desc, show_all_attrs))
        for sub in op.sub_block_indices():
            if 0 <= sub < program.num_blocks:
                lines.append(block_code(program.block(sub), depth=depth + 1,
                                        show_vars=show_vars, show_all_attrs=show_all_attrs))
    lines.append(pad + "}")
    return "\n".join(lines)


def program_code(program, **kw) -> str:
    """The global block with every sub-block nested under the op that owns it; blocks that
    no op owns (a program under construction) are printed after it."""
    owned = {i for b in program.blocks for op in b.ops for i in op.sub_block_indices()}
    parts = [block_code(program.global_block(), **kw)]
    for b in program.blocks[1:]:
        if b.idx not in owned:
            parts.append(block_code(b, **kw))
    hint = getattr(program, "empty_hint", None)
    if hint and not any(b.table.ops for b in program.blocks):
        parts.append(f"// {hint}")
    return "\n".join(parts)
