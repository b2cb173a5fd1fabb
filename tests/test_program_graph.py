"""The program graph: sub-blocks as nested clusters headed by the op that runs them, blocks
and op groups that collapse to one node and expand again, a big program grouped by layer,
and the ids in the SVG the page's clicks read (all from Python: the page only sets traits).
"""
import re
import shutil

import numpy as np
import pytest

import paddle_nb as pd
from models import tanh_rnn
from paddle_nb.notebook import program_graph as pg
from paddle_nb.notebook.program_model import op_id, program_dot, program_svg
from paddle_nb.notebook.widgets import ProgramView

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is missing")


# --- programs ---------------------------------------------------------------------------
def _while_in_ifelse_in_rnn():
    """An RNN whose step has an IfElse (pd.cond) whose true branch runs a While."""
    T, B, D = 3, 4, 2
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [T, B, D], "float64")
        W = pd.create_parameter([D, D], "float64", name="W", initializer=pd.Normal(0, 0.8, 7))
        h0 = pd.layers.fill_constant([B, D], "float64", 0.0)
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            z = pd.matmul(x_t + h_pre, W)

            def looped():
                i = pd.layers.fill_constant([1], "int64", 0)
                n = pd.layers.fill_constant([1], "int64", 2)
                _, h = pd.while_loop(lambda i, h: pd.layers.less_than(i, n),
                                     lambda i, h: [pd.increment(i, in_place=False),
                                                   pd.tanh(pd.matmul(h, W))], [i, z])
                return h
            h = pd.cond(pd.mean(z) > 0.0, looped, lambda: z * 0.5)
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        hs = rnn()
        pd.mean(hs * hs)
    return main


def _deep_mlp(layers=30):
    """30 fc layers, a loss, backward and SGD: about 250 ops."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        h = pd.data("x", [None, 8])
        label = pd.data("label", [None, 1], "int64")
        for _ in range(layers):
            h = pd.layer.fc(h, 8, act="relu")
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(pd.layer.fc(h, 3), label))
        pd.optimizer.SGD(0.1).minimize(loss)
    return main


def _owner(program, block_type):
    """(block, index) of the first op of ``block_type`` and the block it runs."""
    for b in program.blocks:
        for i, op in enumerate(b.ops):
            if op.type == block_type and op.sub_block_indices():
                return b.idx, i, op.sub_block_indices()[0]
    raise AssertionError(block_type)


def _cluster_bodies(dot):
    """cluster name -> its DOT text (nested clusters included)."""
    out, stack = {}, []
    for line in dot.splitlines():
        m = re.match(r"\s*subgraph (cluster_\w+) \{", line)
        if m:
            stack.append((m.group(1), []))
        for _, body in stack:
            body.append(line)
        if line.strip() == "}" and stack:
            name, body = stack.pop()
            out[name] = "\n".join(body)
    return out


def _svg_ids(svg, kind="node"):
    """The ids of the op nodes and collapsed nodes (or of the clusters) in an SVG."""
    ids = {html_unescape(i) for i in re.findall(rf'<g id="([^"]+)" class="{kind}', svg)}
    return {i for i in ids if not i.startswith("var:")}


def html_unescape(text):
    return text.replace("&#45;", "-").replace("&amp;", "&")


# --- nested blocks ----------------------------------------------------------------------------
def test_each_sub_block_is_a_cluster_inside_the_cluster_of_the_op_that_runs_it():
    main = _while_in_ifelse_in_rnn()
    rb, ri, rnn_block = _owner(main, "recurrent")
    cb, ci, cond_block = next((b, i, s) for b, i, s in [_owner(main, "conditional_block")]
                              if main.block(s).ops and any(op.type == "while"
                                                           for op in main.block(s).ops))
    wb, wi, while_block = _owner(main, "while")
    assert (rb, cb, wb) == (0, rnn_block, cond_block)        # While in IfElse in RNN
    dot = program_dot(main)
    clusters = _cluster_bodies(dot)
    for b in main.blocks:
        assert f"cluster_b{b.idx}" in clusters
    # nested: the RNN's cluster holds the IfElse branch's, which holds the While's
    assert "subgraph cluster_b%d {" % cond_block in clusters[f"cluster_b{rnn_block}"]
    assert "subgraph cluster_b%d {" % while_block in clusters[f"cluster_b{cond_block}"]
    assert "subgraph cluster_b%d {" % while_block not in clusters[f"cluster_b{rnn_block}"] \
        .replace(clusters[f"cluster_b{cond_block}"], "")
    # each cluster is headed by its op: the op's node is drawn in it, and it says so
    for b, i, sub, typ in ((rb, ri, rnn_block, "recurrent"), (cb, ci, cond_block,
                                                              "conditional_block"),
                           (wb, wi, while_block, "while")):
        body = clusters[f"cluster_b{sub}"]
        assert f'label="{typ} {op_id(b, i)} runs block {sub}"' in body
        assert f'"op_b{b}_{i}" [shape=box' in body
        assert f'"op_b{b}_{i}" -> "op_b{sub}_0" [style=dashed, label="runs"]' in dot
    # the variables a sub-block reads from outside are drawn outside, their edges cross in
    assert '"v0_W"' in clusters["cluster_b0"] and '"v0_W"' not in clusters[f"cluster_b{rnn_block}"]
    matmul_in_loop = next(i for i, op in enumerate(main.block(while_block).ops)
                          if op.type == "matmul_v2")
    assert f'"v0_W" -> "op_b{while_block}_{matmul_in_loop}";' in dot


def test_ops_with_sub_blocks_are_found_by_their_block_attributes():
    """recurrent (sub_block), while, conditional_block and a training RNN's gradient block
    (run by recurrent_grad): every block is owned once, from block 0 down."""
    main, startup, hs = tanh_rnn(3, 2, 3, 4, seed=3)
    with pd.program_guard(main, startup):
        pd.optimizer.SGD(0.01).minimize(pd.mean(hs * hs))
    s = pg.structure(main)
    assert s.roots == [0] and sorted(s.owner) == list(range(1, main.num_blocks))
    kinds = {main.block(b).ops[i].type for b, i in s.owner.values()}
    assert kinds == {"recurrent", "recurrent_grad"}
    clusters = _cluster_bodies(program_dot(main))
    assert all(f"cluster_b{b}" in clusters["cluster_b0"] for b in s.owner)


def test_a_block_no_op_runs_and_a_block_two_ops_claim_still_draw_once():
    from paddle_nb.core.framework_pb2 import AttrType   # noqa: PLC0415
    main = pd.Program()
    with pd.program_guard(main):
        x = pd.var(1.0)
        i = pd.layers.fill_constant([1], "int64", 0)
        n = pd.layers.fill_constant([1], "int64", 2)
        pd.while_loop(lambda i, x: pd.layers.less_than(i, n),
                      lambda i, x: [pd.increment(i, in_place=False), x * 2.0], [i, x])
        loose = main.create_block(0)                  # a block being built: no op runs it
        pd.var(3.0)
        main.rollback()
    _, _, while_block = _owner(main, "while")
    main.global_block().ops[0]._set_attr("sub_block", while_block, AttrType.BLOCK)  # hostile
    s = pg.structure(main)
    assert s.roots == [0, loose.idx] and s.owner[while_block] == (0, 0)
    dot = program_dot(main, collapsed=[])
    for b in main.blocks:
        assert dot.count(f"subgraph cluster_b{b.idx} {{") == 1
    assert 'label="block %d (no op runs it)"' % loose.idx in dot
    assert {g["node"] for g in pg.collapsible(main)} >= {f"blk:{loose.idx}", "b0:0"}
    assert '"blk_%d" [shape=box3d' % loose.idx in program_dot(main, collapsed=[loose.idx])


# --- collapsing -----------------------------------------------------------------------------
@needs_dot
def test_a_collapsed_block_is_its_op_as_one_box_and_expands_again():
    main = _while_in_ifelse_in_rnn()
    wb, wi, while_block = _owner(main, "while")
    n = len(main.block(while_block).ops)
    view = ProgramView(main)
    assert view.collapsed == []                      # a small program starts expanded
    entry = next(g for g in view.graph_groups if g["key"] == while_block)
    assert entry == {"key": while_block, "label": f"while (block {while_block}: {n} ops)",
                     "collapsed": False, "node": op_id(wb, wi),
                     "cluster": f"cluster_blk:{while_block}",
                     "ops": [op_id(while_block, i) for i in range(n)]}
    assert f"cluster_blk:{while_block}" in _svg_ids(view.svg, "cluster")
    inside = {op_id(while_block, i) for i in range(n)}
    assert inside <= _svg_ids(view.svg)

    view.toggle(while_block)                          # what a click on its label does
    assert view.collapsed == [while_block]
    ids = _svg_ids(view.svg)
    assert not inside & ids and op_id(wb, wi) in ids  # the while op stands for its block
    assert f"cluster_blk:{while_block}" not in _svg_ids(view.svg, "cluster")
    assert f"{wi}: while" in view.svg and f"(block {while_block}: {n} ops)" in view.svg
    assert next(g for g in view.graph_groups if g["key"] == while_block)["collapsed"]

    # collapsing the RNN's block hides everything nested in it, to any depth; its entry
    # lists them all, so the page can mark the RNN's node when the debugger is inside
    rb, ri, rnn_block = _owner(main, "recurrent")
    hidden = next(g for g in view.graph_groups if g["key"] == rnn_block)["ops"]
    assert inside <= set(hidden) and op_id(wb, wi) in hidden
    view.collapsed = [rnn_block]
    ids = _svg_ids(view.svg)
    assert ids == {op_id(0, i) for i in range(len(main.global_block().ops))}
    view.collapsed = []                               # and all expands again
    assert inside <= _svg_ids(view.svg)


def test_edges_into_a_collapsed_block_go_to_its_op():
    main = _while_in_ifelse_in_rnn()
    rb, ri, rnn_block = _owner(main, "recurrent")
    dot = program_dot(main, collapsed=[rnn_block])
    assert f'"v0_W" -> "op_b0_{ri}";' in dot          # read inside: drawn to the RNN op
    assert f"op_b{rnn_block}_" not in dot and "cluster_b%d " % rnn_block not in dot


# --- big programs ---------------------------------------------------------------------------
@needs_dot
def test_a_200_op_program_starts_grouped_and_a_group_expands_to_its_ops():
    main = _deep_mlp()
    n_ops = sum(len(b.ops) for b in main.blocks)
    assert n_ops > 200
    s = pg.structure(main)
    keys = [g.key for g in s.groups]
    assert keys[:3] == ["fc_0", "fc_1", "fc_2"] and keys[-2:] == ["backward", "optimize"]
    assert pg.default_collapsed(main) == keys
    view = ProgramView(main)
    assert view.collapsed == keys
    nodes = _svg_ids(view.svg)
    assert len(nodes) < n_ops / 4, len(nodes)        # about 40 boxes for 250 ops
    assert {f"grp:{k}" for k in keys} <= nodes
    assert view.svg.count('class="node') < n_ops / 4   # variables' nodes too
    assert ">fc_3</text>" in view.svg and ">(3 ops)</text>" in view.svg
    # the chain of layers is labelled with what flows between them
    assert '"grp_fc_3" -> "grp_fc_4" [label="fc_3.tmp_2"' in program_dot(main)

    fc3 = next(g for g in s.groups if g.key == "fc_3")
    view.toggle("fc_3")                               # a click on the fc_3 box
    nodes = _svg_ids(view.svg)
    assert {op_id(0, i) for i in fc3.ops} <= nodes and "grp:fc_3" not in nodes
    assert "cluster_grp:fc_3" in _svg_ids(view.svg, "cluster")
    assert [main.global_block().ops[i].type for i in fc3.ops] == ["mul", "elementwise_add",
                                                                 "relu"]
    view.toggle("fc_3")
    assert "grp:fc_3" in _svg_ids(view.svg)


def test_grouping_uses_the_name_scope_where_ops_carry_one():
    main = _deep_mlp(layers=2)
    ops = main.global_block().ops
    for op in ops[:6]:
        op._set_attr("op_namescope", "/encoder/layer_0/")
    groups = pg.structure(main, grouped=True).groups
    assert groups[0].key == "encoder" and groups[0].ops == list(range(6))


def test_paddle_fixtures_with_only_the_root_scope_group_by_layer():
    """PaddlePaddle 3 writes op_namescope "/" on every op: no help, so layers decide."""
    import os   # noqa: PLC0415
    path = os.path.join(os.path.dirname(__file__), "fixtures", "paddle", "transformer_ops.pdesc")
    program = pd.Program.from_bytes(open(path, "rb").read())
    s = pg.structure(program)
    assert sum(len(b.ops) for b in program.blocks) > pg.GROUP_OVER and s.groups
    keys = [g.key for g in s.groups]
    assert "" not in keys and "linear_0" in keys and keys[-1] == "backward"
    # the reshapes, transposes and softmax between the linear layers: a run of loose ops
    assert any(k.startswith("ops ") and len(g.ops) > 5 for k, g in zip(keys, s.groups))
    dot = program_dot(program)
    assert dot.count("shape=box3d") == len(s.groups)
    n_ops = sum(len(b.ops) for b in program.blocks)
    assert dot.count("[shape=") < n_ops / 2          # ops, groups and variables drawn


def test_a_small_program_is_not_grouped():
    main = _deep_mlp(layers=2)
    assert sum(len(b.ops) for b in main.blocks) <= pg.GROUP_OVER
    assert pg.structure(main).groups == [] and pg.default_collapsed(main) == []
    assert "box3d" not in program_dot(main)


# --- ids: what a click reads ----------------------------------------------------------------
@needs_dot
@pytest.mark.parametrize("make", [_while_in_ifelse_in_rnn, _deep_mlp])
def test_every_visible_op_has_its_id_in_the_svg(make):
    main = make()
    view = ProgramView(main)
    nodes = _svg_ids(view.svg)
    s = pg.structure(main)
    hidden = set()
    for key in view.collapsed:
        if isinstance(key, int):
            hidden |= {(key, i) for i in range(len(main.block(key).ops))}
        else:
            hidden |= {(0, i) for i in next(g for g in s.groups if g.key == key).ops}
    # everything below a hidden block is hidden too
    for b, (ob, oi) in s.owner.items():
        if (ob, oi) in hidden or b in view.collapsed:
            hidden |= {(b, i) for i in range(len(main.block(b).ops))}
    visible = {op_id(b.idx, i) for b in main.blocks for i in range(len(b.ops))
               if (b.idx, i) not in hidden}
    assert visible and visible <= nodes
    # ... and what the page's click does with an op's id is set ``selected``
    some = sorted(visible)[len(visible) // 2]
    block, index = map(int, some[1:].split(":"))
    view.selected = [block, index]
    assert view.selected_op["id"] == some
    assert view.selected_op["type"] == main.block(block).ops[index].type


def test_the_page_only_sets_traits_on_a_graph_click():
    """The JS keeps no graph logic: a node click sets selected and takes the node's keys
    out of collapsed; a cluster label's click puts its keys in (graph_groups says which)."""
    from paddle_nb.notebook.widgets import views_dir   # noqa: PLC0415
    js = (views_dir() / "program_view.js").read_text()
    click = js[js.index('graph.addEventListener("click"'):]
    click = click[:click.index("});") + 3]
    assert "select(node.id)" in click and 'g.node === node.id' in click
    assert "g.cluster === cluster.id" in click and "setCollapsed(" in click
    assert '"change:svg change:graph_text change:graph_groups": drawGraph' in js


@needs_dot
def test_graph_renders_quickly_by_default_and_falls_back_to_text(monkeypatch):
    import time   # noqa: PLC0415
    main = _deep_mlp()
    start = time.perf_counter()
    svg = program_svg(main)
    assert svg.startswith("<svg") and time.perf_counter() - start < 5
    from paddle_nb.notebook import program_model as pm   # noqa: PLC0415
    monkeypatch.setattr(pm.shutil, "which", lambda name: None)
    view = ProgramView(main)
    assert view.svg == "" and "op  0 mul" in view.graph_text
    view.toggle("fc_3")                               # collapsing still works (no svg)
    assert view.svg == "" and "fc_3" not in view.collapsed


def test_collapsed_keys_survive_json():
    main = _while_in_ifelse_in_rnn()
    view = ProgramView(main, graph=False)
    import json   # noqa: PLC0415
    assert json.loads(json.dumps(view.graph_groups)) == view.graph_groups
    assert np.all([isinstance(g["key"], int) for g in view.graph_groups])
