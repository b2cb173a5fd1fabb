"""The coverage data, read: the JSON index (one row per Paddle API) and the arrays of the
APIs that built (``<api>/__program__`` the ProgramDesc bytes; ``<api>/feed/<var>``,
``<api>/param/<var>`` and ``<api>/fetch/<var>`` the feeds, the startup-initialised
parameters and what Paddle fetched: apart, as a fetched variable may also be fed).

A row's ``status`` says what the maker did with the API: ``built`` (a program was saved),
``skipped`` (out of scope: ``reason`` is one of SKIP_REASONS, ``detail`` says which part),
``host`` (Paddle builds no program for it: a base class, a numpy-side metric, a
dygraph-only function) or ``no_call`` (no call written yet; counted as not covered)."""
from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
INDEX_PATH = HERE / "paddle_2_6_2_apis.json"
ARRAYS_PATH = HERE / "paddle_2_6_2_apis.npz"
PROGRAM = "__program__"

# The only reasons an API may be left out of the measure.
SKIP_REASONS = ("distributed communication", "quantization", "sparse tensors",
                "detection/vision ops", "GPU- or cuDNN-only")
STATUSES = ("built", "skipped", "host", "no_call")


class ApiTable:
    """The index and, opened on first use, the arrays."""

    def __init__(self, index_path: Path = INDEX_PATH, arrays_path: Path = ARRAYS_PATH):
        with open(index_path) as f:
            data = json.load(f)
        self.paddle_version: str = data["paddle"]
        self.rows: dict[str, dict] = data["apis"]
        self._arrays_path = arrays_path

    @cached_property
    def arrays(self):
        return np.load(self._arrays_path, allow_pickle=False)

    def keys(self, module: str | None = None) -> list[str]:
        """API keys (``nn.ReLU``, ``F.relu``, ``tensor.math.add`` ...), optionally of one
        module, named by its Paddle name (``paddle.nn.functional``) or key prefix (``F``)."""
        if module is None:
            return list(self.rows)
        return [k for k, row in self.rows.items()
                if row["module"] == module or k.rsplit(".", 1)[0] == module]

    def find(self, name: str) -> list[str]:
        """The keys ``name`` means: a key itself, or every API with that bare name."""
        if name in self.rows:
            return [name]
        return [k for k, row in self.rows.items() if row["name"] == name]

    def program_bytes(self, key: str) -> bytes:
        return self.arrays[f"{key}/{PROGRAM}"].tobytes()

    def value(self, key: str, kind: str, name: str) -> np.ndarray:
        """An array of ``kind`` feed, param or fetch."""
        return self.arrays[f"{key}/{kind}/{name}"]

    def fetched_none(self, key: str, name: str) -> bool:
        """Paddle fetched None for ``name`` (stored as an object array): a variable that
        nothing wrote in Paddle's run either, such as the unfed data variable
        ``singular_values`` that ``paddle.linalg.lstsq`` returns for the 'gelsy' driver."""
        with self.arrays.zip.open(f"{key}/fetch/{name}.npy") as f:
            version = np.lib.format.read_magic(f)
            header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                      else np.lib.format.read_array_header_2_0)(f)
        return header[2].hasobject

    def fetched(self, key: str) -> list[str]:
        """The fetch list of ``key`` that Paddle fetched values for (fetched_none aside)."""
        return [n for n in self.rows[key]["fetch"] if not self.fetched_none(key, n)]


_TABLE: ApiTable | None = None


def load_table() -> ApiTable:
    """The package's table, read once per process."""
    global _TABLE
    if _TABLE is None:
        _TABLE = ApiTable()
    return _TABLE
