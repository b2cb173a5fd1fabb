"""``Variable`` and ``Parameter``: views over a block's ``VarDesc`` message.

Nothing is stored on these objects but the block they belong to and the message they
show, so the ProgramDesc stays the one source of truth. Arithmetic operators (``+``,
``@``, ``>``...) are attached by :mod:`paddle_nb.math_ops`, which builds ops for them.
"""
from __future__ import annotations

from . import dtypes
from .framework_pb2 import VarDesc, VarType
from .symbol_table import describe, tensor_desc


class Variable:
    __slots__ = ("block", "desc")

    def __init__(self, block=None, desc: VarDesc | None = None, *, shape=None,
                 dtype="float32", name: str | None = None):
        """A view of ``desc`` in ``block``; or, called as ``pd.Variable(shape=[20, 20])``
        (the design docs' form), a new variable declared in the current block (a value to feed)."""
        if desc is None:
            from .program import default_main_program   # noqa: PLC0415 (program -> variable)
            from .unique_name import generate            # noqa: PLC0415
            block = block if block is not None else default_main_program().current_block()
            desc = block.table.declare(name or generate("var"), shape=shape, dtype=dtype)
        self.block = block
        self.desc = desc

    # --- what the VarDesc says ---------------------------------------------------
    @property
    def name(self) -> str:
        return self.desc.name

    @property
    def shape(self) -> tuple[int, ...]:
        t = tensor_desc(self.desc)
        return tuple(t.dims) if t is not None else ()

    @property
    def dtype(self) -> str:
        """The element type's name, e.g. ``'float32'``."""
        t = tensor_desc(self.desc)
        return dtypes.name(t.data_type) if t is not None else "none"

    @property
    def type(self) -> int:
        return self.desc.type.type

    @property
    def persistable(self) -> bool:
        return self.desc.persistable

    @persistable.setter
    def persistable(self, value: bool):
        self.desc.persistable = bool(value)
        self.block.table.touch()

    @property
    def stop_gradient(self) -> bool:
        return self.desc.stop_gradient

    @stop_gradient.setter
    def stop_gradient(self, value: bool):
        self.desc.stop_gradient = bool(value)
        self.block.table.touch()

    @property
    def is_parameter(self) -> bool:
        return self.desc.is_parameter

    @property
    def lod_level(self) -> int:
        return self.desc.type.lod_tensor.lod_level if self.type == VarType.LOD_TENSOR else 0

    @property
    def program(self):
        return self.block.program

    def set_shape(self, shape) -> None:
        t = tensor_desc(self.desc)
        del t.dims[:]
        t.dims.extend(int(d) for d in shape)
        self.block.table.touch()

    def set_dtype(self, dtype) -> None:
        tensor_desc(self.desc).data_type = dtypes.to_code(dtype)
        self.block.table.touch()

    def __eq__(self, other):
        return isinstance(other, Variable) and other.desc is self.desc

    def __hash__(self):
        return id(self.desc)

    def __repr__(self):
        flags = [f for f, on in (("persistable", self.persistable),
                                 ("param", self.is_parameter),
                                 ("stop_gradient", self.stop_gradient)) if on]
        extra = f" ({', '.join(flags)})" if flags else ""
        return f"var {self.name} : {describe(self.desc)}{extra}"

    def to_string(self) -> str:
        return repr(self)


class Parameter(Variable):
    """A persistable, trainable variable whose value the startup program initialises."""
    __slots__ = ()

    @property
    def trainable(self) -> bool:
        return not self.desc.stop_gradient

    @trainable.setter
    def trainable(self, value: bool):
        self.stop_gradient = not value

    # the Framework design: "estimated" = updated by the backward algorithm
    estimated = trainable


def var_names(items, what: str = "variables") -> list[str]:
    """The names of ``items``: a Variable, a name, or a list of them (API arguments such
    as fetch lists, prune targets and feed names accept either)."""
    from .errors import BuildError   # noqa: PLC0415
    items = [items] if isinstance(items, (str, Variable)) else list(items or ())
    names = []
    for item in items:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if not isinstance(name, str):
            raise BuildError(f"{what} are Variables or names, got {item!r}")
        names.append(name)
    return names


def view(block, desc: VarDesc) -> Variable:
    return (Parameter if desc.is_parameter else Variable)(block, desc)
