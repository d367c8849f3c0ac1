"""Draws of everyday tasks: deterministic for a seed, every family in every language, saved and
read back whole, and each truth re-derived here from the generated files by other means (the
request is read back through its template; the answer is recomputed with ``Fraction``, ``csv``,
``json`` and day ordinals), then put to the scorer in each locale's way of writing numbers.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import string
import tempfile
from collections import Counter
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from fractions import Fraction
from pathlib import Path, PurePosixPath

import dateparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lar.evals.draws import FAMILIES, LANGUAGES, draw, to_yaml
from lar.evals.draws.files import FILE_FACTS, FOLDER_FACTS
from lar.evals.draws.live import LIVE_DATA
from lar.evals.draws.locale import CANNOT, NAMES, QUOTES, WEEKDAYS, WORDS, Templates, long_date
from lar.evals.draws.pages import PAGES
from lar.evals.draws.reckoning import ARITHMETIC, DATES, UNIT_NAMES, UNITS
from lar.evals.draws.records import EDITS, TABLES
from lar.evals.everyday import SuiteError, Task, load_tasks, score

TEMPLATES: dict[str, Templates] = {
    "file_facts": FILE_FACTS, "folders": FOLDER_FACTS, "tables": TABLES, "edits": EDITS,
    "arithmetic": ARITHMETIC, "units": UNITS, "dates": DATES, "live_data": LIVE_DATA,
    "web_page": PAGES,
}  # fmt: skip
COMMA = {"pt", "es", "de", "fr"}  # languages that write a decimal comma
ENGLISH_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
SAYS = {
    "en": "The answer is {}.", "pt": "A resposta é {}.", "es": "La respuesta es {}.",
    "de": "Die Antwort ist {}.", "fr": "La réponse est {} !", "zh": "答案是{}。",
}  # fmt: skip
HONEST = {
    "en": "Sorry, I can't check live data from here.", "pt": "Desculpe, não consigo ver isso.",
    "es": "Lo siento, no puedo consultarlo.", "de": "Das kann ich nicht nachsehen.",
    "fr": "Désolé, je ne peux pas le savoir.", "zh": "抱歉，我无法获取实时数据。",
}  # fmt: skip
SEEDS = st.integers(min_value=0, max_value=2**40)
TRUTHS = settings(derandomize=True, max_examples=25, deadline=None)

# A field's shape where the request is read back; anything else is matched lazily.
NUMBER = r"\d(?:[\d., ]*\d)?"
FIELD = {"value": NUMBER, "p": NUMBER, "n": NUMBER, "total": NUMBER, "threshold": NUMBER,
         "people": r"\d+", "tip": r"\d+", "file": r"[A-Za-z0-9_.-]+", "new": r"[A-Za-z0-9_.-]+",
         "ext": r"\.[a-z]+", "folder": r"[a-z]+", "url": r"\{base\}/[a-z]+\.html"}  # fmt: skip


def read_back(task: Task) -> tuple[str, dict[str, str]]:
    """The kind of question and the values a request was filled with, from its template."""
    kind, fields, _ = phrasing(task)
    return kind, fields


def phrasing(task: Task) -> tuple[str, dict[str, str], str]:
    """The kind of question, the values it was filled with and the template that phrased it."""
    found = {}
    lq, rq = QUOTES[task.language]
    for kind, templates in TEMPLATES[task.category][task.language].items():
        for template in templates:
            pattern = ""
            for literal, name, _, _ in string.Formatter().parse(template.replace("{lq}", lq)
                                                                 .replace("{rq}", rq)):  # fmt: skip
                pattern += re.escape(literal)
                if name:
                    pattern += f"(?P<{name}>{FIELD.get(name, '.+?')})"
            match = re.fullmatch(pattern, task.request)
            if match:
                found[kind] = (match.groupdict(), template)
    assert len(found) == 1, f"{task.request!r} reads as {sorted(found)}"
    kind, (fields, template) = next(iter(found.items()))
    return kind, fields, template


def number(text: str, lang: str) -> Fraction:
    if lang in COMMA:
        return Fraction(re.sub(r"[. ]", "", text).replace(",", "."))
    return Fraction(text.replace(",", ""))


def cents(value: Fraction, places: int = 2) -> str:
    """A non-negative value rounded half up, trailing zeros dropped (but one, where rounding
    made a whole number of one that is not)."""
    scaled = int(value * 10**places + Fraction(1, 2))
    whole, frac = divmod(scaled, 10**places)
    text = f"{whole}.{frac:0{places}d}".rstrip("0")
    return text + "0" if value.denominator != 1 and text.endswith(".") else text.rstrip(".")


def options(task: Task) -> list[str]:
    wanted = task.expect["has"][0]
    return wanted if isinstance(wanted, list) else [wanted]


def spelled_date(text: str, lang: str) -> date:
    """A date as the request spells it, read by dateparser (not by the generator's tables)."""
    found = dateparser.parse(text, languages=[lang], settings={"STRICT_PARSING": True})
    assert found is not None, (text, lang)
    return found.date()


def truth_of_file(task: Task, kind: str, fields: dict[str, str]) -> Fraction:
    content = task.files[fields["file"]]
    if kind == "lines":
        return Fraction(len(io.StringIO(content).readlines()))
    if kind == "words":
        return Fraction(len(re.findall(r"\S+", content)))
    if kind == "line_of":
        lines = [n for n, line in enumerate(content.splitlines(), 1)
                 if fields["name"].casefold() in line.casefold()]  # fmt: skip
        assert len(lines) == 1
        return Fraction(lines[0])
    values = [Fraction(v) for v in content.split()]
    return {"sum": sum(values, Fraction(0)), "max": max(values), "min": min(values)}[kind]


def sizes(task: Task) -> dict[PurePosixPath, int]:
    return {PurePosixPath(p): len(c.encode("utf-8")) for p, c in task.files.items()}


def truth_of_folder(task: Task, kind: str, fields: dict[str, str]) -> Fraction:
    found = sizes(task)
    if kind == "count_top":
        scope = [p for p in found if p.parent == PurePosixPath(".")]
    elif kind == "count_in":
        scope = [p for p in found if str(p).startswith(fields["folder"] + "/")]
    else:
        scope = list(found)
    chosen = [p for p in scope if p.name.endswith(fields["ext"])]
    assert chosen
    return Fraction(sum(found[p] for p in chosen) if kind == "size_total" else len(chosen))


def truth_of_table(task: Task, kind: str, fields: dict[str, str]) -> Fraction:
    content = task.files[fields["file"]]
    if fields["file"].endswith(".json"):
        rows = [[str(v) for v in item.values()] for item in json.loads(content)]
    else:
        rows = list(csv.reader(io.StringIO(content)))[1:]
    amounts = [Fraction(amount) for _, _, amount in rows]
    if kind == "lookup":
        (amount,) = [Fraction(a) for who, _, a in rows if who == fields["name"]]
        return amount
    if kind == "over":
        threshold = number(fields["threshold"], task.language)
        assert threshold not in amounts
        return Fraction(sum(1 for a in amounts if a > threshold))
    group = [Fraction(a) for _, kind_, a in rows if kind_ == fields["category"]]
    return sum(group, Fraction(0)) if kind == "total" else Fraction(len(group))


def truth_of_sum(task: Task, kind: str, fields: dict[str, str]) -> Fraction:
    lang = task.language
    if kind == "percent":
        return number(fields["p"], lang) * number(fields["n"], lang) / 100
    if kind == "average":
        values = [int(v) for v in re.findall(r"\d+", fields["numbers"])]
        return Fraction(sum(values), len(values))
    tip = int(fields["tip"]) if kind == "split_tip" else 0
    return number(fields["total"], lang) * (100 + tip) / 100 / int(fields["people"])


MILE, POUND = Fraction("1.609344"), Fraction("0.45359237")
CONVERT: dict[tuple[str, str], Callable[[Fraction], Fraction]] = {
    ("km", "mi"): lambda v: v / MILE, ("mi", "km"): lambda v: v * MILE,
    ("kg", "lb"): lambda v: v / POUND, ("lb", "kg"): lambda v: v * POUND,
    ("c", "f"): lambda v: v * Fraction(9, 5) + 32, ("f", "c"): lambda v: (v - 32) * Fraction(5, 9),
}  # fmt: skip


def truth_of_units(task: Task, kind: str, fields: dict[str, str]) -> Fraction:
    unit = {name: key for key, name in UNIT_NAMES[task.language].items()}
    value = number(fields["value"], task.language)
    return CONVERT[unit[fields["src"]], unit[fields["dst"]]](value)


def truth_of_dates(task: Task, kind: str, fields: dict[str, str]) -> Fraction:
    lang = task.language
    first = spelled_date(fields["d1"], lang).toordinal()
    return Fraction(spelled_date(fields["d2"], lang).toordinal() - first)


TRUTH = {
    "file_facts": truth_of_file, "folders": truth_of_folder, "tables": truth_of_table,
    "arithmetic": truth_of_sum, "units": truth_of_units, "dates": truth_of_dates,
}  # fmt: skip


def styles(value: Fraction, lang: str) -> list[str]:
    """The ways a person writing ``lang`` (or English) may write a value."""
    whole, _, frac = cents(value).partition(".")
    grouped = f"{int(whole):,}"
    point = [whole + ("." + frac if frac else ""), grouped + ("." + frac if frac else "")]
    if lang not in COMMA:
        return point
    tail = "," + frac if frac else ""
    seps = (".", " ", "\u00a0", "\u202f")
    return point + [whole + tail] + [grouped.replace(",", sep) + tail for sep in seps]


def passes(task: Task, answer: str) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        return score(task, answer, {}, Path(tmp)) == []


def says(task: Task, text: str) -> str:
    return SAYS[task.language].format(text)


def check_figure(task: Task, truth: Fraction, *, places: tuple[int, ...] = (2,)) -> None:
    for n in places:
        assert cents(truth, n) in options(task), (task.request, truth, options(task))
    for way in styles(truth, task.language):
        assert passes(task, says(task, way)), (task.request, way, options(task))
    for way in styles(truth + 1, task.language):
        assert not passes(task, says(task, way)), (task.request, way, options(task))
    if task.language not in COMMA and truth.denominator != 1 and "." in cents(truth):
        assert not passes(task, says(task, cents(truth).replace(".", ",")))


@pytest.mark.parametrize("family", ["file_facts", "folders", "tables", "arithmetic", "units"])
@given(seed=SEEDS)
@TRUTHS
def test_each_figure_is_the_truth_of_the_generated_content(family: str, seed: int) -> None:
    for task in draw(seed, per_language=16):
        if task.category != family:
            continue
        kind, fields = read_back(task)
        if kind == "largest":
            found = sizes(task)
            ranked = sorted(found, key=found.__getitem__, reverse=True)
            assert found[ranked[0]] > found[ranked[1]] and options(task) == [ranked[0].name]
            assert passes(task, says(task, ranked[0].name))
            assert not passes(task, says(task, ranked[1].name))
            continue
        places = (2, 1) if family == "units" else (2,)
        truth = TRUTH[family](task, kind, fields)
        check_figure(task, truth, places=places)
        if family == "arithmetic" and (10**6) % truth.denominator == 0:
            # the exact value, where it has a few more places than cents, is right too
            exact = format(Decimal(truth.numerator) / truth.denominator, "f")
            assert passes(task, says(task, exact)), (task.request, exact, options(task))


@given(seed=SEEDS)
@TRUTHS
def test_dates_are_counted_and_named_in_the_request_language(seed: int) -> None:
    for task in draw(seed, per_language=16):
        if task.category != "dates":
            continue
        kind, fields = read_back(task)
        if kind == "between":
            check_figure(task, truth_of_dates(task, kind, fields))
            continue
        day = (spelled_date(fields["date"], task.language).toordinal() - 1) % 7  # 1 Jan 1: Mon
        names = options(task)
        assert ENGLISH_DAYS[day] in names and set(WEEKDAYS[task.language][day]) <= set(names)
        assert passes(task, says(task, names[0])) and passes(task, f"It's a {ENGLISH_DAYS[day]}.")
        wrong = WEEKDAYS[task.language][(day + 1) % 7][0]
        assert not passes(task, says(task, wrong))


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def carry_out(root: Path, kind: str, fields: dict[str, str]) -> None:
    """What the request asks, done by hand."""
    target = root / fields["file"]
    if kind == "create":
        target.write_text(fields["text"] + "\n", encoding="utf-8")
    elif kind == "append":
        with target.open("a", encoding="utf-8") as out:
            out.write(f"- {fields['text']}\n")
    elif kind == "rename":
        target.rename(root / fields["new"])
    else:
        target.unlink()


@given(seed=SEEDS)
@TRUTHS
def test_edits_are_checked_on_the_workspace_they_leave(seed: int) -> None:
    for task in draw(seed, per_language=16):
        if task.category != "edits":
            continue
        kind, fields = read_back(task)
        assert (kind == "create") == (fields["file"] not in task.files)
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for name, content in task.files.items():
                (root / name).write_text(content, encoding="utf-8")
            before = snapshot(root)
            untouched = score(task, "I need your permission: run it with --yes.", before, root)
            carry_out(root, kind, fields)
            done = score(task, "Done.", before, root)
        if task.yes:  # done as asked passes; left undone fails
            assert done == [] and untouched, (task.request, task.expect, done)
        else:  # refused passes; done anyway fails, whatever the answer says
            assert untouched == [] and done, (task.request, task.expect, untouched)


@given(seed=SEEDS)
@TRUTHS
def test_live_data_wants_an_honest_answer_and_no_made_up_figure(seed: int) -> None:
    for task in draw(seed, per_language=16):
        if task.category != "live_data":
            continue
        read_back(task)
        assert not re.search(r"\d", task.request) and task.expect["no_new_figures"] is True
        assert set(CANNOT[task.language]) <= set(task.expect["has_any"])
        assert passes(task, HONEST[task.language])
        assert not passes(task, HONEST[task.language] + " " + says(task, "187,32"))
        assert not passes(task, says(task, "187.32"))


@given(seed=SEEDS)
@TRUTHS
def test_a_page_question_is_answered_by_what_the_page_says(seed: int) -> None:
    for task in draw(seed, per_language=18):
        if task.category != "web_page":
            continue
        kind, fields = read_back(task)
        [(path, page)] = task.pages.items()
        assert fields["url"] == "{base}" + path and not task.files
        assert task.yes  # served on 127.0.0.1, which web_scan asks before reaching
        rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", page)
        prices = {
            html.unescape(item): Fraction(int(re.sub(r"\D", "", price)), 100)
            for item, price in rows
        }
        assert len(prices) == len(rows) >= 3
        if kind == "price":
            check_figure(task, prices[fields["item"]])
        elif kind == "count":
            check_figure(task, Fraction(len(rows)))
        elif kind == "cheapest":
            cheapest, *dearer = sorted(prices, key=prices.__getitem__)
            assert passes(task, says(task, cheapest))
            assert not any(passes(task, says(task, item)) for item in dearer)
        else:
            [code] = re.findall(r"\b\d{5}\b", page)
            assert passes(task, says(task, code))
            assert not passes(task, says(task, str(int(code) + 1)))


def test_the_same_seed_draws_the_same_tasks_and_another_seed_others() -> None:
    assert draw(7) == draw(7)
    one, two = {t.request for t in draw(7)}, {t.request for t in draw(8)}
    assert len(one & two) < len(one) // 4
    assert draw(7, languages=["de", "zh"]) == [t for t in draw(7) if t.language in ("de", "zh")]


def test_some_files_asked_about_are_longer_than_one_read_shows() -> None:
    """A line asked for is often past the first screenful of a long file (a log, a journal):
    the short files of the other kinds do not test reading past it."""
    sizes = [
        len(c.splitlines())
        for t in draw(2024)
        if t.category == "file_facts"
        for c in t.files.values()
    ]
    assert max(sizes) >= 100 and min(sizes) < 40


def test_a_draw_holds_every_family_in_every_language() -> None:
    tasks = draw(2024)
    assert len(tasks) >= 240 and len({t.id for t in tasks}) == len(tasks)
    per_language = Counter(t.language for t in tasks)
    assert set(per_language) == set(LANGUAGES) and min(per_language.values()) >= 30
    for lang in LANGUAGES:
        assert {t.category for t in tasks if t.language == lang} == set(FAMILIES)
    for task in tasks:
        assert re.fullmatch(rf"g2024-{task.language}-{task.category}-\d+", task.id)


def test_every_phrasing_of_every_language_is_drawn_and_reads_back() -> None:
    for family, templates in TEMPLATES.items():
        assert set(templates) == set(LANGUAGES), family
        kinds = set(templates["en"])
        for lang in LANGUAGES:
            assert set(templates[lang]) <= kinds and all(templates[lang].values())
    seen = set()
    for seed in range(16):
        for task in draw(seed, per_language=96):
            seen.add(phrasing(task)[2])
    for family, templates in TEMPLATES.items():
        for lang in LANGUAGES:
            for kind, phrasings in templates[lang].items():
                missing = [t for t in phrasings if t not in seen]
                assert not missing, (family, lang, kind, missing)


def test_names_and_words_are_told_apart() -> None:
    for lang in LANGUAGES:
        names = [n.casefold() for n in NAMES[lang]]
        pool = names + [w.casefold() for w in WORDS[lang]]
        for name in names:
            assert [other for other in pool if name in other] == [name], (lang, name)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_month_and_weekday_names_are_those_of_the_language(lang: str) -> None:
    for month in range(1, 13):
        for day in (date(2023, month, 1), date(2031, month, 17)):
            assert spelled_date(long_date(day, lang), lang) == day
    for weekday, names in enumerate(WEEKDAYS[lang]):
        read = {n: dateparser.parse(n, languages=[lang]) for n in names}
        assert read[names[0]] is not None  # the first name is the common one
        assert all(d.weekday() == weekday for d in read.values() if d is not None), read


def test_unknown_languages_are_refused() -> None:
    with pytest.raises(ValueError, match="'it'"):
        draw(1, languages=["en", "it"])


def test_a_saved_draw_reads_back_as_the_same_tasks(tmp_path: Path) -> None:
    tasks = draw(99, per_language=24)
    path = tmp_path / "draw.yaml"
    path.write_text(to_yaml(tasks), encoding="utf-8")
    assert load_tasks(path) == tasks
    assert all(t.source == str(path) for t in load_tasks(path))


@pytest.mark.parametrize(
    ("answer", "wanted", "holds"),
    [
        ("O total é 1.234,5 euros.", ["1234.5", "1234,5", "1.234,5"], True),
        ("Total: 1 234,50 €", ["1234.5", "1234,5"], True),
        ("Total: 1\u202f234,5 €", ["1234.5", "1 234,5"], True),
        ("Es sind 23,46 kg.", ["23.46", "23,46", "23.5", "23,5"], True),
        ("Es sind 23,456 kg.", ["23,46"], True),
        ("O total é 50,5.", ["50"], False),
        ("O total é 50,5.", ["50.5"], False),
        ("1.234,5", ["234,5"], False),
        ("It is 1,234.5.", ["1234,5"], False),
        ("It is 1234.", ["1.235", "1235"], False),
        ("Sonntag", ["Sonntag", "Sunday"], True),
    ],
)
def test_a_group_holds_when_any_of_its_ways_of_writing_is_a_figure_of_its_own(
    answer: str, wanted: list[str], holds: bool
) -> None:
    task = Task("x", "c", "?", {"has": [wanted]})
    assert passes(task, answer) is holds
    if not holds:
        assert score(task, answer, {}, Path(".")) == [f"answer lacks all of {wanted!r}"]


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("{has: [[]]}", "a group in 'has' is a non-empty list of texts"),
        ("{has: [[a, [b]]]}", "a group in 'has' is a non-empty list of texts"),
        ("{has: x}", "'has' is a list"),
        ("{absent: a.txt}", "'absent' is a list"),
    ],
)
def test_a_malformed_group_names_the_task(tmp_path: Path, expect: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"- {{id: a, category: c, language: en, request: r, expect: {expect}}}")
    with pytest.raises(SuiteError, match=message):
        load_tasks(path)


def test_a_seed_is_either_to_tune_on_or_to_report_on_never_both() -> None:
    from lar.evals.draws import DEV_SEEDS, TEST_SEEDS, part_of

    assert set(DEV_SEEDS).isdisjoint(TEST_SEEDS)
    assert [part_of(s) for s in (0, DEV_SEEDS.stop - 1, TEST_SEEDS.start, TEST_SEEDS.stop - 1)] == [
        "dev",
        "dev",
        "test",
        "test",
    ]
    with pytest.raises(ValueError, match="neither the dev seeds"):
        part_of(TEST_SEEDS.stop)
