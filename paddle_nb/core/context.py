"""The Framework design's execution Context: the scope and the places a program runs with.

Its ``training`` field is kept for programs that set it, but it is deprecated and does
nothing: no kernel ever read it. Whether an op trains is an attribute of the op, as in
Paddle (dropout's and batch_norm's ``is_test``, set by ``Program.clone(for_test=True)``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from .place import CPUPlace
from .scope import Scope


@dataclass
class Context:
    scope: Scope
    places: list = field(default_factory=lambda: [CPUPlace()])
    training: bool | None = None      # deprecated: see the module docstring

    def __post_init__(self):
        if self.training is not None:
            warnings.warn("pd.Context(training=...) has no effect and will be removed: ops "
                          "take their mode from attributes (dropout's and batch_norm's "
                          "is_test; Program.clone(for_test=True) sets them)",
                          DeprecationWarning, stacklevel=3)

    @property
    def place(self):
        return self.places[0]

    def create_scope(self, name: str = "") -> Scope:
        return self.scope.new_scope(name)
