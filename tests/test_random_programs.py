"""Random programs (tests/random_programs.py) round-trip through bytes and give what the
numpy interpreter gives, op by op and as a whole. The examples are derandomized (the same
ones every run); ``-m slow`` runs many more, randomized:
``python -m pytest -m slow tests/test_random_programs.py``."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paddle_nb as pd

from property_settings import DETERMINISTIC
from random_programs import NOT_GENERATED, OP_CHOICES, check_program, covered_op_types, programs

# How many examples: the whole file runs in well under a minute on two cores.
PROGRAM_EXAMPLES = int(os.environ.get("PADDLE_NB_PROPERTY_EXAMPLES", 300))


def test_builders_cover_the_registered_forward_ops():
    """Every registered forward op is generated, or listed as tested elsewhere."""
    registered = set(pd.registered_ops(include_grad=False))
    missing = registered - covered_op_types() - NOT_GENERATED
    assert not missing, f"ops the random programs never contain: {sorted(missing)}"
    assert covered_op_types() <= registered


@settings(max_examples=PROGRAM_EXAMPLES, **DETERMINISTIC)
@given(programs())
def test_random_programs_round_trip_and_match_numpy(built):
    check_program(built)


@pytest.mark.parametrize("op_type", [t for t, _ in OP_CHOICES])
@settings(max_examples=4, **DETERMINISTIC)
@given(data=st.data())
def test_each_op_type_in_random_programs(op_type, data):
    """Every op type the builders know, in a few random programs of its own (the big
    property above draws op types at random, so one of them could go missing)."""
    check_program(data.draw(programs(max_ops=3, first=op_type)))


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, database=None,
          suppress_health_check=DETERMINISTIC["suppress_health_check"])
@given(programs(max_ops=12))
def test_random_programs_many(built):
    check_program(built)


