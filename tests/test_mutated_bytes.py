"""Mutated program bytes (real Paddle fixtures and random programs, damaged by hypothesis)
either load, and the loaded program round-trips, or raise ProgramFormatError: never
another exception."""
from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

import paddle_nb as pd
from paddle_nb.core.errors import ProgramFormatError

from property_settings import DETERMINISTIC
from random_programs import programs

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
FIXTURE_PROGRAMS = ["paddle/mlp_infer.pdmodel", "paddle/ops_misc.pdesc",
                    "paddle_control_flow/cond.pdesc", "paddle_control_flow/recurrent.pdesc"]


def fixture_bytes(path: str) -> bytes:
    with open(os.path.join(FIXTURES, path), "rb") as f:
        return f.read()


mutation = st.tuples(st.sampled_from(["truncate", "flip", "insert", "delete", "set"]),
                     st.floats(0, 1), st.binary(min_size=1, max_size=4), st.integers(0, 7))


def mutate(data: bytes, mutations) -> bytes:
    b = bytearray(data)
    for kind, where, blob, bit in mutations:
        pos = min(int(where * len(b)), len(b))
        if kind == "truncate":
            del b[pos:]
        elif kind == "insert":
            b[pos:pos] = blob
        elif pos < len(b):
            if kind == "flip":
                b[pos] ^= 1 << bit
            elif kind == "delete":
                del b[pos:pos + len(blob)]
            else:
                b[pos] = blob[0]
    return bytes(b)


base_programs = st.one_of(st.sampled_from(FIXTURE_PROGRAMS).map(fixture_bytes),
                          programs(max_ops=4).map(lambda built: built.prog.to_bytes()))


@settings(max_examples=400, **DETERMINISTIC)
@given(base_programs, st.lists(mutation, min_size=1, max_size=3))
def test_mutated_bytes_load_and_round_trip_or_raise_program_format_error(data, mutations):
    bad = mutate(data, mutations)
    try:
        prog = pd.Program.from_bytes(bad)
    except Exception as e:     # noqa: BLE001 (the type is the property)
        assert type(e) is ProgramFormatError, f"{type(e).__name__}: {e}"
        return
    out = prog.to_bytes()
    again = pd.Program.from_bytes(out)
    assert again.to_bytes() == out
    assert again.to_code() == prog.to_code()


