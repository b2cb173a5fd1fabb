"""Gradient makers (Fluid's GradOpMaker): how an op says what its gradient op is.

Most ops use :class:`Grad`, the default maker: the gradient of ``relu`` is an op of type
``relu_grad`` that reads some of relu's forward slots (``Out``) and the gradient of each
output (``Out@GRAD``) and writes the gradient of each input (``X@GRAD``), with relu's
attributes copied. Declaring ``grad=Grad(reads=["Out"], kernel=...)`` on the forward op
also registers the ``relu_grad`` op itself, so an op and its gradient are declared together.
A few ops are differentiated by other ordinary ops (the gradient of ``scale`` is a
``scale``); they give a function instead, which returns :class:`GradOp` descriptions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .infer_shape import ForwardShapes

GRAD_SUFFIX = "@GRAD"
EMPTY_VAR = "@EMPTY@"       # a slot position whose gradient nobody needs (Fluid's name)


def grad_name(name: str) -> str:
    return name + GRAD_SUFFIX


def forward_name(name: str) -> str:
    """``x@GRAD@RENAME@1`` -> ``x``."""
    return name.split(GRAD_SUFFIX)[0]


@dataclass
class GradOp:
    """One gradient op to append: slots map to variable names. ``consumes``: the gradients
    of the forward op's outputs; once this op has read them they are spent (a variable the
    forward block overwrites, like a loop variable, starts a fresh gradient before it)."""
    type: str
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    attrs: dict = field(default_factory=dict)
    consumes: frozenset = frozenset()
    # output slots whose variables hold a SelectedRows (an embedding's sparse gradient):
    # the backward declares them VarType.SELECTED_ROWS, as Paddle's programs do
    selected_rows: frozenset = frozenset()


@dataclass
class Grad:
    """The default gradient maker, and the declaration of the ``<type>_grad`` op.

    reads:    forward slots (inputs or outputs) whose values the gradient op needs
    grads_of: forward output slots whose gradients it reads (default: every output that
              is not intermediate)
    writes:   forward input slots it computes gradients for (default: every input that is
              not dispensable)
    kernel:   the CPU kernel of the gradient op
    cuda_kernel: its CUDA kernel
    """
    reads: list[str]
    kernel: Callable
    grads_of: list[str] | None = None
    writes: list[str] | None = None
    comment: str = ""
    cuda_kernel: Callable | None = None
    # the gradient op's own shape rule, where the default (shape_rule) cannot see the
    # forward shapes: a gradient op that reads XShape or Softmax instead of X or Logits
    infer_shape: Callable | None = None
    # reads that Paddle's own gradient op does not have (a program it saved lacks them):
    # optional slots of the grad op, given by this package's backward so that its shape
    # rule can check the incoming gradients (stack_grad reads only Y@GRAD in Paddle)
    optional: tuple = ()
    # the gradient op's type where Paddle's is not ``<type>_grad`` (cross_entropy2's is
    # cross_entropy_grad2)
    grad_type: str = ""
    # a boolean attribute of the forward op that makes the gradients it writes SelectedRows
    # (an embedding's is_sparse): declared VarType.SELECTED_ROWS by the backward
    sparse_when: str = ""
    # the gradient op's lowered form for the block compiler (OpDef.lowered)
    lowered: Callable | None = None

    def op_type(self, forward_type: str) -> str:
        """The type of the gradient op of ``forward_type``."""
        return self.grad_type or forward_type + "_grad"

    def kernels(self) -> dict[str, Callable]:
        """The grad op's kernels by place kind."""
        out = {"cpu": self.kernel}
        if self.cuda_kernel is not None:
            out["cuda"] = self.cuda_kernel
        return out

    def resolve(self, forward) -> tuple[list[str], list[str]]:
        grads_of = self.grads_of if self.grads_of is not None else \
            [s.name for s in forward.outputs if not s.intermediate]
        writes = self.writes if self.writes is not None else \
            [s.name for s in forward.inputs if not s.dispensable]
        return grads_of, writes

    def shape_rule(self, forward) -> Callable:
        """The ``<type>_grad`` op's shape rule (Fluid's default for gradient ops): the
        gradient of a variable has that variable's shape and type. Each ``S@GRAD`` it
        reads must match ``S`` where it reads ``S`` too (a dOut of another shape would be
        broadcast into a wrong dX, silently), and each ``S@GRAD`` it writes gets ``S``'s
        shape where it reads ``S``. Run by the executor's guard on the values."""
        if self.infer_shape is not None:
            return self.infer_shape
        grads_of, writes = self.resolve(forward)
        reads = set(self.reads)

        def infer(ctx):
            made = None
            for slot in grads_of:
                for i in range(len(ctx.input_names(slot + GRAD_SUFFIX))):
                    if not ctx.has_value(slot + GRAD_SUFFIX, i):
                        continue
                    if slot in reads:
                        if ctx.has_value(slot, i):
                            ctx.require_gradient_fits(slot, i)
                        continue
                    # Out is not read: the forward rule on the forward inputs says its shape
                    if made is None and forward.infer_shape is not None:
                        made = ForwardShapes(ctx, forward).outputs() or {}
                    if made and slot in made and i < len(made[slot]):
                        ctx.require_gradient_fits(slot, i, want=made[slot][i])
            for slot in writes:
                if slot not in reads:
                    continue
                for i, name in enumerate(ctx.output_names(slot + GRAD_SUFFIX)):
                    if name != EMPTY_VAR and ctx.has_value(slot, i):
                        ctx.set_output(slot + GRAD_SUFFIX, ctx.shape(slot, i),
                                       ctx.dtype(slot, i), i=i)
        return infer

    def make(self, op, no_grad: set[str]) -> list[GradOp]:
        """The ``<type>_grad`` op for forward op ``op`` (an Operator view)."""
        forward = op.op_def
        grads_of, writes = self.resolve(forward)
        inputs = {}
        for slot in self.reads:
            inputs[slot] = op.input(slot) if forward.input(slot) else op.output(slot)
        for slot in grads_of:
            inputs[slot + GRAD_SUFFIX] = [grad_name(n) for n in op.output(slot)]
        outputs = {}
        for slot in writes:
            names = op.input(slot)
            wanted = [EMPTY_VAR if n in no_grad else grad_name(n) for n in names]
            if forward.input(slot).duplicable:
                outputs[slot + GRAD_SUFFIX] = wanted      # keep positions
            else:
                outputs[slot + GRAD_SUFFIX] = [n for n in wanted if n != EMPTY_VAR]
        sparse = frozenset(outputs) if self.sparse_when and op.attr(self.sparse_when) \
            else frozenset()
        return [GradOp(self.op_type(forward.type), inputs, outputs, dict(op.attrs),
                       selected_rows=sparse)]


def in_every_grad_block(maker: Callable) -> Callable:
    """Mark a gradient maker (a function) whose ops undo a change of state that the
    gradient ops before them must not see: an in-place loop counter (``increment``, whose
    gradient is Fluid's IncrementGradOpMaker: ``increment`` with ``X`` = the forward
    ``Out``, ``Out`` = the forward ``X`` and ``step = -step``). A gradient block
    (``core/backward.py: append_grad_block``) differentiates every marked op of its forward
    block, on the gradient path or not (an int counter gets no gradient), so running the
    block last step first walks the counter back to each step's value before the grad
    ops that read it (``read_from_array``'s ``write_to_array``). As Paddle does, the
    global block differentiates only the ops on the path to the loss."""
    maker.in_every_grad_block = True
    return maker


def runs_in_every_grad_block(op_def) -> bool:
    """Whether ``op_def``'s gradient ops belong in every gradient block of its block."""
    return bool(getattr(op_def.grad, "in_every_grad_block", False))


def differentiable_inputs(op_def) -> list[str]:
    """The forward input slots whose gradients the op's gradient computes."""
    if isinstance(op_def.grad, Grad):
        return op_def.grad.resolve(op_def)[1]
    return [s.name for s in op_def.inputs]
