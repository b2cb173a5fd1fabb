"""The dataflow graph of a program in graphviz's DOT, with nested blocks that collapse.

Ops are boxes, variables ellipses. Each block an op runs (``conditional_block``, ``while``,
``recurrent``, any op with a BLOCK / BLOCKS attribute) is a cluster drawn inside the cluster
of the block that holds its op, to any depth, with a dashed "runs" edge from the op to it;
a variable is drawn in the block that declares it, so the edges that cross a cluster's
border are what the sub-block reads from and writes to the blocks around it.

**Collapsing.** ``collapsed`` lists what is drawn as one node: block indices (ints: the
op that runs the block becomes one box, ``3: while (block 2: 14 ops)``) and group names
(strings, see below). An edge into or out of something hidden goes to the node that
hides it; a variable that only connects collapsed nodes is not drawn, and its writer's
node points straight at its readers' (only forward in op order: the optimizer writing a
parameter the next run's forward ops read draws no edge back up).

**Large programs.** A program with more than ``GROUP_OVER`` ops has the ops of its
global block put into *groups*: runs of consecutive ops with the same name scope (the
``op_namescope`` attribute Fluid writes, ``/linear_1/``; its first part), or where there is
none (programs built here; PaddlePaddle 3 writes ``/`` throughout), the same layer (the
prefix of the parameter it reads, else of its first output: ``fc_3`` of ``fc_3.w_0`` or
``fc_3.tmp_1``); every backward op is one group, ``backward``, and every optimizer op one,
``optimize``. A run of one op is no group, but ``LOOSE_RUN`` (3) or more such ops in a row
(the reshapes, transposes and softmax of an attention between its linear layers) are one,
``ops 8-18``. By default (``default_collapsed``) such a program starts with every group and
every sub-block collapsed, so a 240-op model of 30 fc layers is a chain of some 35 boxes.

In the SVG, an op's node has ``id="b{block}:{index}"`` (:func:`op_id`), a variable's
``id="var:b{block}:{name}"`` (the block declaring it), a collapsed group
``id="grp:{name}"``, a collapsed block no op runs ``id="blk:{idx}"``; the cluster of an
expanded block or group ``id="cluster_blk:{idx}"`` / ``id="cluster_grp:{name}"``.
:func:`collapsible` lists them for the page (which node or cluster toggles which key).
"""
from __future__ import annotations

import subprocess
from collections import deque
from dataclasses import dataclass, field
from html import escape

from ..core.backward import OP_ROLE_BACKWARD, OP_ROLE_LOSS, OP_ROLE_OPTIMIZE, op_role
from ..core.grad_maker import EMPTY_VAR, forward_name
from ..core.symbol_table import describe
from ..interactive.user_names import shown_name

GROUP_OVER = 60     # a program with more ops is drawn with its global block's ops grouped

ROLE_COLORS = {"forward": "#e8f0fe", "backward": "#fde8e8", "optimize": "#e6f4ea"}


def op_id(block_idx: int, op_index: int) -> str:
    """The id the page uses for an op (``data-op="b0:3"``, the SVG node's ``id``)."""
    return f"b{block_idx}:{op_index}"


def role_name(op) -> str:
    """``forward``, ``backward`` or ``optimize``: what the op's role says (its colour)."""
    role = op_role(op)
    if role & OP_ROLE_OPTIMIZE:
        return "optimize"
    if role & (OP_ROLE_BACKWARD | OP_ROLE_LOSS):
        return "backward"
    return "forward"


# --- the structure: which op runs which block, and the groups of the global block ----------
@dataclass
class Group:
    key: str            # the name the ``collapsed`` list uses ("fc_3", "backward", ...)
    ops: list[int]      # indices in the global block, consecutive
    role: str


@dataclass
class Structure:
    owner: dict[int, tuple[int, int]] = field(default_factory=dict)   # block -> running op
    roots: list[int] = field(default_factory=list)   # block 0 and blocks no op runs
    groups: list[Group] = field(default_factory=list)
    group_of: dict[int, str] = field(default_factory=dict)   # global op index -> group key
    # Looked up once, so that every question below is linear in the program: ``Block.ops``
    # makes a new list of views at each call, and scanning ``owner`` for a block's kids
    # once per block made a program of 2,000 sub-blocks take 4 million steps.
    ops: list[list] = field(default_factory=list)            # block -> its ops (views)
    runs: dict[tuple[int, int], list[int]] = field(default_factory=dict)   # op -> blocks
    group_by_key: dict[str, Group] = field(default_factory=dict)

    def blocks(self) -> list[int]:
        """Every block drawn, parents before children."""
        roots = set(self.roots)
        return self.roots + [b for b in self.owner if b not in roots]

    def kids(self, idx: int) -> list[int]:
        """The blocks the ops of block ``idx`` run (claimed by them), in op order."""
        return [k for i in range(len(self.ops[idx])) for k in self.runs.get((idx, i), ())]


def structure(program, grouped: bool | None = None) -> Structure:
    """Which op runs which block (each block claimed once, from block 0 down, so a hostile
    program whose blocks own each other draws as a tree), and the global block's groups
    (``grouped`` None: when the program has more than GROUP_OVER ops)."""
    s = Structure(ops=[b.ops for b in program.blocks])
    n = program.num_blocks
    todo, seen = deque([0]), {0}
    while todo:
        b = todo.popleft()
        for i, op in enumerate(s.ops[b]):
            for sub in op.sub_block_indices():
                if 0 < sub < n and sub not in seen:
                    seen.add(sub)
                    s.owner[sub] = (b, i)
                    s.runs.setdefault((b, i), []).append(sub)
                    todo.append(sub)
    s.roots = [0] + [b for b in range(1, n) if b not in seen]
    if grouped is None:
        grouped = sum(len(ops) for ops in s.ops) > GROUP_OVER
    if grouped:
        s.groups = _groups(s.ops[0])
        s.group_of = {i: g.key for g in s.groups for i in g.ops}
        s.group_by_key = {g.key: g for g in s.groups}
    return s


def _namescope(op) -> str | None:
    for a in op.desc.attrs:
        if a.name == "op_namescope":
            first = a.s.strip("/").split("/")[0]
            return first or None
    return None


def group_key(op) -> str:
    """The group an op of the global block falls in (see the module doc)."""
    role = role_name(op)
    if role != "forward":
        return role
    scope = _namescope(op)
    if scope:
        return scope
    params = [n for n in op.input_arg_names if _is_param(op, n)]
    if params:
        return params[0].split(".")[0]
    for name in op.output_arg_names:
        if name != EMPTY_VAR:
            return forward_name(name).split(".")[0]
    return op.type


def _is_param(op, name: str) -> bool:
    desc = op.block.table.find_var(name)
    return bool(desc is not None and desc.is_parameter)


LOOSE_RUN = 3     # this many ops in a row that share no key with a neighbour: one group


def _groups(global_ops: list) -> list[Group]:
    runs: list[tuple[str, list[int]]] = []
    for i, op in enumerate(global_ops):
        key = group_key(op)
        if runs and runs[-1][0] == key:
            runs[-1][1].append(i)
        else:
            runs.append((key, [i]))
    # loose ops (a reshape, a transpose, a softmax between layers: each its own key) are
    # grouped by runs, "ops 8-18", where LOOSE_RUN or more come in a row
    merged: list[tuple[str, list[int]]] = []
    loose: list[tuple[str, list[int]]] = []
    for run in [*runs, ("", [])]:
        if len(run[1]) == 1:
            loose.append(run)
            continue
        if len(loose) >= LOOSE_RUN:
            ops = [i for _, r in loose for i in r]
            merged.append((f"ops {ops[0]}-{ops[-1]}", ops))
        else:
            merged += loose
        loose = []
        if run[1]:
            merged.append(run)
    runs = merged
    out, used = [], {}
    for key, ops in runs:
        if len(ops) < 2:
            continue
        used[key] = used.get(key, 0) + 1
        name = key if used[key] == 1 else f"{key}~{used[key]}"
        out.append(Group(name, ops, role_name(global_ops[ops[0]])))
    return out


def default_collapsed(program) -> list:
    """What a view starts with collapsed: nothing for a program of at most GROUP_OVER ops;
    for a bigger one, every group and every sub-block."""
    s = structure(program)
    if not s.groups and sum(len(b.ops) for b in program.blocks) <= GROUP_OVER:
        return []
    return [b for b in s.blocks() if b != 0] + [g.key for g in s.groups]


def _count_ops(program, s: Structure, idx: int) -> int:
    """Ops in block ``idx`` and in the blocks its ops run."""
    return len(s.ops[idx]) + sum(_count_ops(program, s, k) for k in s.kids(idx))


def _op_ids(program, s: Structure, idx: int) -> list[str]:
    """The ids of the ops in block ``idx`` and in the blocks its ops run."""
    return [op_id(idx, i) for i in range(len(s.ops[idx]))] + \
        [o for k in s.kids(idx) for o in _op_ids(program, s, k)]


def _block_text(program, s: Structure, idx: int) -> str:
    n = _count_ops(program, s, idx)
    return f"block {idx}: {n} op" + ("" if n == 1 else "s")


def collapsible(program, collapsed=None, grouped: bool | None = None) -> list[dict]:
    """What the page can collapse and expand: for each sub-block and group, its ``key``
    (what goes in ``collapsed``), a ``label``, whether it is ``collapsed`` now, the SVG id
    of the ``node`` that stands for it collapsed and of the ``cluster`` drawn for it
    expanded, and the ids of the ``ops`` it hides when collapsed (so the page can mark the
    node that stands for the debugger's current op). (A block's node is the op that runs
    it.)"""
    s = structure(program, grouped)
    shut = set(default_collapsed(program) if collapsed is None else collapsed)
    out = []
    for b in s.blocks():
        if b == 0:
            continue
        owner = s.owner.get(b)
        what = s.ops[owner[0]][owner[1]].type if owner else "(no op runs it)"
        out.append({"key": b, "label": f"{what} ({_block_text(program, s, b)})",
                    "collapsed": b in shut,
                    "node": op_id(*owner) if owner else f"blk:{b}",
                    "cluster": f"cluster_blk:{b}", "ops": _op_ids(program, s, b)})
    for g in s.groups:
        hidden = [o for i in g.ops for o in [op_id(0, i)] +
                  [x for b in s.runs.get((0, i), ()) for x in _op_ids(program, s, b)]]
        out.append({"key": g.key, "label": f"{g.key} ({len(g.ops)} ops)",
                    "collapsed": g.key in shut, "node": f"grp:{g.key}",
                    "cluster": f"cluster_grp:{g.key}", "ops": hidden})
    return out


# --- the drawing ------------------------------------------------------------------------------
def _q(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _esc(text: str) -> str:
    """Quotes escaped, backslashes kept: a label's ``\\n`` is graphviz's line break."""
    return text.replace('"', '\\"')


def graph_dot(program, user_names: dict | None = None, collapsed=None,
              grouped: bool | None = None) -> str:
    """The DOT text (see the module doc); ``collapsed`` None: :func:`default_collapsed`."""
    return _graph(program, user_names, collapsed, grouped, max_edges=None).dot


@dataclass
class _Drawing:
    dot: str
    nodes: int
    edges: int


class GraphTooLarge(Exception):
    """More edges than the drawing may have: found before all of them were made."""

    def __init__(self, nodes: int, edges: int):
        super().__init__(f"{nodes} nodes, more than {edges} edges")
        self.nodes, self.edges = nodes, edges


def _graph(program, user_names, collapsed, grouped, max_edges: int | None) -> _Drawing:
    """The DOT text and how many nodes and edges it draws; past ``max_edges`` edges,
    :class:`GraphTooLarge` as soon as that is known (before the rest is made)."""
    s = structure(program, grouped)
    shut = set(default_collapsed(program) if collapsed is None else collapsed)
    root_rank = {r: k for k, r in enumerate(s.roots)}
    group_rank = {g.key: k for k, g in enumerate(s.groups)}
    block_text: dict[int, str] = {}

    def text_of(b: int) -> str:      # "block 3: 14 ops", once per block
        if b not in block_text:
            block_text[b] = _block_text(program, s, b)
        return block_text[b]

    # Every item has a container: ("op", b, i) -> its block or group; ("grp", key) -> block
    # 0; ("blk", b) -> the container of the op that runs it (None for a root block);
    # ("var", b, name) -> its block, or the group every op touching it is in.
    def op_parent(b, i):
        if b == 0 and i in s.group_of:
            return ("grp", s.group_of[i])
        return ("blk", b)

    def parent(item):
        kind = item[0]
        if kind == "op":
            return op_parent(item[1], item[2])
        if kind == "grp":
            return ("blk", 0)
        if kind == "blk":
            owner = s.owner.get(item[1])
            return op_parent(*owner) if owner else None
        return item[3]            # a var carries its placement

    def is_shut(item):
        return (item[0] == "blk" and item[1] in shut and item[1] != 0) or \
            (item[0] == "grp" and item[1] in shut)

    def node_of(item):            # the node a collapsed container is drawn as
        if item[0] == "blk" and item[1] in s.owner:
            return ("op", *s.owner[item[1]])
        return item

    rep_cache: dict = {}

    def rep(item):
        """The node ``item`` is drawn as: itself, or the outermost collapsed thing around it."""
        if item in rep_cache:
            return rep_cache[item]
        out, x = item, parent(item)
        while x is not None:
            if is_shut(x):
                out = node_of(x)
            x = parent(x)
        rep_cache[item] = out
        return out

    def top(b, i):                # the global block op an op is inside of (None: a root)
        while b != 0:
            if b not in s.owner:
                return None
            b, i = s.owner[b]
        return i

    def order(b, i):              # op order across blocks: the path of indices from a root
        path = [i]
        while b in s.owner:
            b, i = s.owner[b]
            path.append(i)
        return (root_rank.get(b, 0), *reversed(path))

    # The ops in drawing order, and for each variable every op touching it.
    ops = [(b, i, op) for b in s.blocks() for i, op in enumerate(s.ops[b])]
    declared: dict[tuple[int, str], object] = {}
    blocks = program.blocks

    def var_block(b, name, seen=()):
        block = blocks[b]
        found = block.table.find_var_owner(name)
        if found is None and 0 <= block.forward_block_idx < len(blocks) \
                and block.forward_block_idx not in seen:
            return var_block(block.forward_block_idx, name, (*seen, b))
        if found is None:
            return None
        declared[(found.idx, name)] = found.vars[name]
        return found.idx

    touches: dict[tuple[int, str], list[tuple[str, tuple]]] = {}   # var -> [(dir, op)]
    for b, i, op in ops:
        for d, names in (("in", op.input_arg_names), ("out", op.output_arg_names)):
            for name in names:
                if name == EMPTY_VAR:
                    continue
                vb = var_block(b, name)
                if vb is not None:
                    touches.setdefault((vb, name), []).append((d, ("op", b, i)))

    var_items = {}
    for (vb, name), uses in touches.items():
        place = ("blk", vb)
        if vb == 0 and s.groups:
            keys = {s.group_of.get(top(o[1], o[2])) for _, o in uses}
            if len(keys) == 1 and None not in keys:
                place = ("grp", keys.pop())
        var_items[(vb, name)] = ("var", vb, name, place)

    # Which variables are drawn, and the edges.
    edges: dict[tuple, set[str]] = {}     # (from node, to node) -> var names (elided vars)
    var_edges: dict[tuple, bool] = {}     # (from, to) -> drawn as a later update
    drawn: set[tuple] = set()
    for key, uses in touches.items():
        v = var_items[key]
        rv = rep(v)
        mapped = [(d, o, rep(o)) for d, o in uses]
        if rv == v:
            direct = any(r == o for _, o, r in mapped)
            desc = declared[key]
            feed = not desc.persistable and not any(d == "out" for d, _, _ in mapped)
            if direct or feed:
                drawn.add(v)
                # a write after the first read (the optimizer's update of a parameter for
                # the next run, a loop's next value) does not pull the layout back up
                first = min((order(*o[1:]) for d, o, _ in mapped if d == "in"), default=None)
                for d, o, r in mapped:
                    if d == "in":
                        var_edges[(v, r)] = var_edges.get((v, r), False)
                    else:
                        later = first is not None and order(*o[1:]) > first
                        var_edges[(r, v)] = var_edges.get((r, v), True) and later
                continue
        # the variable is hidden (inside a collapsed node) or only joins collapsed nodes:
        # an edge from each node writing it to each node reading it later, i.e. where the
        # node's first write comes before the other's last read (compared per node, not
        # per op: a variable that 2,000 ops write and read is 2,000 x 2,000 op pairs)
        first_write: dict[tuple, tuple] = {}
        last_read: dict[tuple, tuple] = {}
        for d, o, r in mapped:
            at = order(*o[1:])
            if d == "out":
                first_write[r] = min(first_write.get(r, at), at)
            else:
                last_read[r] = max(last_read.get(r, at), at)
        latest_first = sorted(last_read.items(), key=lambda x: x[1], reverse=True)
        for wr, written in first_write.items():
            for rr, read in latest_first:
                if read <= written:
                    break
                if wr != rr:
                    edges.setdefault((wr, rr), set()).add(key[1])
            if max_edges is not None and len(edges) + len(var_edges) > max_edges:
                raise GraphTooLarge(len(drawn), len(edges) + len(var_edges))

    def role(item) -> str:
        if item[0] == "op":
            return role_name(s.ops[item[1]][item[2]])
        if item[0] == "grp":
            return s.group_by_key[item[1]].role
        return "forward"

    def name_of(item) -> str:
        kind = item[0]
        if kind == "op":
            return f"op_b{item[1]}_{item[2]}"
        if kind == "var":
            return f"v{item[1]}_{item[2]}"
        return f"{kind}_{item[1]}"

    def op_line(b, i, op) -> str:
        hidden = [sub for sub in op.sub_block_indices() if sub in s.owner
                  and s.owner[sub] == (b, i) and sub in shut]
        label = f"{i}: {op.type}"
        extra = ""
        if hidden:
            label += "\\n(" + ", ".join(text_of(h) for h in hidden) + ")"
            extra = ', peripheries=2, class="pd-collapsed"'
        return (f'{_q(name_of(("op", b, i)))} [shape=box, style="rounded,filled", '
                f'fillcolor="{ROLE_COLORS[role_name(op)]}", label="{_esc(label)}", '
                f"id={_q(op_id(b, i))}, tooltip={_q(op.type)}{extra}];")

    def var_line(v) -> str:
        _, vb, name, _ = v
        desc = declared[(vb, name)]
        label = f"{shown_name(name, user_names)}\\n{describe(desc)}"
        style = ', style=filled, fillcolor="#fdf3d8"' if desc.persistable else ""
        return (f'{_q(name_of(v))} [shape=ellipse, label="{_esc(label)}"{style}, '
                f"id={_q(f'var:b{vb}:{name}')}];")

    def collapsed_line(item) -> str:
        if item[0] == "grp":
            g = s.group_by_key[item[1]]
            label, node_id = f"{g.key}\\n({len(g.ops)} ops)", f"grp:{g.key}"
            color = ROLE_COLORS.get(g.role, "#eeeeee")
        else:
            label, node_id = text_of(item[1]), f"blk:{item[1]}"
            color = "#eeeeee"
        return (f'{_q(name_of(item))} [shape=box3d, style=filled, fillcolor="{color}", '
                f'label="{_esc(label)}", id={_q(node_id)}, class="pd-collapsed", '
                f'tooltip="click to expand"];')

    # What each container holds (ops in order, then groups and blocks, then variables).
    # An op that runs an expanded block heads that block's cluster (the first, for an op
    # running several): the cluster reads as "this op, and what it runs".
    children: dict[tuple, list[tuple]] = {}
    header: dict[tuple[int, int], int] = {}
    for sub, owner in s.owner.items():
        if sub not in shut and owner not in header:
            header[owner] = sub
    for b, i, _ in ops:
        home = ("blk", header[(b, i)]) if (b, i) in header else op_parent(b, i)
        children.setdefault(home, []).append(("op", b, i))
    for g in s.groups:
        children.setdefault(("blk", 0), []).append(("grp", g.key))
    for b in s.blocks():
        p = parent(("blk", b))
        if p is not None:
            children.setdefault(p, []).append(("blk", b))
    for v in var_items.values():
        if v in drawn:
            children.setdefault(v[3], []).append(v)
    # a group's ops come first in block 0 where the group starts: keep the block's order
    first = {("grp", g.key): g.ops[0] for g in s.groups}
    block0 = children.get(("blk", 0), [])
    children[("blk", 0)] = sorted(
        block0, key=lambda x: (x[0] == "var", x[2] if x[0] == "op" else first.get(x, 0)))

    def cluster_label(item) -> str:
        if item[0] == "grp":
            g = s.group_by_key[item[1]]
            return f"{g.key} ({len(g.ops)} ops)"
        b = item[1]
        owner = s.owner.get(b)
        if owner is None:
            return f"block {b}" if b == 0 else f"block {b} (no op runs it)"
        return f"{s.ops[owner[0]][owner[1]].type} {op_id(*owner)} runs block {b}"

    nodes = 0

    def emit(item, depth) -> list[str]:
        nonlocal nodes
        pad = "  " * depth
        if item[0] == "op":
            nodes += 1
            return [pad + op_line(item[1], item[2], s.ops[item[1]][item[2]])]
        if item[0] == "var":
            nodes += 1
            return [pad + var_line(item)]
        if is_shut(item):
            if node_of(item) != item:
                return []
            nodes += 1
            return [pad + collapsed_line(item)]
        cid = f"cluster_grp:{item[1]}" if item[0] == "grp" else f"cluster_blk:{item[1]}"
        name = f"cluster_g{group_rank[item[1]]}" if item[0] == "grp" \
            else f"cluster_b{item[1]}"
        style = 'style="rounded,dashed"; color="#999999"' if item[0] == "grp" else \
            'style=rounded; color="#bbbbbb"'
        out = [f"{pad}subgraph {name} {{",
               f"{pad}  label={_q(cluster_label(item))}; {style}; id={_q(cid)};"]
        if item != ("blk", 0):
            out.append(f'{pad}  tooltip="click the label to collapse";')
        for c in children.get(item, []):
            out += emit(c, depth + 1)
        return out + [pad + "}"]

    lines = ["digraph program {",
             "  rankdir=TB; compound=true; nodesep=0.15; ranksep=0.25;",
             '  graph [fontname="monospace", fontsize=9, margin=0];',
             '  node [fontname="monospace", fontsize=9, width=0, height=0, '
             'margin="0.06,0.02"];',
             '  edge [color="#777777", arrowsize=0.5, fontname="monospace", fontsize=8];']
    for r in s.roots:
        lines += emit(("blk", r), 1)
    first_edge = len(lines)
    for (a, b), later in sorted(var_edges.items(), key=lambda e: (name_of(e[0][0]),
                                                                    name_of(e[0][1]))):
        style = ' [style=dashed, constraint=false, color="#aaaaaa"]' if later else ""
        lines.append(f"  {_q(name_of(a))} -> {_q(name_of(b))}{style};")
    for (a, b), names in sorted(edges.items(), key=lambda e: (name_of(e[0][0]),
                                                                name_of(e[0][1]))):
        # one variable: its name on the edge; several: on hover only. Forward values that
        # the backward pass reads again are drawn light (they would hide the chain).
        shown = sorted(shown_name(n, user_names) for n in names)
        light = role(a) != role(b)
        label = f"label={_q(shown[0])}, " if len(shown) == 1 and not light else ""
        style = 'color="#cccccc", ' if light else ""
        lines.append(f"  {_q(name_of(a))} -> {_q(name_of(b))} [{label}{style}"
                     f"tooltip={_q(', '.join(shown))}];")
    # the dashed edge from an op to each (expanded, visible) block it runs
    for sub, (b, i) in s.owner.items():
        if is_shut(("blk", sub)) or rep(("op", b, i)) != ("op", b, i) or \
                not s.ops[sub] or rep(("op", sub, 0)) != ("op", sub, 0):
            continue
        head = "" if header.get((b, i)) == sub else f'lhead={_q(f"cluster_b{sub}")}, '
        lines.append(f'  {_q(name_of(("op", b, i)))} -> {_q(name_of(("op", sub, 0)))} '
                     f'[style=dashed, {head}label="runs"];')
    edge_count = len(lines) - first_edge
    lines.append("}")
    return _Drawing("\n".join(lines), nodes, edge_count)


# --- the drawing, bounded --------------------------------------------------------------------
# graphviz lays a graph out in time that grows faster than the graph (thousands of clusters
# take minutes) and holds it all in memory meanwhile. A view (a notebook's, and the Jupyter
# server's Paddle program tab) never waits for that: a larger graph is not given to dot,
# and dot is stopped after DOT_SECONDS; either way the view shows a notice in place of the
# drawing, saying what to collapse. (The defaults draw a program of 2,000 sub-blocks as a
# handful of nodes; expanding everything is what meets these.)
MAX_DRAWN_NODES = 2000
MAX_DRAWN_EDGES = 4000
DOT_SECONDS = 20


def graph_svg(program, executable: str, user_names: dict | None = None,
              collapsed=None) -> str | None:
    """The graph drawn by graphviz's ``dot`` (``executable``) as an inline ``<svg>``, within
    the bounds above (past them, an ``<svg class="pd-graph-notice">`` that says which);
    None where dot fails otherwise (the view then shows the graph as text)."""
    try:
        drawing = _graph(program, user_names, collapsed, None, max_edges=MAX_DRAWN_EDGES)
    except GraphTooLarge as e:
        return _too_large(f"more than {e.edges:,} edges")
    if drawing.nodes > MAX_DRAWN_NODES or drawing.edges > MAX_DRAWN_EDGES:
        return _too_large(f"{drawing.nodes:,} nodes and {drawing.edges:,} edges")
    try:
        done = subprocess.run([executable, "-Tsvg"], input=drawing.dot.encode("utf-8"),
                              capture_output=True, timeout=DOT_SECONDS)
    except subprocess.TimeoutExpired:       # run() has killed dot and waited for it
        return notice_svg([
            f"graphviz's dot took longer than {DOT_SECONDS} s to lay this graph out "
            f"({drawing.nodes:,} nodes, {drawing.edges:,} edges) and was stopped",
            "(paddle_nb.notebook.program_graph.DOT_SECONDS).", *_WHAT_TO_DO])
    except OSError:
        return None
    if done.returncode != 0:
        return None
    svg = done.stdout.decode("utf-8", "replace")
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else None


_WHAT_TO_DO = ["Collapse blocks or groups (the list above) to draw less of it,",
               "or read the program in the Code tab."]


def _too_large(size: str) -> str:
    return notice_svg([
        f"This graph is too large to draw: {size}.",
        f"The limit is {MAX_DRAWN_NODES:,} nodes and {MAX_DRAWN_EDGES:,} edges "
        f"(paddle_nb.notebook.program_graph.MAX_DRAWN_NODES, MAX_DRAWN_EDGES).",
        *_WHAT_TO_DO])


def notice_svg(lines: list[str]) -> str:
    """An ``<svg>`` of a few lines of text, shown where the drawing would be (the page
    puts the svg trait in place as it is, and keeps the collapse list above it)."""
    height = 18 * len(lines) + 10
    width = 7 * max(len(line) for line in lines) + 20
    spans = "".join(f'<tspan x="10" dy="{18 if k else 0}">{escape(line, quote=False)}'
                    f"</tspan>" for k, line in enumerate(lines))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="pd-graph-notice" '
            f'width="{width}pt" height="{height}pt" viewBox="0 0 {width} {height}">'
            f'<text x="10" y="20" font-family="monospace" font-size="12">{spans}</text>'
            f"</svg>")
