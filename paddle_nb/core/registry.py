"""The operator registry (the Framework design's "operator registration").

Each op is declared once, in one :class:`OpDef`: its OpProto (input/output slots and typed
attributes, with docs), its shape/dtype inference (run when the op is appended to a block),
its kernels keyed by place kind (``"cpu"``, ``"cuda"``), and its gradient maker. Python
op creators (``pd.op.<type>``), the op test table, docs and widget help are all generated
from here; nothing else lists ops.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .. import lazy
from . import attrs as A
from .attr_tensors import attribute_tensors, check_attr_tensors
from .errors import BuildError, UnknownOpError, did_you_mean
from .framework_pb2 import OpProto
from .grad_maker import GRAD_SUFFIX, Grad


@dataclass(frozen=True)
class Slot:
    """An input or output slot: ``X``, ``Out``... Duplicable slots take a list of vars."""
    name: str
    comment: str = ""
    duplicable: bool = False
    intermediate: bool = False
    dispensable: bool = False


@dataclass(frozen=True)
class Attr:
    """A typed attribute with its default; ``check(value)`` returns an error text or None."""
    name: str
    type: int
    default: Any
    comment: str = ""
    check: Callable[[Any], str | None] | None = None
    extra: bool = False       # kept for Paddle compatibility; not shown by to_code()


# An op's gradient: a Grad (the default maker, which also declares the <type>_grad op), a
# function (Operator, no_grad names) -> [GradOp] (its docstring says which ops), or NO_GRADIENT.
GradMaker = Callable[..., list]
NO_GRADIENT = "no gradient"   # for ops that have none (feed, fetch, comparisons, random)


@dataclass
class OpDef:
    type: str
    inputs: list[Slot]
    outputs: list[Slot]
    attrs: list[Attr] = field(default_factory=list)
    comment: str = ""
    infer_shape: Callable | None = None
    kernels: dict[str, Callable] = field(default_factory=dict)
    grad: "Grad | GradMaker | str | None" = None
    aliases: tuple[str, ...] = ()
    grad_of: str | None = None   # for a <type>_grad op: the forward op it differentiates
    # --- facts about the op that validation, the builders and the views read -------------
    # the kernel allocates a tensor from attributes: (shape attr, dtype attr), checked
    # before a run against the size limit (core/limits.py)
    allocates: tuple[str, str] | None = None
    # a check of the attributes together (``values``: name -> value, defaults filled in),
    # returning an error text or None, for what one Attr's check cannot see
    check_attrs: Callable[[dict], str | None] | None = None
    # the element type of Out when it is not X's (comparisons: "bool")
    out_dtype: str | None = None
    # Out = f(X) element by element (X -> Out of X's shape and dtype; its attributes, if
    # any, have defaults): the random programs of the property tests draw every such op
    unary: bool = False
    # a layer's ``act=`` may name it (one input X, one output Out, same shape)
    activation: bool = False
    # in a backward pass it moves gradients (seeds, zeros, sums) and differentiates no op
    grad_plumbing: bool = False
    # input slots that take a SelectedRows (core/selected_rows.py: an embedding's sparse
    # gradient): an optimizer's Grad, sum's X. Any other slot refuses one before the kernel
    # runs (core/runtime_shapes.py), naming the op and the slot.
    selected_rows: tuple[str, ...] = ()
    # its CPU kernels split their work across the cores (prange): a program holding one
    # runs its medium products on the calling thread (kernels/cpu/threads.py says why);
    # its gradient op inherits it
    uses_cores: bool = False
    # its kernel talks to parameter servers through the executor's transport (send, recv,
    # the barriers: ops/distributed.py): a run of a program holding one has effects outside
    # the scope, so Executor.run never retries it (no rewritten copy is run first)
    remote: bool = False
    # the attribute-tensor inputs (core/attr_tensors.py: Fluid's inputs that stand for
    # an attribute) whose value its kernels read in place of the attribute; any other one
    # given is refused (check_attr_tensors), never run on the attribute's value instead.
    # A <type>_grad op declared by a Grad reads those of its forward op's that it reads.
    reads_attr_tensors: tuple[str, ...] = ()
    # its lowered form for the block compiler (kernels/lowered.py): a function of what the
    # compiler learned of the op's operands returning an Elementwise, a Call or None (run
    # this op in the interpreter); None here: the op is never compiled
    lowered: Callable | None = None

    def __post_init__(self):
        self._attr_by_name = {a.name: a for a in self.attrs}
        self._input_by_name = {s.name: s for s in self.inputs}
        self._output_by_name = {s.name: s for s in self.outputs}

    def attr(self, name: str) -> Attr | None:
        return self._attr_by_name.get(name)

    def input(self, name: str) -> Slot | None:
        return self._input_by_name.get(name)

    def output(self, name: str) -> Slot | None:
        return self._output_by_name.get(name)

    def proto(self) -> OpProto:
        """This declaration as Paddle's OpProto message."""
        p = OpProto(type=self.type, comment=self.comment or self.type)
        for dst, slots in ((p.inputs, self.inputs), (p.outputs, self.outputs)):
            for s in slots:
                dst.add(name=s.name, comment=s.comment or s.name, duplicable=s.duplicable,
                        intermediate=s.intermediate, dispensable=s.dispensable)
        for a in self.attrs:
            p.attrs.add(name=a.name, type=a.type, comment=a.comment or a.name, extra=a.extra)
        return p

    def doc(self) -> str:
        """A docstring for the generated creator ``pd.op.<type>``."""
        lines = [self.comment or self.type, ""]
        for title, slots in (("Inputs", self.inputs), ("Outputs", self.outputs)):
            lines.append(f"{title}:")
            stands = {t.slot: t for t in attribute_tensors(self)} if title == "Inputs" else {}
            for s in slots:
                flags = [f for f, on in (("duplicable", s.duplicable), ("intermediate",
                         s.intermediate), ("dispensable", s.dispensable)) if on]
                extra = f" ({', '.join(flags)})" if flags else ""
                t = stands.get(s.name)
                if t is not None:       # said here, from the one table, not in each comment
                    extra += (f" [attribute {t.attr} as a tensor: " +
                              ("read at run time]" if s.name in self.reads_attr_tensors else
                               "refused, give the attribute]"))
                lines.append(f"    {s.name}{extra}: {s.comment}")
        if self.attrs:
            lines.append("Attributes:")
            for a in self.attrs:
                lines.append(f"    {a.name} ({A.TYPE_NAMES[a.type]}, default "
                             f"{A.format_value(a.default)}): {a.comment}")
        kernels = ", ".join(sorted(self.kernels)) or "none"
        if self.grad_of:
            gradient = f"this is the gradient of {self.grad_of}"
        elif self.grad in (None, NO_GRADIENT):
            gradient = "none"
        elif isinstance(self.grad, Grad):
            gradient = self.grad.op_type(self.type)
        else:     # a function making grad ops: its docstring says which
            doc = " ".join((getattr(self.grad, "__doc__", "") or "").split())
            gradient = f"built by a function ({doc})" if doc else "built by a function"
        lines.append(f"Kernels: {kernels}.  Gradient: {gradient}.")
        return "\n".join(lines)


_REGISTRY: dict[str, OpDef] = {}


def _declared() -> dict[str, OpDef]:
    """The registry with every op in it. The core imports no op module: the package that
    declares them is loaded through paddle_nb/lazy.py the first time anyone asks (a
    program that imports only ``paddle_nb.core.executor`` still finds every op)."""
    lazy.declare_ops()
    return _REGISTRY


def register(op: OpDef) -> OpDef:
    """Add an op declaration (and its ``<type>_grad`` op when ``op.grad`` is a Grad);
    registering one type twice is a mistake. Its shape rule gets the attribute-tensor
    check in front (check_attr_tensors), so the check runs wherever the rule runs: when
    the op is appended and, on the values, before its kernel."""
    registered = _declared()        # a user's op, registered before ours were: checked too
    for name in (op.type, *op.aliases):
        if name in registered:
            raise BuildError(f"op type {name!r} is registered twice")
    stands = {t.slot for t in attribute_tensors(op)}
    wrong = [s for s in op.reads_attr_tensors if s not in stands or op.input(s) is None]
    if wrong:
        raise BuildError(f"op {op.type} says it reads {wrong} as attribute tensors; its "
                         f"attribute tensors (attr_tensors.ATTRIBUTE_TENSORS) that are input "
                         f"slots are {sorted(s for s in stands if op.input(s))}")
    if stands and op.infer_shape is not None:
        op.infer_shape = _checking_attr_tensors(op, op.infer_shape)
    for name in (op.type, *op.aliases):
        _REGISTRY[name] = op
    if isinstance(op.grad, Grad):
        register(_grad_op_def(op))
    return op


def _grad_op_def(forward: OpDef) -> OpDef:
    """The ``<type>_grad`` op declared by a forward op's Grad: Fluid's slot names."""
    spec: Grad = forward.grad
    grads_of, writes = spec.resolve(forward)
    slots = {s.name: s for s in forward.inputs + forward.outputs}
    inputs = [Slot(name, slots[name].comment, duplicable=slots[name].duplicable,
                   dispensable=slots[name].dispensable or name in spec.optional)
              for name in spec.reads]
    inputs += [Slot(name + GRAD_SUFFIX, f"gradient of {name}",
                    duplicable=slots[name].duplicable) for name in grads_of]
    outputs = [Slot(name + GRAD_SUFFIX, f"gradient of {name}",
                    duplicable=slots[name].duplicable, dispensable=True) for name in writes]
    return OpDef(spec.op_type(forward.type), inputs, outputs, list(forward.attrs),
                 comment=spec.comment or f"The gradient of {forward.type}.",
                 infer_shape=spec.shape_rule(forward),
                 kernels=spec.kernels(), grad=NO_GRADIENT, grad_of=forward.type,
                 uses_cores=forward.uses_cores, lowered=spec.lowered,
                 reads_attr_tensors=tuple(s for s in forward.reads_attr_tensors
                                          if s in spec.reads))


def lookup(op_type: str) -> OpDef:
    """The declaration of ``op_type``; an unknown type names the closest registered ones."""
    op = _declared().get(op_type)
    if op is None:
        hint = did_you_mean(op_type, _REGISTRY, cutoff=0.5)
        raise UnknownOpError(f"unknown op type {op_type!r}{hint} "
                             f"({len(set(map(id, _REGISTRY.values())))} op types are registered: "
                             f"see paddle_nb.registered_ops())")
    return op


def is_registered(op_type: str) -> bool:
    return op_type in _declared()


def types_where(fact: str) -> list[str]:
    """The registered op types (aliases excluded) whose OpDef has ``fact`` set, sorted:
    ``types_where("activation")``."""
    return sorted({op.type for op in _declared().values() if getattr(op, fact)})


def registered_types(include_grad: bool = True) -> list[str]:
    """Every registered op type (aliases excluded), sorted; ``include_grad=False`` leaves
    out the ``<type>_grad`` ops declared by their forward ops."""
    return sorted({op.type for op in _REGISTRY.values()
                   if include_grad or op.grad_of is None})


def check_attr(op: OpDef, name: str, value) -> None:
    spec = op.attr(name)
    if spec is not None and spec.check is not None:
        problem = spec.check(value)
        if problem:
            raise BuildError(f"attribute {name}={value!r} of op {op.type}: {problem}")


def _checking_attr_tensors(op: OpDef, infer: Callable) -> Callable:
    def infer_shape(ctx):
        check_attr_tensors(ctx, op)
        infer(ctx)
    infer_shape.__name__ = getattr(infer, "__name__", "infer_shape")
    infer_shape.__doc__ = getattr(infer, "__doc__", None)
    return infer_shape
