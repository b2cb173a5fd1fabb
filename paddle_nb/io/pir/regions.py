"""PIR's regions as Fluid's sub-blocks: ``1.if`` and ``1.while``.

An ``if`` becomes what ``pd.cond`` builds: a ``conditional_block`` on the condition and one
on its ``logical_not``, each copying the values its region yields to variables outside, and
``select_input`` picking the taken branch's by ``cast(cond, int32)``. A ``while`` becomes a
``while`` op over a sub-block: one outer variable per block argument (the loop-carried
values), assigned the operands before the loop and the yielded values at the end of each
pass, with the condition yielded first. Each is a function of the translator ``tr``."""
from __future__ import annotations

from ...core import dtypes
from . import format as F
from .format import PirFormatError
from .values import count_of, is_id

def translate_if(tr, op, block, where, depth):
    [cond_id] = tr.operand_ids(op, where, count=1)
    cond = tr.tensor(cond_id, block, where, 0)
    regions = op.get("regions")
    if not isinstance(regions, list) or len(regions) != 2:
        raise PirFormatError(f"{where}: an if has two regions (true, false), has "
                             f"{count_of(regions)}")
    results = tr.results(op, where)
    n = tr.number("if")
    not_cond = tr.declare(block, f"if_{n}.not_cond", 0,
                          F.TensorType("tensor", "bool", [1])).name
    branch_outs = []
    for branch, region in zip(("true", "false"), regions):
        pred = cond
        if branch == "false":
            block.append_op("logical_not", {"X": [cond]}, {"Out": [not_cond]})
            pred = not_cond
        copies = [tr.declare(block, f"if_{n}.{branch}_{i}", 0, t).name
                  for i, (_, t) in enumerate(results)]
        sub = tr.program.create_block(block.idx)
        sub_path = f"{where} {branch} region (block {sub.idx})"

        def yielded(ids, ywhere, sub=sub, copies=copies):
            if len(ids) != len(copies):
                raise PirFormatError(f"{ywhere}: yields {len(ids)} values; the if has "
                                     f"{len(copies)} results")
            for j, (vid, c) in enumerate(zip(ids, copies)):
                sub.append_op("assign", {"X": [tr.tensor(vid, sub, ywhere, j)]},
                              {"Out": [c]})
        tr.translate_block(tr.only_block(region, sub_path), sub, sub_path,
                              depth + 1, yielded)
        tr.owner_op(block, sub, "conditional_block", {"Cond": [pred]},
                       {"sub_block": sub, "is_scalar_condition": True},
                       f"if_{n}.{branch}_scopes")
        branch_outs.append(copies)
    if results:
        mask = tr.declare(block, f"if_{n}.mask", 0,
                             F.TensorType("tensor", "int32", [1])).name
        block.append_op("cast", {"X": [cond]}, {"Out": [mask]},
                        {"in_dtype": dtypes.to_code("bool"),
                         "out_dtype": dtypes.to_code("int32")})
    for i, (vid, t) in enumerate(results):
        name = tr.new_name(f"if_{n}.tmp_{i}", vid)
        tr.declare(block, name, vid, t)
        block.append_op("select_input", {"X": [branch_outs[1][i], branch_outs[0][i]],
                                         "Mask": [mask]}, {"Out": [name]})
        tr.define(vid, block, name)

def translate_while(tr, op, block, where, depth):
    ids = tr.operand_ids(op, where)
    if not ids:
        raise PirFormatError(f"{where}: a while's first operand is its condition")
    regions = op.get("regions")
    if not isinstance(regions, list) or len(regions) != 1:
        raise PirFormatError(f"{where}: a while has one region, has {count_of(regions)}")
    body = tr.only_block(regions[0], f"{where} region")
    args = body.get("args", [])
    results = tr.results(op, where)
    if not isinstance(args, list) or len(args) != len(ids) - 1 or \
            len(results) != len(ids) - 1:
        raise PirFormatError(f"{where}: a while carries as many values as it has block "
                             f"arguments and results: operands {len(ids) - 1} (after the "
                             f"condition), arguments {count_of(args)}, results "
                             f"{len(results)}")
    n = tr.number("while")
    cond_var = tr.declare(block, f"while_{n}.cond", 0,
                             F.TensorType("tensor", "bool", [1])).name
    block.append_op("assign", {"X": [tr.tensor(ids[0], block, where, 0)]},
                    {"Out": [cond_var]})
    loop_vars = []
    for j, (arg, vid) in enumerate(zip(args, ids[1:])):
        aid = arg.get("#") if isinstance(arg, dict) else None
        if not is_id(aid):
            raise PirFormatError(f"{where}: block argument {j} should be {{\"#\": id, "
                                 f"\"TT\": type}}")
        t = F.decode_type(arg.get("TT"), f"{where} block argument {j}")
        name = tr.declare(block, f"while_{n}.var_{j}", aid, t).name
        block.append_op("assign", {"X": [tr.tensor(vid, block, where, j + 1)]},
                        {"Out": [name]})
        loop_vars.append(name)
    sub = tr.program.create_block(block.idx)
    for arg, name in zip(args, loop_vars):
        tr.define(arg["#"], block, name)   # block arguments: the loop variables

    def yielded(yids, ywhere):
        if len(yids) != len(loop_vars) + 1:
            raise PirFormatError(f"{ywhere}: a while body yields its condition and "
                                 f"{len(loop_vars)} values, yields {len(yids)}")
        new = [tr.tensor(v, sub, ywhere, j) for j, v in enumerate(yids)]
        targets = [cond_var] + loop_vars
        # yielded values may be other loop variables (a swap): copy through temporaries
        clash = any(s in targets and s != t for s, t in zip(new, targets))
        if clash:
            temps = []
            for j, s in enumerate(new):
                tmp = sub.create_var(f"while_{n}.next_{j}", dtype=sub.var(s).dtype)
                sub.append_op("assign", {"X": [s]}, {"Out": [tmp]})
                temps.append(tmp.name)
            new = temps
        for s, t in zip(new, targets):
            if s != t:
                sub.append_op("assign", {"X": [s]}, {"Out": [t]})
    sub_path = f"{where} body (block {sub.idx})"
    tr.translate_block(body, sub, sub_path, depth + 1, yielded)
    tr.owner_op(block, sub, "while", {"Condition": [cond_var]},
                   {"sub_block": sub, "is_test": True}, f"while_{n}.scopes")
    for (vid, _), name in zip(results, loop_vars):
        tr.define(vid, block, name)
