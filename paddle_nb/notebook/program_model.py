"""A program as plain data for the browser: ``program_model``, ``program_dot``, ``program_svg``.

The widgets never send Python objects to JavaScript. They send one JSON-able dict that says
everything the page draws: the block tree (which op owns which block), each block's
variables and ops, and for every op what a student clicks to see (its slots, attributes, the
OpProto documentation, the line of user code that made it or, where the program records
none, why not, and for a gradient op the forward op it differentiates). The graph view is
graphviz's DOT (``program_graph.py``: nested blocks as clusters that collapse), rendered
to SVG by ``dot``.

In a notebook the model also carries the user's names (``user_names``: program name ->
the notebook name a ``%%paddle`` cell bound to it, see ``interactive/user_names.py``), so
the page can say ``x`` where the program says ``minibatch_0``; without them it shows
program names only.
"""
from __future__ import annotations

import shutil

from ..core import registry
from ..core.block import block_owners, block_paths
from ..core.grad_maker import EMPTY_VAR, GRAD_SUFFIX, forward_name
from ..core.printer import _attr_text, op_line
from ..core.symbol_table import describe, tensor_desc
from ..core import dtypes
from ..interactive.user_names import user_name
# the graph module below this one draws ops by these ids and roles too (the page's ids)
from .program_graph import graph_dot, graph_svg, op_id, role_name

# Ops backward inserts to seed, zero or add up gradients: they differentiate no op. (The
# gradient of a forward ``sum`` is made of ``scale`` ops, so a backward ``sum`` is always
# the adding up of a gradient written twice.)


def _plumbing(op_type: str) -> bool:
    """Seeds, zeros and sums of gradients (OpDef.grad_plumbing) differentiate no op."""
    return registry.is_registered(op_type) and registry.lookup(op_type).grad_plumbing


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
    out = {"name": desc.name, "user_name": user_name(desc.name, user_names),
           "shape": list(t.dims) if t is not None else None,
           "dtype": dtypes.name(t.data_type) if t is not None else None,
           "kind": dtypes.KIND_NAMES.get(desc.type.type, "other"),
           "text": describe(desc),
           "persistable": bool(desc.persistable),
           "is_parameter": bool(desc.is_parameter),
           "stop_gradient": bool(desc.stop_gradient)}
    # A program translated from Paddle 3's PIR keeps each value's id there (``%4`` in
    # Paddle's printout) as the VarDesc attribute ``pir_id``: the page shows it by the name.
    pir_id = next((a.i for a in desc.attrs if a.name == "pir_id"), None)
    if pir_id is not None:
        out["pir_id"] = pir_id
    return out


def _proto_doc(op_def) -> str:
    """The OpProto's documentation below its first paragraph (which is ``comment``: the
    page shows that once, at the top): slots, attributes, kernels, gradient."""
    doc, head = op_def.doc(), op_def.comment or op_def.type
    return doc[len(head):].lstrip("\n") if doc.startswith(head) else doc


def _not_recorded(source: str | None) -> str:
    """What the page says for an op without ``op_callstack`` (the user's line): every op
    paddle_nb builds records one, so such an op came from bytes made elsewhere."""
    if source:
        return f"not recorded: loaded from {source}, which records no source line for this op"
    return "not recorded: this op carries no op_callstack (the line that built it)"


def _op_model(block, index: int, op, links, source: str | None = None) -> dict:
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
            "doc": _proto_doc(op_def) if op_def is not None else "",
            "comment": op_def.comment if op_def is not None else "(op type not registered)",
            "created_at": op.created_at,
            "created_note": None if op.created_at else _not_recorded(source),
            "role": role_name(op),
            "sub_blocks": op.sub_block_indices(),
            "forward_op": {"block": fwd[0], "index": fwd[1], "id": op_id(*fwd)} if fwd else None}


def program_model(program, user_names: dict | None = None, source: str | None = None) -> dict:
    """Everything the ProgramView draws, as JSON-able data (see the module doc).

    ``user_names`` (program name -> the user's name) gives each variable its ``user_name``
    and the model a ``user_names`` map of every named variable, gradients included, which
    the page uses for the names inside op lines and slot tables. ``source`` says where the
    program came from (``"cnn_infer.pdmodel"``), for ops that record no creating line."""
    links = forward_links(program)
    owners = block_owners(program)          # one pass: b.owner_op per block is quadratic
    paths = block_paths(program, owners)
    blocks = []
    for b in program.blocks:
        owner = owners.get(b.idx)
        blocks.append({
            "idx": b.idx, "parent_idx": b.parent_idx, "forward_block_idx": b.forward_block_idx,
            "path": paths[b.idx],
            "owner": {"block": b.parent_idx, "index": owner[0], "type": owner[1].type,
                      "id": op_id(b.parent_idx, owner[0])} if owner else None,
            "vars": [_var_model(d, user_names) for d in b.table.vars.values()],
            "ops": [_op_model(b, i, op, links, source) for i, op in enumerate(b.ops)]})
    named = {v["name"]: v["user_name"] for b in blocks for v in b["vars"] if v["user_name"]}
    return {"blocks": blocks, "num_blocks": len(blocks),
            "num_ops": sum(len(b["ops"]) for b in blocks), "user_names": named,
            "source": source}


# --- the dataflow graph ---------------------------------------------------------------------
def program_dot(program, user_names: dict | None = None, collapsed=None,
                grouped: bool | None = None) -> str:
    """The dataflow graph in graphviz's DOT (``program_graph.graph_dot``): ops are boxes,
    variables ellipses (drawn in the block that declares them, labelled with the user's
    name first where there is one), each sub-block a cluster inside the cluster of the op
    that runs it, with a dashed "runs" edge from that op. ``collapsed`` lists the blocks
    (ints) and op groups (names) drawn as one node; None: the default (nothing for a
    program of at most ``GROUP_OVER`` ops, else every sub-block and group).

    Nodes are as small as their labels (graphviz's default minimum is 0.75 x 0.5 inches,
    which made a ten-op program wider than the page) and ranks sit close together."""
    return graph_dot(program, user_names, collapsed, grouped)


def program_svg(program, user_names: dict | None = None, collapsed=None) -> str | None:
    """The graph as an inline ``<svg>`` (no XML prolog), or None where graphviz's ``dot``
    is not installed or fails (the view then shows :func:`program_graph_text`). A graph
    too large to draw, or one ``dot`` takes too long over, is an ``<svg>`` that says so
    (``program_graph.graph_svg``: the bounds). ``collapsed``: as for :func:`program_dot`."""
    executable = shutil.which("dot")
    if executable is None:
        return None
    return graph_svg(program, executable, user_names, collapsed)


def program_graph_text(program) -> str:
    """The dataflow graph as text: each op with the variables it reads and writes."""
    lines = []
    for b, path in zip(program.blocks, block_paths(program)):
        lines.append(path)
        for i, op in enumerate(b.ops):
            ins = ", ".join(op.input_arg_names) or "-"
            outs = ", ".join(op.output_arg_names) or "-"
            subs = "".join(f"  (runs block {s})" for s in op.sub_block_indices())
            lines.append(f"  op {i:>2} {op.type}: {ins} -> {outs}{subs}")
    return "\n".join(lines)
