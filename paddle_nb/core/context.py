"""The Framework design's execution Context: the scope, the places and whether we are training."""
from __future__ import annotations

from dataclasses import dataclass, field

from .place import CPUPlace
from .scope import Scope


@dataclass
class Context:
    scope: Scope
    places: list = field(default_factory=lambda: [CPUPlace()])
    training: bool = False

    @property
    def place(self):
        return self.places[0]

    def create_scope(self, name: str = "") -> Scope:
        return self.scope.new_scope(name)
