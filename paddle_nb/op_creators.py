"""``pd.op.<type>(...)``: a creator for every registered op, generated from its OpProto.

``pd.op.elementwise_add(X=a, Y=b, axis=1)`` appends the op to the current block, declares
its outputs with unique names and returns them (one Variable, or a tuple in slot order).
``help(pd.op.mul)`` shows the op's slots and attributes.
"""
from __future__ import annotations

from .core import registry, unique_name
from .core.errors import BuildError
from .core.program import default_main_program


def _output_count(op_def, slot, attrs, given):
    if slot.name in given:
        n = given[slot.name]
        return n if isinstance(n, int) else len(n)
    if slot.duplicable:
        if attrs.get("sections"):
            return len(attrs["sections"])
        return int(attrs.get("num") or 1)
    return 1


def make_creator(op_type: str):
    op_def = registry.lookup(op_type)

    def create(outputs: dict | None = None, **kwargs):
        slots = {s.name for s in op_def.inputs}
        inputs = {k: v for k, v in kwargs.items() if k in slots}
        attrs = {k: v for k, v in kwargs.items() if k not in slots}
        block = default_main_program().current_block()
        outputs = dict(outputs or {})
        prefix = unique_name.generate(op_type)
        first_in = next((v for v in inputs.values() if v is not None), None)
        first_in = first_in[0] if isinstance(first_in, (list, tuple)) else first_in
        dtype = getattr(first_in, "dtype", "float32")
        made = {}
        for slot in op_def.outputs:
            given = outputs.get(slot.name)
            if given is not None and not isinstance(given, int):
                made[slot.name] = list(given) if isinstance(given, (list, tuple)) else [given]
                continue
            n = _output_count(op_def, slot, attrs, outputs)
            made[slot.name] = [block.create_var(unique_name.generate_within(prefix, "tmp"),
                                                dtype=dtype) for _ in range(n)]
        block.append_op(op_type, inputs=inputs, outputs=made, attrs=attrs)
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
