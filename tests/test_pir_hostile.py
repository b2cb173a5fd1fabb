"""Hostile PIR files: each is refused with an error that says what is wrong, and nothing else.

A ``model.json`` comes from anywhere (a download, a colleague, a fuzzer), so reading one must
end in a program or in a :class:`PirFormatError` (a ``ProgramFormatError``) naming the fault:
never a bare KeyError / IndexError / TypeError / RecursionError from deep inside the
translator, never a hang, never memory in proportion to what the file claims. Each case
below starts from a real file saved by paddlepaddle 3.3.1 (tests/fixtures/pir/) and breaks
one thing; the last tests break things at random.
"""
import copy
import json
import os
import random
import re
import time

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import limits
from paddle_nb.core.errors import IOFormatError, ProgramFormatError
from paddle_nb.io import files
from paddle_nb.io.pir import PirFormatError
from paddle_nb.io.pir import format as pir_format

PIR = os.path.join(os.path.dirname(__file__), "fixtures", "pir")
MODELS = ["mlp", "cnn", "lstm", "gru", "transformer", "if_layer", "while_cond"]
_DOCS = {m: json.load(open(os.path.join(PIR, m, "model.json"))) for m in MODELS}
T_BOOL = {"#": "0.t_dtensor", "D": [{"#": "0.t_bool"}, [1], "NCHW", [], 0]}


def _doc(model: str = "mlp") -> dict:
    return copy.deepcopy(_DOCS[model])


def _ops(doc: dict) -> list:
    """The ops of the program's top block."""
    return doc["program"]["regions"][0]["blocks"][0]["ops"]


def _op(doc: dict, name: str, nth: int = 0) -> dict:
    return [op for op in _ops(doc) if op["#"] == name][nth]


def _refused(data, *patterns) -> str:
    """The PirFormatError reading ``data`` (a dict is written as JSON first) raises; its
    message holds each regular expression of ``patterns``."""
    text = json.dumps(data) if isinstance(data, dict) else data
    with pytest.raises(PirFormatError) as caught:
        pd.io.program_from_pir(text)
    message = str(caught.value)
    for p in patterns:
        assert re.search(p, message), f"{p!r} not in: {message}"
    return message


def test_the_unbroken_fixtures_load():
    for model in MODELS:
        pd.io.program_from_pir(json.dumps(_doc(model)))


# --- the file: magic, version, size, encoding, JSON -----------------------------------------------
def test_another_magic_is_not_a_pir_program():
    doc = _doc()
    doc["base_code"]["magic"] = "pri"
    _refused(doc, r"not a PIR program: base_code.magic is 'pri', expected 'pir'")


@pytest.mark.parametrize("version", [0, 5, "4", None, 4.0, True, -1])
def test_a_version_not_supported_is_named_with_the_supported_ones(version):
    doc = _doc()
    doc["base_code"]["version"] = version
    _refused(doc, rf"PIR version {re.escape(repr(version))} is not one this "
                  rf"package reads", r"1 \(paddlepaddle 3.0\), 2 .*, 3 .*, 4 \(paddlepaddle 3.3\)")


def test_a_file_over_max_pir_bytes_is_refused_before_it_is_parsed(tmp_path, exe, monkeypatch):
    text = json.dumps(_doc())

    class NoParsing:
        @staticmethod
        def loads(*args, **kwargs):
            raise AssertionError("the file was parsed")

    monkeypatch.setattr(limits, "MAX_PIR_BYTES", len(text) - 1)
    with monkeypatch.context() as m:
        m.setattr(pir_format, "json", NoParsing)
        for data in (text, text.encode()):
            _refused(data, rf"\({len(text):,} bytes\), more than the limit "
                           r"paddle_nb.core.limits.MAX_PIR_BYTES", "nothing was parsed")
    # through load_inference_model: refused before the file is read at all
    (tmp_path / "model.json").write_text(text)
    (tmp_path / "model.pdiparams").write_bytes(
        open(os.path.join(PIR, "mlp", "model.pdiparams"), "rb").read())
    with monkeypatch.context() as m:
        m.setattr(files, "_read_at_most", lambda *a: pytest.fail("the file was read"))
        with pytest.raises(IOFormatError, match=r"model.json is .*MAX_PIR_BYTES"):
            pd.io.load_inference_model(str(tmp_path), exe, scope=pd.Scope())
    monkeypatch.setattr(limits, "MAX_PIR_BYTES", len(text))       # at the limit: read
    pd.io.load_inference_model(str(tmp_path), exe, scope=pd.Scope())


def test_text_that_is_not_utf8_or_not_json_or_truncated():
    text = json.dumps(_doc())
    _refused(b"\xff\xfe{}", r"byte 0 is not UTF-8")
    _refused(text.encode()[:-3] + b"\xc3", r"is not UTF-8")
    _refused("model.pdmodel", r"not JSON \(Expecting value at line 1, column 1\)")
    _refused("", r"not JSON")
    _refused(text[:len(text) // 2], r"not a PIR program: not JSON")
    _refused(b"\x0a\x08" + bytes(20), r"not JSON")          # a protobuf ProgramDesc
    _refused("[1, 2]", r"a PIR file is a JSON object .* this is a JSON list")
    _refused("null", r"this is a JSON NoneType")
    _refused(3, r"JSON text \(str or bytes\), got int")


def test_json_nested_100000_deep_is_refused_without_a_recursion_error():
    for deep in ("[" * 100_000 + "]" * 100_000, '{"a": ' * 100_000 + "1" + "}" * 100_000):
        _refused(deep, r"nests deeper than can be read")


def test_a_5000_digit_integer_is_refused_not_converted():
    text = json.dumps(_doc())
    for digits in ("9" * 5000, "-" + "1" * 5000):
        start = time.perf_counter()
        _refused(text.replace('"version": 4', f'"version": {digits}'),
                 r"an integer of 5,00[01] digits .*at most 64 bits")
        assert time.perf_counter() - start < 1


# --- structure: missing keys, wrong types ---------------------------------------------------------
def _without(doc: dict, path: tuple) -> dict:
    doc = copy.deepcopy(doc)
    node = doc
    for k in path[:-1]:
        node = node[k]
    del node[path[-1]]
    return doc


_TOP = ("program", "regions", 0, "blocks", 0)
MISSING = {        # the key taken away -> what the error says
    ("base_code",): r"a PIR file is a JSON object with \"base_code\" and \"program\"",
    ("program",): r"has no \"program\" object",
    ("program", "regions"): r"program.regions should hold one region",
    ("program", "regions", 0, "blocks"): r"program.regions\[0\] should hold one block",
    _TOP + ("ops",): r"program.regions\[0\].blocks\[0\] has no list of ops",
    _TOP + ("ops", 5, "O"): r"op 5 \(1.matmul\): \"O\" \(the results\) should be a list",
    _TOP + ("ops", 5, "O", 0, "TT"): r"op 5 \(1.matmul\) result 0: a type is",
    _TOP + ("ops", 3, "O"): r"op 3 \(p\): \"O\" \(the results\) should be a list",
    _TOP + ("ops", 3, "O", "%"): r"op 3 \(p\): result 0 should be \{\"%\": id",
    _TOP + ("ops", 3, "O", "TT"): r"op 3 \(p\) result 0: a type is",
    _TOP + ("ops", 5, "#"): r"op 5: an op is an object with \"#\"",
    _TOP + ("ops", 5, "I"): r"op 5 \(1.matmul\): 0 operands",
    _TOP + ("ops", 5, "I", 0, "%"): r"operand 0 should be \{\"%\": id\}",
    _TOP + ("ops", 3, "A"): r"a parameter op's \"A\" is \[..., name\]",
    _TOP + ("ops", 4, "A"): r"a data op names its input",
    _TOP + ("ops", 4, "A", 0, "AT"): r"attribute 'name': an attribute is",
}


@pytest.mark.parametrize("path", list(MISSING), ids=lambda p: ".".join(map(str, p)))
def test_a_missing_key_at_every_level_is_named(path):
    assert _ops(_doc())[5]["#"] == "1.matmul" and _ops(_doc())[3]["#"] == "p"
    _refused(_without(_doc(), path), MISSING[path])


def test_missing_regions_and_yields_in_control_flow():
    doc = _doc("if_layer")
    del _op(doc, "1.if")["regions"]
    _refused(doc, r"\(1.if\): an if has two regions \(true, false\), has none")
    doc = _doc("while_cond")
    del _op(doc, "1.while")["regions"][0]["blocks"][0]["args"]
    _refused(doc, r"\(1.while\): a while carries as many values as it has block arguments")


def _paths(node, prefix=()):
    """Every key path in a JSON document."""
    yield prefix
    items = node.items() if isinstance(node, dict) else \
        enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        yield from _paths(v, prefix + (k,))


def _replaced(doc, path, value):
    doc = copy.deepcopy(doc)
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


def _loads_or_says_why(text):
    """Reading ``text`` ends in a program or in one of paddle_nb's format errors with a
    message; anything else fails the test."""
    try:
        pd.io.program_from_pir(text)
    except (PirFormatError, ProgramFormatError, IOFormatError) as e:
        assert str(e).strip()
        return type(e)
    except Exception as e:          # noqa: BLE001 (that is the point of the test)
        pytest.fail(f"{type(e).__name__} ({e}) instead of a PirFormatError, from {text!r:.300}")
    return None


def test_a_wrong_type_in_every_field_of_the_mlp_is_a_format_error():
    """A string where a list is, a list where an object is, an object where a number is:
    every field of the MLP's file (some 450 paths), each replaced by each."""
    doc = _doc()
    paths = list(_paths(doc))[1:]
    refused = 0
    for path in paths:
        for value in ("x", [], {}):
            refused += _loads_or_says_why(json.dumps(_replaced(doc, path, value))) is not None
    assert len(paths) > 300 and refused > len(paths)


# --- values: order, definitions, cycles -----------------------------------------------------------
def test_a_value_used_before_it_is_defined_never_defined_or_defined_twice():
    doc = _doc()
    ops = _ops(doc)
    ops[4], ops[5] = ops[5], ops[4]                    # matmul before the data op it reads
    _refused(doc, r"op 4 \(1.matmul\): operand 0 reads value %5, which no op before it "
                  r"defines")
    doc = _doc()
    _ops(doc)[5]["I"][0]["%"] = 999
    _refused(doc, r"operand 0 reads value %999, which no op before it defines")
    doc = _doc()
    _ops(doc)[7]["O"][0]["%"] = 6                      # relu's result: matmul's id
    _refused(doc, r"op 7 \(1.relu\): result 0 defines value %6, which an op of block 0 "
                  r"defined already")
    doc = _doc()
    _ops(doc)[2]["A"][-1] = "linear_0.w_0"             # two parameters of one name
    _refused(doc, r"the parameter 'linear_0.w_0' is defined twice")


def test_a_cycle_an_op_reading_its_own_result_is_a_value_used_before_defined():
    doc = _doc()
    matmul = _ops(doc)[5]
    matmul["I"][0]["%"] = matmul["O"][0]["%"]
    _refused(doc, r"op 5 \(1.matmul\): operand 0 reads value %6, which no op before it "
                  r"defines")


def test_a_value_from_inside_a_region_is_not_seen_outside_it():
    doc = _doc("if_layer")
    inner = _op(doc, "1.if")["regions"][0]["blocks"][0]["ops"][0]["O"][0]["%"]
    _op(doc, "1.matmul")["I"][0]["%"] = inner
    _refused(doc, rf"reads value %{inner}, defined inside another region")


def test_ids_that_do_not_fit_32_bits_are_refused():
    doc = _doc()
    _ops(doc)[5]["O"][0]["%"] = 2 ** 40
    _refused(doc, r"result 0 should be .*a 32-bit id")


# --- ops, attributes, regions ---------------------------------------------------------------------
def test_an_unknown_dialect_or_op_is_named():
    for name, says in (("7.foo", r"'7.foo' is not an op this package reads \(dialect '7'"),
                       ("pd_op.matmul", r"dialect 'pd_op'"),
                       ("0.no_such_op", r"dialect '0'"),
                       ("1.no_such_op", r"the Paddle op 'no_such_op' has no Fluid counterpart "
                                        r"in paddle_nb/io/pir/op_table.py")):
        doc = _doc()
        _ops(doc)[5]["#"] = name
        _refused(doc, rf"op 5 \({re.escape(name)}\)", says)


def test_an_attribute_of_an_unknown_kind_or_a_wrong_value():
    doc = _doc()
    _ops(doc)[5]["A"] = [{"N": "transpose_x", "AT": {"#": "0.a_weird", "D": 1}}]
    _refused(doc, r"attribute 'transpose_x': the attribute kind '0.a_weird' is not one this "
                  r"package reads \(0.a_array, 0.a_bool")
    doc = _doc("if_layer")
    _op(doc, "1.full")["A"][2]["AT"]["D"] = "float128"
    _refused(doc, r"attribute 'dtype': expected a data type \(float32, .* or undefined\), got "
                  r"'float128'")
    doc = _doc("if_layer")
    _op(doc, "1.full")["A"][2]["AT"]["D"] = "undefined"
    _refused(doc, r"\(1.full\): a constant's dtype is undefined")
    doc = _doc()
    _ops(doc)[3]["OA"] = 5
    _refused(doc, r"a parameter op's \"OA\" is \[persistable, stop_gradient, trainable\]")


def test_a_yield_outside_a_region_or_not_last():
    doc = _doc()
    _ops(doc).append({"#": "2.yield", "I": []})
    _refused(doc, r"op 12 \(2.yield\): a yield ends the block of an if or while region; "
                  r"block 0 is not one")
    doc = _doc("if_layer")
    true_ops = _op(doc, "1.if")["regions"][0]["blocks"][0]["ops"]
    true_ops.insert(0, dict(true_ops[-1]))
    _refused(doc, r"a yield ends its block; here it is op 0 of")


def test_an_if_with_one_region_or_yields_that_do_not_match():
    doc = _doc("if_layer")
    _op(doc, "1.if")["regions"].pop()
    _refused(doc, r"\(1.if\): an if has two regions \(true, false\), has 1")
    doc = _doc("if_layer")
    _op(doc, "1.if")["regions"][1]["blocks"][0]["ops"][-1]["I"] = []
    _refused(doc, r"false region .*\(2.yield\): yields 0 values; the if has 1 results")


def test_a_while_whose_yields_do_not_match_or_whose_body_does_not_yield():
    doc = _doc("while_cond")
    _op(doc, "1.while")["regions"][0]["blocks"][0]["ops"][-1]["I"].pop()
    _refused(doc, r"\(2.yield\): a while body yields its condition and 2 values, yields 2")
    doc = _doc("while_cond")
    _op(doc, "1.while")["regions"][0]["blocks"][0]["ops"].pop()
    _refused(doc, r"\(1.while\) body \(block 1\): an if or while region's block ends with "
                  r"2.yield; this one does not")


def _nested_ifs(depth: int) -> dict:
    """A program of ``depth`` ifs, each in the true region of the one before."""
    block = {"args": [], "ops": [{"#": "2.yield", "I": []}]}
    for _ in range(depth):
        branch = {"#": "1.if", "I": [{"%": 1}], "O": [], "regions": [
            {"blocks": [block]}, {"blocks": [{"args": [], "ops": [{"#": "2.yield", "I": []}]}]}]}
        block = {"args": [], "ops": [branch, {"#": "2.yield", "I": []}]}
    data = {"#": "1.data", "A": [{"N": "name", "AT": {"#": "0.a_str", "D": "c"}}], "I": [],
            "O": [{"%": 1, "TT": T_BOOL}]}
    block["ops"] = [data, block["ops"][0]]
    return {"base_code": {"magic": "pir", "version": 4}, "program": {"regions": [
        {"blocks": [block]}]}}


def test_regions_nested_deeper_than_max_block_depth_are_refused(monkeypatch):
    program = pd.io.program_from_pir(json.dumps(_nested_ifs(3)))
    assert len(program.blocks) == 7                    # 3 ifs, two branches each
    limit = limits.MAX_BLOCK_DEPTH
    start = time.perf_counter()
    message = _refused(_nested_ifs(limit + 1), rf"regions nest {limit + 1} deep, more than "
                                               rf"the limit paddle_nb.core.limits."
                                               rf"MAX_BLOCK_DEPTH = {limit}")
    assert len(message) < 500 and time.perf_counter() - start < 5
    monkeypatch.setattr(limits, "MAX_BLOCK_DEPTH", 2)
    _refused(_nested_ifs(3), r"regions nest 3 deep, more than the limit .* = 2")


def test_huge_shapes_are_types_not_allocations():
    doc = _doc("if_layer")
    _op(doc, "1.full")["A"][0]["AT"]["D"] = [2 ** 31, 2 ** 31]   # a constant of 2^62 values
    pd.io.program_from_pir(json.dumps(doc))            # read: nothing is allocated yet
    doc = _doc()
    _ops(doc)[3]["O"]["TT"]["D"][1] = [2 ** 63, 1]
    _refused(doc, r"the dims \[9223372036854775808, 1\] should be a list of sizes")


# --- the parameters file --------------------------------------------------------------------------
def _model_dir(tmp_path, params: bytes | None = None):
    for name in ("model.json", "model.pdiparams"):
        (tmp_path / name).write_bytes(open(os.path.join(PIR, "mlp", name), "rb").read())
    if params is not None:
        (tmp_path / "model.pdiparams").write_bytes(params)
    return str(tmp_path)


def test_a_pdiparams_that_does_not_match_loads_nothing(tmp_path, exe):
    good = open(os.path.join(PIR, "mlp", "model.pdiparams"), "rb").read()
    tensors = pd.io.parse_tensors(good)
    wrong_shape = list(tensors)
    wrong_shape[0] = np.zeros((len(tensors[0]) + 1,), tensors[0].dtype)
    cases = {
        "too few": (b"".join(pd.io.serialize_tensor(t) for t in tensors[:-1]),
                    r"model.pdiparams"),
        "a wrong shape": (b"".join(pd.io.serialize_tensor(t) for t in wrong_shape),
                          r"shape|dims"),
        "truncated": (good[:-7], r"model.pdiparams"),
        "one too many": (good + pd.io.serialize_tensor(tensors[0]), r"model.pdiparams"),
    }
    for case, (params, says) in cases.items():
        folder = tmp_path / case.replace(" ", "_")
        folder.mkdir()
        scope = pd.Scope()
        with pytest.raises(IOFormatError, match=says):
            pd.io.load_inference_model(_model_dir(folder, params), exe, scope=scope)
        assert scope.local_var_names() == [], case        # nothing entered the scope


def test_a_broken_model_json_is_named_by_its_path_and_nothing_is_loaded(tmp_path, exe):
    doc = _doc()
    _ops(doc)[5]["#"] = "1.no_such_op"
    folder = _model_dir(tmp_path)
    (tmp_path / "model.json").write_text(json.dumps(doc))
    scope = pd.Scope()
    with pytest.raises(PirFormatError, match=rf"^{re.escape(folder)}/model.json:"
                                             rf" block 0 > op 5 \(1.no_such_op\)"):
        pd.io.load_inference_model(folder, exe, scope=scope)
    assert scope.local_var_names() == []


# --- random damage --------------------------------------------------------------------------------
_NASTY = ["x", "", [], {}, None, True, 0, -1, 1.5, 2 ** 31, 2 ** 63, [1], [[]], {"#": "x"},
          {"%": 3}, {"#": "0.t_dtensor", "D": []}, {"#": "1.a_scalar", "D": ["float32"]},
          "1.no_such_op", "2.yield", "p", -2 ** 40]


def _mutated(rng: random.Random, doc: dict) -> dict:
    """``doc`` with one to three random faults: a key dropped, a value replaced by a
    nasty one, an op duplicated, two ops swapped, an id moved by one."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        paths = list(_paths(doc))[1:]
        path = rng.choice(paths)
        node = doc
        for k in path[:-1]:
            node = node[k]
        key = path[-1]
        kind = rng.random()
        if kind < 0.3:
            del node[key]
        elif kind < 0.65:
            node[key] = copy.deepcopy(rng.choice(_NASTY))
        elif kind < 0.8 and isinstance(node, list) and node:
            j = rng.randrange(len(node))
            if rng.random() < 0.5:
                node.insert(j, copy.deepcopy(node[key]))
            else:
                node[key], node[j] = node[j], node[key]
        elif type(node[key]) is int:
            node[key] += rng.choice((-1, 1))
        else:
            node[key] = copy.deepcopy(rng.choice(_NASTY))
    return doc


def test_fuzz_random_damage_to_every_fixture_is_a_program_or_a_format_error():
    rng = random.Random(33)
    start, outcomes = time.perf_counter(), {}
    for case in range(1000):
        model = MODELS[case % len(MODELS)]
        text = json.dumps(_mutated(rng, _DOCS[model]))
        kind = _loads_or_says_why(text)
        outcomes[kind] = outcomes.get(kind, 0) + 1
    assert outcomes.get(PirFormatError, 0) > 500, outcomes     # most damage is caught
    assert time.perf_counter() - start < 30


def test_fuzz_random_bytes_flipped_in_the_text():
    rng = random.Random(3)
    text = json.dumps(_DOCS["while_cond"]).encode()
    for _ in range(150):
        data = bytearray(text)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        _loads_or_says_why(bytes(data))
