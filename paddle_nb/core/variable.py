"""``Variable`` and ``Parameter``: views over a block's ``VarDesc`` message.

Nothing is stored on these objects but the block they belong to and the message they
show, so the ProgramDesc stays the one source of truth. Arithmetic operators (``+``,
``@``, ``>``...) are attached by :mod:`paddle_nb.layers.operators`, which builds ops for them.
"""
from __future__ import annotations

from . import dtypes
from .default_programs import default_main_program
from .desc_view import DescView, desc_flag
from .errors import BuildError
from .unique_name import generate
from .framework_pb2 import VarDesc, VarType
from .symbol_table import describe, tensor_desc


class Variable(DescView):
    __slots__ = ()

    def __init__(self, block=None, desc: VarDesc | None = None, *, shape=None,
                 dtype="float32", name: str | None = None):
        """A view of ``desc`` in ``block``; or, called as ``pd.Variable(shape=[20, 20])``
        (the design docs' form), a new variable declared in the current block (a value to feed)."""
        if desc is None:
            block = block if block is not None else default_main_program().current_block()
            desc = block.table.declare(name or generate("var"), shape=shape, dtype=dtype)
        super().__init__(block, desc)

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

    persistable = desc_flag("persistable", "Lives in the scope across runs (a parameter, an "
                            "optimizer's accumulator).")
    stop_gradient = desc_flag("stop_gradient", "No gradient flows back through it.")

    @property
    def is_parameter(self) -> bool:
        return self.desc.is_parameter

    @property
    def lod_level(self) -> int:
        return self.desc.type.lod_tensor.lod_level if self.type == VarType.LOD_TENSOR else 0

    def set_shape(self, shape) -> None:
        t = tensor_desc(self.desc)
        del t.dims[:]
        t.dims.extend(int(d) for d in shape)
        self.block.table.touch()

    def __repr__(self):
        flags = [f for f, on in (("persistable", self.persistable),
                                 ("param", self.is_parameter),
                                 ("stop_gradient", self.stop_gradient)) if on]
        extra = f" ({', '.join(flags)})" if flags else ""
        return f"var {self.name} : {describe(self.desc)}{extra}"


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
