"""Places (the Framework design): where a kernel runs; ``kind`` picks the kernel from an
op's table."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CPUPlace:
    kind = "cpu"

    def __repr__(self):
        return "CPUPlace()"


@dataclass(frozen=True)
class CUDAPlace:
    device_id: int = 0
    kind = "cuda"

    def __repr__(self):
        return f"CUDAPlace({self.device_id})"


GPUPlace = CUDAPlace   # the Framework design's spelling


def is_place(obj) -> bool:
    return isinstance(obj, (CPUPlace, CUDAPlace))
