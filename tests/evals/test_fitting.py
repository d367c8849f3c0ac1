"""The generated tool-fit suite (``lar.evals.fitting``): deterministic for a seed, every case a
valid line of the tool-calling suite format (loaded by the real loader), every kind in every
language, each expected call groundable in the request (its numbers and names stand there as
written) and each computed result re-derived here by its own formula."""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lar.evals import fitting
from lar.evals.draws import LANGUAGES, part_of
from lar.evals.draws.reckoning import UNIT_NAMES
from lar.evals.fitting import KINDS, cases, main
from lar.evals.fitting_phrases import PHRASES
from lar.evals.toolcalls import load_suite, score_case

SEEDS = (0, 7, 1234, 9999)  # dev seeds only
ID = re.compile(r"fit(\d+)-([a-z]{2})-([a-z]+)-(\d+)")
# the request's words for each unit the conversion tool's enum names (the draws' own names)
UNIT_KEY = {"kilometers": "km", "miles": "mi", "kilograms": "kg", "pounds": "lb",
            "celsius": "c", "fahrenheit": "f"}  # fmt: skip
MILE_KM, POUND_KG = 1.609344, 0.45359237


def _euclid(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def _convert(value: float, src: str, dst: str) -> float:
    to_base = {"kilometers": 1.0, "miles": MILE_KM, "kilograms": 1.0, "pounds": POUND_KG}
    if src == "celsius":
        return value * 1.8 + 32
    if src == "fahrenheit":
        return (value - 32) / 1.8
    return value * to_base[src] / to_base[dst]


def _written(number: int | float) -> re.Pattern[str]:
    """The number as the request must write it: with a point, not a part of a longer number."""
    return re.compile(rf"(?<![\d.]){re.escape(str(number))}(?!\d|\.\d)")


def _parts(case: dict[str, Any]) -> tuple[str, str]:
    """A case's language and kind, from its id."""
    match = ID.fullmatch(case["id"])
    assert match, case["id"]
    return match[2], match[3]


def _call(case: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (call,) = case["expect"]["calls"]
    return call["name"], call["arguments"]


@pytest.fixture(scope="module")
def drawn() -> list[dict[str, Any]]:
    return [c for seed in SEEDS for c in cases(seed, per_language=20)]


def test_same_seed_same_cases_another_seed_others() -> None:
    assert cases(7) == cases(7)
    assert json.dumps(cases(7)) == json.dumps(cases(7))
    other = cases(8)
    assert [c["question"] for c in other] != [c["question"] for c in cases(7)]
    # a language's cases depend on the seed and the language only
    assert cases(7, languages=("de", "zh")) == [c for c in cases(7) if c["id"].split("-")[1]
                                                 in ("de", "zh")]  # fmt: skip


def test_every_case_loads_with_the_suite_loader(
    drawn: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "fits.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in drawn), "utf-8")
    loaded = load_suite(path)
    assert [c.id for c in loaded] == [c["id"] for c in drawn]
    for case, raw in zip(loaded, drawn, strict=True):
        assert case.category == "single"
        assert case.question == raw["question"]
        assert case.expect == raw["expect"]
        assert set(case.expect) == {"calls"}


def test_every_language_and_kind_in_a_draw_of_twenty() -> None:
    made = cases(3, per_language=20)
    assert len(made) == 20 * len(LANGUAGES)
    seen = Counter()
    for case in made:
        match = ID.fullmatch(case["id"])
        assert match, case["id"]
        assert match[1] == "3"
        seen[match[2], match[3]] += 1
    assert {lang for lang, _ in seen} == set(LANGUAGES)
    assert {kind for _, kind in seen} == set(KINDS)
    assert set(seen.values()) == {20 // len(KINDS)}
    groups = {KINDS[kind].group for kind in KINDS}
    assert groups == {"math", "science", "units", "lookups"}


def test_ids_unique(drawn: list[dict[str, Any]]) -> None:
    ids = [c["id"] for c in drawn]
    assert len(ids) == len(set(ids))


def test_offered_tools_hold_the_fitting_one_and_distinct_others(
    drawn: list[dict[str, Any]],
) -> None:
    sizes = Counter()
    for case in drawn:
        name, _ = _call(case)
        names = [t["name"] for t in case["tools"]]
        sizes[len(names)] += 1
        assert 2 <= len(names) <= 4, case["id"]
        assert len(set(names)) == len(names), case["id"]
        assert names.count(name) == 1, case["id"]
        _, kind = _parts(case)
        assert name == KINDS[kind].tool["name"]
        assert set(case["results"]) == set(names), case["id"]
        for tool in case["tools"]:
            assert tool["description"].strip()
            assert tool["parameters"]["type"] == "object"
            assert set(tool["parameters"]["required"]) <= set(tool["parameters"]["properties"])
    assert set(sizes) == {2, 3, 4}  # every size drawn
    # the fitting tool is not always first
    assert len({[t["name"] for t in c["tools"]].index(_call(c)[0]) for c in drawn}) > 1


def test_expected_arguments_stand_in_the_request(drawn: list[dict[str, Any]]) -> None:
    for case in drawn:
        name, arguments = _call(case)
        lang, _ = _parts(case)
        schema = next(t for t in case["tools"] if t["name"] == name)["parameters"]
        assert set(arguments) == set(schema["required"]), case["id"]
        question = case["question"]
        assert "{" not in question and "}" not in question
        for key, value in arguments.items():
            prop = schema["properties"][key]
            if isinstance(value, bool):
                raise AssertionError(f"{case['id']}: a boolean argument")
            if isinstance(value, int | float):
                assert _written(value).search(question), (case["id"], key, value, question)
                assert prop["type"] in ("number", "integer")
                if prop["type"] == "integer":
                    assert isinstance(value, int)
            elif "enum" in prop:
                assert value in prop["enum"], case["id"]
                word = UNIT_NAMES[lang][UNIT_KEY[value]]
                assert word in question, (case["id"], word, question)
            else:
                assert isinstance(value, str) and value, case["id"]
                assert value in question, (case["id"], value, question)
        if name == "convert_units":
            assert arguments["from_unit"] != arguments["to_unit"]


def test_computed_results_follow_their_formulas(drawn: list[dict[str, Any]]) -> None:
    checked = Counter()
    for case in drawn:
        name, a = _call(case)
        got = case["results"][name]
        checked[name] += 1
        if name == "hypotenuse":
            assert math.isclose(got["hypotenuse"], math.sqrt(a["a"] ** 2 + a["b"] ** 2),
                                abs_tol=1e-4)  # fmt: skip
            assert got["hypotenuse"] > max(a["a"], a["b"])
        elif name == "circle_area":
            assert math.isclose(got["area"], 3.141592653589793 * a["radius"] ** 2, abs_tol=1e-4)
        elif name == "compound_interest":
            amount = a["principal"] * (1 + a["rate_percent"] / 100) ** a["years"]
            assert math.isclose(got["final_amount"], amount, abs_tol=0.005)
            assert math.isclose(got["interest"], amount - a["principal"], abs_tol=0.01)
        elif name == "greatest_common_divisor":
            assert got["gcd"] == _euclid(a["a"], a["b"]) > 1
            assert a["a"] % got["gcd"] == 0 and a["b"] % got["gcd"] == 0
        elif name == "kinetic_energy":
            assert math.isclose(got["joules"], a["mass_kg"] * a["velocity_m_s"] ** 2 / 2,
                                abs_tol=1e-4)  # fmt: skip
        elif name == "density":
            assert math.isclose(got["density_g_cm3"], a["mass_g"] / a["volume_cm3"], abs_tol=1e-4)
        elif name == "convert_units":
            want = _convert(a["value"], a["from_unit"], a["to_unit"])
            assert math.isclose(got["value"], want, abs_tol=0.005), case["id"]
            assert got["unit"] == a["to_unit"]
        elif name == "element_atomic_number":
            assert got["element"] == a["element"] and 1 <= got["atomic_number"] <= 118
        else:
            assert got["country"] == a["country"]
            assert got.get("capital") or got.get("population", 0) > 1_000_000
    assert len(checked) == len(KINDS)


def test_the_expected_call_passes_and_prose_or_a_distractor_fails(
    drawn: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "fits.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in drawn[:60]), "utf-8")
    for case in load_suite(path):
        name, arguments = _call({"expect": case.expect})
        assert score_case(case, [(name, dict(arguments))], "done") == (True, "ok")
        assert not score_case(case, [], "Worked out by hand: 42.")[0]
        other = next(t["name"] for t in case.tools if t["name"] != name)
        assert not score_case(case, [(other, dict(arguments))], "")[0]


def test_phrasing_covers_every_kind_in_every_language() -> None:
    assert set(PHRASES) == set(LANGUAGES)
    for lang in LANGUAGES:
        assert set(PHRASES[lang]) == set(KINDS), lang
        for kind, templates in PHRASES[lang].items():
            assert len(templates) >= 2, (lang, kind)
            assert len(set(templates)) == len(templates)
            for template in templates:
                names = {n for _, n, _, _ in string.Formatter().parse(template) if n}
                assert names, (lang, kind, template)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="no phrasing"):
        cases(7, languages=("xx",))
    with pytest.raises(ValueError, match="at least 1"):
        cases(7, per_language=0)


def test_main_writes_a_suite_and_names_the_seed_part(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["--seed", "7", "--per-language", "2", "--languages", "en,zh"]) == 0
    out, err = capsys.readouterr()
    path = tmp_path / "out.jsonl"
    path.write_text(out, "utf-8")
    loaded = load_suite(path)
    want = cases(7, per_language=2, languages=("en", "zh"))
    assert [c.id for c in loaded] == [c["id"] for c in want]
    assert "dev" in err and "4 cases" in err


def test_main_says_test_for_a_test_seed_and_refuses_others(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert part_of(12345) == "test"
    # the test part's cases are not drawn here: only the label is checked
    monkeypatch.setattr(fitting, "cases", lambda *args, **kwargs: [])
    assert main(["--seed", "12345"]) == 0
    assert "test" in capsys.readouterr().err
    for seed in ("20000", "-1"):
        with pytest.raises(ValueError, match="neither"):
            main(["--seed", seed])


def test_help_explains(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "--seed" in text and "--per-language" in text and "10000-19999" in text
