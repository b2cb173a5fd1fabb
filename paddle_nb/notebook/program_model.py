"""A program as plain data for the browser: ``program_model``, ``program_dot``, ``program_svg``.

The widgets never send Python objects to JavaScript. They send one JSON-able dict that says
everything the page draws: the block tree (which op owns which block), each block's
variables and ops, and for every op what a student clicks to see (its slots, attributes, the
OpProto documentation, the line of user code that made it, and for a gradient op the forward
op it differentiates). The graph view is graphviz's DOT, rendered to SVG by ``dot``.

In a notebook the model also carries the user's names (``user_names``: program name ->
the notebook name a ``%%paddle`` cell bound to it, see ``user_names.py``), so the page can
say ``x`` where the program says ``minibatch_0``; without them it shows program names only.
"""
from __future__ import annotations

import shutil

from ..core import registry
from ..core.backward import OP_ROLE_BACKWARD, OP_ROLE_LOSS, OP_ROLE_OPTIMIZE, op_role
from ..core.grad_maker import EMPTY_VAR, GRAD_SUFFIX, forward_name
from ..core.printer import _attr_text, op_line
from ..core.symbol_table import describe, tensor_desc
from ..core import dtypes
from .user_names import shown_name, user_name

# Ops backward inserts to seed, zero or add up gradients: they differentiate no op. (The
# gradient of a forward ``sum`` is made of ``scale`` ops, so a backward ``sum`` is always
# the adding up of a gradient written twice.)


def _plumbing(op_type: str) -> bool:
    """Seeds, zeros and sums of gradients (OpDef.grad_plumbing) differentiate no op."""
    return registry.is_registered(op_type) and registry.lookup(op_type).grad_plumbing


def op_id(block_idx: int, op_index: int) -> str:
    """The id the page uses for an op (``data-op="b0:3"``)."""
    return f"b{block_idx}:{op_index}"


def role_name(op) -> str:
    role = op_role(op)
    if role & OP_ROLE_OPTIMIZE:
        return "optimize"
    if role & (OP_ROLE_BACKWARD | OP_ROLE_LOSS):
        return "backward"
    return "forward"


# --- gradient op -> forward op -----------------------------------------------------------
def _grad_names(names) -> set[str]:
    return {forward_name(n) for n in names if GRAD_SUFFIX in n and n != EMPTY_VAR}


def forward_links(program) -> dict[tuple[int, int], tuple[int, int]]:
    """``{(block, grad op index): (block, forward op index)}`` for every gradient op.

    Backward appends grad ops in the reverse order of the forward ops, so walking the grad
    ops in order and giving each the *latest* unclaimed forward op that wrote a gradient it
    reads and read a gradient it writes pairs them up even when a variable is overwritten
    (a loop counter): the first ``increment_grad`` belongs to the last ``increment``. A
    gradient block (``forward_block_idx`` >= 0) differentiates the ops of its forward block.
    """
    links = {}
    claimed: set[tuple[int, int]] = set()
    for block in program.blocks:
        fwd_block = program.block(block.forward_block_idx) if block.forward_block_idx >= 0 \
            else block
        fwd_ops = [(i, op) for i, op in enumerate(fwd_block.ops) if role_name(op) == "forward"]
        for j, op in enumerate(block.ops):
            if role_name(op) != "backward":
                continue
            reads, writes = _grad_names(op.input_arg_names), _grad_names(op.output_arg_names)
            if not reads or not writes or _plumbing(op.type):
                continue      # seeds, zeros and sums of gradients differentiate no op
            want_type = op.type[:-len("_grad")] if op.type.endswith("_grad") else None
            before = [(i, f) for i, f in fwd_ops if fwd_block is not block or i < j]
            matches = [(i, f) for i, f in reversed(before)
                       if (fwd_block.idx, i) not in claimed
                       and reads & set(f.output_arg_names) and writes & set(f.input_arg_names)]
            typed = [m for m in matches if m[1].type == want_type]
            pick = (typed or matches or [None])[0]
            if pick is not None:
                links[(block.idx, j)] = (fwd_block.idx, pick[0])
                claimed.add((fwd_block.idx, pick[0]))
    return links


# --- the model -------------------------------------------------------------------------------
def _var_model(desc, user_names) -> dict:
    t = tensor_desc(desc)
    return {"name": desc.name, "user_name": user_name(desc.name, user_names),
            "shape": list(t.dims) if t is not None else None,
            "dtype": dtypes.name(t.data_type) if t is not None else None,
            "kind": dtypes.KIND_NAMES.get(desc.type.type, "other"),
            "text": describe(desc),
            "persistable": bool(desc.persistable),
            "is_parameter": bool(desc.is_parameter),
            "stop_gradient": bool(desc.stop_gradient)}


def _op_model(block, index: int, op, links) -> dict:
    op_def = registry.lookup(op.type) if registry.is_registered(op.type) else None
    attrs = {}
    for a in op.desc.attrs:
        text = _attr_text(a, op_def, False)   # the printer's choice: what to_code() shows
        if text:
            attrs[a.name] = text.split("=", 1)[1]
    fwd = links.get((block.idx, index))
    return {"id": op_id(block.idx, index), "block": block.idx, "index": index,
            "type": op.type, "text": op_line(op.desc),
            "inputs": op.inputs, "outputs": op.outputs, "attrs": attrs,
            "doc": op_def.doc() if op_def is not None else "",
            "comment": op_def.comment if op_def is not None else "(op type not registered)",
            "created_at": op.created_at, "role": role_name(op),
            "sub_blocks": op.sub_block_indices(),
            "forward_op": {"block": fwd[0], "index": fwd[1], "id": op_id(*fwd)} if fwd else None}


def program_model(program, user_names: dict | None = None) -> dict:
    """Everything the ProgramView draws, as JSON-able data (see the module doc).

    ``user_names`` (program name -> the user's name) gives each variable its ``user_name``
    and the model a ``user_names`` map of every named variable, gradients included, which
    the page uses for the names inside op lines and slot tables."""
    links = forward_links(program)
    blocks = []
    for b in program.blocks:
        owner = b.owner_op
        blocks.append({
            "idx": b.idx, "parent_idx": b.parent_idx, "forward_block_idx": b.forward_block_idx,
            "path": b.path,
            "owner": {"block": b.parent_idx, "index": owner[0], "type": owner[1].type,
                      "id": op_id(b.parent_idx, owner[0])} if owner else None,
            "vars": [_var_model(d, user_names) for d in b.table.vars.values()],
            "ops": [_op_model(b, i, op, links) for i, op in enumerate(b.ops)]})
    named = {v["name"]: v["user_name"] for b in blocks for v in b["vars"] if v["user_name"]}
    return {"blocks": blocks, "num_blocks": len(blocks),
            "num_ops": sum(len(b["ops"]) for b in blocks), "user_names": named}


# --- the dataflow graph ---------------------------------------------------------------------
def _q(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _esc(text: str) -> str:
    """Quotes escaped, backslashes kept: a label's ``\\n`` is graphviz's line break."""
    return text.replace('"', '\\"')


def program_dot(program, user_names: dict | None = None) -> str:
    """The dataflow graph in graphviz's DOT: ops are boxes, variables ellipses (drawn in the
    block that declares them, labelled with the user's name first where there is one), each
    sub-block a cluster inside its parent's cluster, and a dashed edge from an op to the
    first op of each block it runs.

    Nodes are as small as their labels (graphviz's default minimum is 0.75 x 0.5 inches,
    which made a ten-op program wider than the page) and ranks sit close together."""
    lines = ["digraph program {",
             "  rankdir=TB; compound=true; nodesep=0.15; ranksep=0.25;",
             '  graph [fontname="monospace", fontsize=9, margin=0];',
             '  node [fontname="monospace", fontsize=9, width=0, height=0, '
             'margin="0.06,0.02"];',
             '  edge [color="#777777", arrowsize=0.5, fontname="monospace", fontsize=8];']
    kids: dict[int, list[int]] = {}
    for b in program.blocks[1:]:
        kids.setdefault(b.parent_idx, []).append(b.idx)
    edges = []
    var_nodes: dict[int, list[str]] = {}     # declaring block -> node lines
    seen: set[str] = set()

    def var_node(block, name):
        owner = block.table.find_var_owner(name)
        if owner is None and block.forward_block_idx >= 0:
            return var_node(program.block(block.forward_block_idx), name)
        if owner is None:
            return None
        node = f"v{owner.idx}_{name}"
        if node not in seen:
            seen.add(node)
            label = f"{shown_name(name, user_names)}\\n{describe(owner.vars[name])}"
            style = ', style=filled, fillcolor="#fdf3d8"' if owner.vars[name].persistable else ""
            var_nodes.setdefault(owner.idx, []).append(
                f'{_q(node)} [shape=ellipse, label="{_esc(label)}"{style}];')
        return node

    op_nodes: dict[int, list[str]] = {}
    for b in program.blocks:
        for i, op in enumerate(b.ops):
            node = f"op_b{b.idx}_{i}"
            color = {"forward": "#e8f0fe", "backward": "#fde8e8", "optimize": "#e6f4ea"}[
                role_name(op)]
            op_nodes.setdefault(b.idx, []).append(
                f'{_q(node)} [shape=box, style="rounded,filled", fillcolor="{color}", '
                f'label={_q(f"{i}: {op.type}")}, id={_q(op_id(b.idx, i))}];')
            for name in op.input_arg_names:
                v = var_node(b, name) if name != EMPTY_VAR else None
                if v:
                    edges.append(f"{_q(v)} -> {_q(node)};")
            for name in op.output_arg_names:
                v = var_node(b, name) if name != EMPTY_VAR else None
                if v:
                    edges.append(f"{_q(node)} -> {_q(v)};")
            for sub in op.sub_block_indices():
                if 0 <= sub < program.num_blocks and program.block(sub).ops:
                    edges.append(f'{_q(node)} -> {_q(f"op_b{sub}_0")} [style=dashed, '
                                 f'lhead={_q(f"cluster_b{sub}")}, label="runs"];')

    def cluster(idx, depth):
        pad = "  " * depth
        out = [f"{pad}subgraph cluster_b{idx} {{",
               f'{pad}  label={_q(program.block(idx).path)}; style=rounded; color="#bbbbbb";']
        out += [pad + "  " + n for n in op_nodes.get(idx, []) + var_nodes.get(idx, [])]
        for k in kids.get(idx, []):
            out += cluster(k, depth + 1)
        return out + [pad + "}"]

    lines += cluster(0, 1)
    lines += ["  " + e for e in edges]
    lines.append("}")
    return "\n".join(lines)


def program_svg(program, user_names: dict | None = None) -> str | None:
    """The graph as an inline ``<svg>`` (no XML prolog), or None where graphviz's ``dot``
    is not installed (the view then shows :func:`program_graph_text`)."""
    if shutil.which("dot") is None:
        return None
    try:
        import graphviz   # noqa: PLC0415 (optional: only the graph tab needs it)
        dot = program_dot(program, user_names)
        svg = graphviz.Source(dot).pipe(format="svg").decode("utf-8")
    except Exception:     # noqa: BLE001 (no package, no executable, a dot crash: fall back)
        return None
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else None


def program_graph_text(program) -> str:
    """The dataflow graph as text: each op with the variables it reads and writes."""
    lines = []
    for b in program.blocks:
        lines.append(b.path)
        for i, op in enumerate(b.ops):
            ins = ", ".join(op.input_arg_names) or "-"
            outs = ", ".join(op.output_arg_names) or "-"
            subs = "".join(f"  (runs block {s})" for s in op.sub_block_indices())
            lines.append(f"  op {i:>2} {op.type}: {ins} -> {outs}{subs}")
    return "\n".join(lines)
