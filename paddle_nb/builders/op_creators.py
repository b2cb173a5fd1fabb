"""``pd.op.<type>(...)``: a creator for every registered op, generated from its OpProto.

``pd.op.elementwise_add(X=a, Y=b, axis=1)`` appends the op to the current block, declares
its outputs with unique names and returns them (one Variable, or a tuple in slot order).
``help(pd.op.mul)`` shows the op's slots and attributes.

Attribute values are checked by the registry against the OpProto when the op is appended
(``num="2"`` is refused there); a keyword that is neither a slot nor an attribute of the
op (a typo: ``x_num_col_dim``) is refused here, and so is an output count that is not a
count, before any output variable is made.
"""
from __future__ import annotations

from . import arg_checks as check
from ..core import registry, unique_name
from ..core.errors import BuildError
from ..core.operator import BOOKKEEPING_ATTRS
from ..core.program import default_main_program


def _output_count(builder, slot, attrs, given):
    """How many variables to make for a duplicable ``slot``: as many as ``given`` says (a
    count), or as split's ``sections`` / ``num`` ask for."""
    if slot.name in given:
        n = given[slot.name]
        return check.integer(builder, f"outputs[{slot.name!r}]", n, low=0) \
            if not isinstance(n, (list, tuple)) else len(n)
    if slot.duplicable:
        if attrs.get("sections"):
            sections = attrs["sections"]
            if not isinstance(sections, (list, tuple)):
                raise check.refuse(builder, "sections", "a list of sizes", sections)
            return len(sections)
        return check.integer(builder, "num", attrs.get("num") or 0, low=0) or 1
    return 1


def _check_names(builder, op_def, kwargs) -> None:
    """Every keyword is a slot or an attribute of the op (or Paddle's bookkeeping)."""
    slots = [s.name for s in op_def.inputs]
    attrs = [a.name for a in op_def.attrs]
    for key in kwargs:
        if key not in slots and key not in attrs and key not in BOOKKEEPING_ATTRS:
            raise BuildError(f"{builder}: no input slot or attribute {key!r}; input slots: "
                             f"{', '.join(slots) or 'none'}; attributes: "
                             f"{', '.join(attrs) or 'none'}")


def make_creator(op_type: str):
    op_def = registry.lookup(op_type)

    builder = f"pd.op.{op_type}"

    def create(outputs: dict | None = None, **kwargs):
        _check_names(builder, op_def, kwargs)
        if outputs is not None and not isinstance(outputs, dict):
            raise check.refuse(builder, "outputs", "a dict {slot: Variables or a count}",
                               outputs)
        slots = {s.name for s in op_def.inputs}
        inputs = {k: v for k, v in kwargs.items() if k in slots}
        attrs = {k: v for k, v in kwargs.items() if k not in slots}
        block = default_main_program().current_block()
        outputs = dict(outputs or {})
        prefix = unique_name.generate(op_type)
        first_in = next((v for v in inputs.values() if v is not None), None)
        first_in = first_in[0] if isinstance(first_in, (list, tuple)) else first_in
        dtype = getattr(first_in, "dtype", "float32")
        counts = {}           # every count is checked before the first variable is made
        for slot in op_def.outputs:
            given = outputs.get(slot.name)
            if given is None or check.is_int(given):
                counts[slot.name] = _output_count(builder, slot, attrs, outputs)
        made, new = {}, []
        for slot in op_def.outputs:
            given = outputs.get(slot.name)
            if slot.name not in counts:
                made[slot.name] = list(given) if isinstance(given, (list, tuple)) else [given]
                continue
            made[slot.name] = [block.create_var(unique_name.generate_within(prefix, "tmp"),
                                                dtype=dtype) for _ in range(counts[slot.name])]
            new += made[slot.name]
        try:
            block.append_op(op_type, inputs=inputs, outputs=made, attrs=attrs)
        except BaseException:
            for v in new:                 # the outputs made for the refused op go too
                block._remove_var(v.name)
            raise
        visible = [vs if s.duplicable else vs[0]
                   for s in op_def.outputs if not s.intermediate for vs in [made[s.name]]]
        return visible[0] if len(visible) == 1 else tuple(visible)

    create.__name__ = op_type
    create.__qualname__ = f"op.{op_type}"
    create.__doc__ = op_def.doc()
    return create


class OpCreators:
    """The ``pd.op`` namespace; attribute lookup makes (and caches) a creator."""

    def __getattr__(self, op_type: str):
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        try:
            creator = make_creator(op_type)
        except registry.UnknownOpError as e:
            raise AttributeError(str(e)) from None
        setattr(self, op_type, creator)
        return creator

    def __dir__(self):
        return registry.registered_types()

    def __repr__(self):
        return f"<pd.op: {len(registry.registered_types())} op creators>"


op = OpCreators()
__all__ = ["op", "make_creator", "BuildError"]
