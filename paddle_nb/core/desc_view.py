"""What ``Variable`` and ``Operator`` are: a view of one protobuf message in a block.

The desc is the single source of truth, so a view holds nothing but the block it sits in
and the message; two views are equal when they show the same message, whichever object
was made to look at it.
"""
from __future__ import annotations


class DescView:
    __slots__ = ("block", "desc")

    def __init__(self, block, desc):
        self.block = block
        self.desc = desc

    @property
    def program(self):
        return self.block.program

    def __eq__(self, other):
        return isinstance(other, DescView) and other.desc is self.desc

    def __hash__(self):
        return id(self.desc)


def desc_flag(field: str, doc: str) -> property:
    """A boolean field of the desc as a property; setting it marks the block changed
    (prepared runs of it are rebuilt)."""
    def get(self) -> bool:
        return getattr(self.desc, field)

    def set_(self, value: bool) -> None:
        setattr(self.desc, field, bool(value))
        self.block.table.touch()
    return property(get, set_, doc=doc)
