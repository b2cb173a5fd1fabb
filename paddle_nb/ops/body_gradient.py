"""The gradient of a control-flow op's body: what conditional_block, while and recurrent
(ops/conditional.py, while_op.py, recurrent.py) do alike when they make their gradient op.

Each appends a gradient block for its ``sub_block`` (core/backward.py's
``append_grad_block``: the backward of the body's ops that lead to the outputs whose
gradients flow back) and gives its gradient op its own attributes with ``sub_block``
pointing at that block; where no gradient reaches the body there is no gradient op.
"""
from __future__ import annotations

from ..core.backward import append_grad_block
from ..core.grad_maker import grad_name


def body_grad_attrs(op, targets, no_grad) -> dict | None:
    """The gradient op's attributes: ``op``'s, ``sub_block`` the gradient block appended for
    ``targets`` (body outputs whose gradients the op puts in the scope first); None where
    no op of the body leads to them."""
    targets = set(targets)
    grad_block, path = append_grad_block(op, op.attr("sub_block"), targets,
                                         {grad_name(t) for t in targets}, no_grad)
    if not path:
        return None
    attrs = dict(op.attrs)
    attrs["sub_block"] = grad_block.idx
    return attrs
