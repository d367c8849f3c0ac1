"""Families a user reckons with: ``arithmetic`` (percent, splitting a bill, an average),
``units`` (distance, weight, temperature) and ``dates`` (days between, day of the week).
Truths are exact (``Decimal``, ``datetime``) until the rounding an answer may use.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal

from lar.evals.everyday import Task

from .locale import WEEKDAYS, Templates, ask, figures, listed, long_date, make_task, written

__all__ = ["ARITHMETIC", "UNITS", "UNIT_NAMES", "DATES", "CONVERSIONS", "arithmetic", "units",
           "dates"]  # fmt: skip

ARITHMETIC: Templates = {
    "en": {
        "percent": ["What is {p}% of {n}?", "Calculate {p} percent of {n}.",
                    "How much is {p}% of {n}?"],
        "split": ["Our dinner bill is ${total}. How much does each of the {people} of us pay if "
                  "we split it evenly?", "Split a bill of ${total} evenly among {people} people. "
                  "How much is each share?"],
        "split_tip": ["The bill is ${total} and we want to add a {tip}% tip. Split among "
                      "{people} people, how much does each pay?"],
        "average": ["What is the average of {numbers}?",
                    "My last test scores were {numbers}. What is my average?"],
    },
    "pt": {
        "percent": ["Quanto é {p}% de {n}?", "Calcule {p} por cento de {n}.",
                    "Quanto dá {p}% de {n}?"],
        "split": ["A conta do jantar deu R$ {total}. Quanto cada um paga se dividirmos "
                  "igualmente entre {people} pessoas?", "Divida uma conta de R$ {total} "
                  "igualmente entre {people} pessoas. Quanto fica para cada uma?"],
        "split_tip": ["A conta é R$ {total} e queremos deixar {tip}% de gorjeta. Dividindo entre "
                      "{people} pessoas, quanto paga cada uma?"],
        "average": ["Qual é a média de {numbers}?",
                    "Minhas últimas notas foram {numbers}. Qual é a minha média?"],
    },
    "es": {
        "percent": ["¿Cuánto es el {p}% de {n}?", "Calcula el {p} por ciento de {n}.",
                    "¿Cuánto da el {p}% de {n}?"],
        "split": ["La cuenta de la cena es de {total} €. ¿Cuánto paga cada uno si la dividimos "
                  "a partes iguales entre {people} personas?", "Divide una cuenta de {total} € "
                  "entre {people} personas a partes iguales. ¿Cuánto le toca a cada una?"],
        "split_tip": ["La cuenta es de {total} € y queremos dejar un {tip}% de propina. Si la "
                      "dividimos entre {people} personas, ¿cuánto paga cada una?"],
        "average": ["¿Cuál es la media de {numbers}?",
                    "Mis últimas notas fueron {numbers}. ¿Cuál es mi promedio?"],
    },
    "de": {
        "percent": ["Wie viel sind {p} % von {n}?", "Berechne {p} Prozent von {n}.",
                    "Was ergeben {p} % von {n}?"],
        "split": ["Die Rechnung fürs Abendessen beträgt {total} €. Wie viel zahlt jeder, wenn "
                  "wir sie gleichmäßig auf {people} Personen aufteilen?", "Teile eine Rechnung "
                  "von {total} € gleichmäßig auf {people} Personen auf. Wie viel zahlt jede?"],
        "split_tip": ["Die Rechnung beträgt {total} €, dazu wollen wir {tip} % Trinkgeld geben. "
                      "Wie viel zahlt jede von {people} Personen?"],
        "average": ["Was ist der Durchschnitt von {numbers}?",
                    "Meine letzten Testergebnisse waren {numbers}. Wie hoch ist mein Schnitt?"],
    },
    "fr": {
        "percent": ["Combien font {p} % de {n} ?", "Calcule {p} pour cent de {n}.",
                    "Ça fait combien, {p} % de {n} ?"],
        "split": ["L'addition du dîner est de {total} €. Combien paie chacun si on partage "
                  "équitablement entre {people} personnes ?", "Partage une addition de {total} € "
                  "entre {people} personnes à parts égales. Combien chacun doit-il payer ?"],
        "split_tip": ["L'addition est de {total} € et nous voulons laisser {tip} % de "
                      "pourboire. Partagé entre {people} personnes, combien paie chacun ?"],
        "average": ["Quelle est la moyenne de {numbers} ?",
                    "Mes dernières notes sont {numbers}. Quelle est ma moyenne ?"],
    },
    "zh": {
        "percent": ["{n}的{p}%是多少？", "计算{n}的百分之{p}。", "{n}乘以{p}%等于多少？"],
        "split": ["晚饭账单是{total}元，{people}个人平摊，每人付多少？",
                  "把{total}元的账单平均分给{people}个人，每人多少钱？"],
        "split_tip": ["账单是{total}元，再加{tip}%的小费，{people}个人平摊，每人付多少？"],
        "average": ["{numbers}的平均数是多少？", "我最近几次考试分数是{numbers}，平均分是多少？"],
    },
}  # fmt: skip

UNITS: Templates = {
    "en": {"convert": ["Convert {value} {src} to {dst}.", "How many {dst} is {value} {src}?",
                       "What is {value} {src} in {dst}?"]},
    "pt": {"convert": ["Converta {value} {src} para {dst}.", "Quanto é {value} {src} em {dst}?",
                       "Preciso de {value} {src} em {dst}, quanto dá?"]},
    "es": {"convert": ["Convierte {value} {src} a {dst}.", "¿Cuánto es {value} {src} en {dst}?",
                       "Pasa {value} {src} a {dst}, por favor."]},
    "de": {"convert": ["Rechne {value} {src} in {dst} um.", "Wie viele {dst} sind {value} {src}?",
                       "Was sind {value} {src} in {dst}?"]},
    "fr": {"convert": ["Convertis {value} {src} en {dst}.", "Combien font {value} {src} en {dst} ?",
                       "{value} {src}, ça fait combien en {dst} ?"]},
    "zh": {"convert": ["把{value}{src}换算成{dst}。", "{value}{src}等于多少{dst}？",
                       "{value}{src}是多少{dst}？"]},
}  # fmt: skip

UNIT_NAMES = {
    "en": {"km": "kilometers", "mi": "miles", "kg": "kilograms", "lb": "pounds",
           "c": "degrees Celsius", "f": "degrees Fahrenheit"},
    "pt": {"km": "quilômetros", "mi": "milhas", "kg": "quilos", "lb": "libras",
           "c": "graus Celsius", "f": "graus Fahrenheit"},
    "es": {"km": "kilómetros", "mi": "millas", "kg": "kilos", "lb": "libras",
           "c": "grados Celsius", "f": "grados Fahrenheit"},
    "de": {"km": "Kilometer", "mi": "Meilen", "kg": "Kilogramm", "lb": "Pfund",
           "c": "Grad Celsius", "f": "Grad Fahrenheit"},
    "fr": {"km": "kilomètres", "mi": "miles", "kg": "kilogrammes", "lb": "livres",
           "c": "degrés Celsius", "f": "degrés Fahrenheit"},
    "zh": {"km": "公里", "mi": "英里", "kg": "公斤", "lb": "磅", "c": "摄氏度", "f": "华氏度"},
}  # fmt: skip

_MILE, _POUND = Decimal("1.609344"), Decimal("0.45359237")  # km and kg, exact by definition
CONVERSIONS: dict[tuple[str, str], Callable[[Decimal], Decimal]] = {
    ("km", "mi"): lambda v: v / _MILE,
    ("mi", "km"): lambda v: v * _MILE,
    ("kg", "lb"): lambda v: v / _POUND,
    ("lb", "kg"): lambda v: v * _POUND,
    ("c", "f"): lambda v: v * 9 / 5 + 32,
    ("f", "c"): lambda v: (v - 32) * 5 / 9,
}


def _source_value(rng: random.Random, unit: str) -> Decimal:
    """A value a user would convert: tenths for distance and weight, whole degrees from
    freezing up, so no answer needs a sign."""
    if unit == "c":
        return Decimal(rng.randint(2, 45))
    if unit == "f":
        return Decimal(rng.randint(32, 110))
    return Decimal(rng.randint(15, 5000)) / 10


DATES: Templates = {
    "en": {"between": ["How many days are there between {d1} and {d2}?",
                       "How many days is it from {d1} to {d2}?"],
           "weekday": ["What day of the week is {date}?", "Which weekday does {date} fall on?"]},
    "pt": {"between": ["Quantos dias há entre {d1} e {d2}?",
                       "Quantos dias se passam de {d1} até {d2}?"],
           "weekday": ["Que dia da semana é {date}?",
                       "Em que dia da semana cai o dia {date}?"]},
    "es": {"between": ["¿Cuántos días hay entre el {d1} y el {d2}?",
                       "¿Cuántos días pasan del {d1} al {d2}?"],
           "weekday": ["¿Qué día de la semana es el {date}?",
                       "¿En qué día de la semana cae el {date}?"]},
    "de": {"between": ["Wie viele Tage liegen zwischen dem {d1} und dem {d2}?",
                       "Wie viele Tage sind es vom {d1} bis zum {d2}?"],
           "weekday": ["Welcher Wochentag ist der {date}?",
                       "Auf welchen Wochentag fällt der {date}?"]},
    "fr": {"between": ["Combien de jours y a-t-il entre le {d1} et le {d2} ?",
                       "Combien de jours s'écoulent du {d1} au {d2} ?"],
           "weekday": ["Quel jour de la semaine tombe le {date} ?",
                       "Le {date}, c'est quel jour de la semaine ?"]},
    "zh": {"between": ["{d1}到{d2}之间有多少天？", "从{d1}到{d2}一共多少天？"],
           "weekday": ["{date}是星期几？", "{date}那天是周几？"]},
}  # fmt: skip


def _percent(rng: random.Random, lang: str) -> tuple[dict[str, str], Decimal]:
    p = Decimal(rng.randint(1, 199)) / 2 if rng.random() < 0.3 else Decimal(rng.randint(1, 99))
    n = Decimal(rng.randint(10, 20000)) / (100 if rng.random() < 0.3 else 1)
    return {"p": written(p, lang), "n": written(n, lang)}, n * p / 100


def _split(rng: random.Random, lang: str, tip: int) -> tuple[dict[str, str], Decimal]:
    total, people = Decimal(rng.randint(1000, 60000)) / 100, rng.randint(2, 8)
    fields = {"total": written(total, lang, places=2), "people": str(people), "tip": str(tip)}
    return fields, total * (100 + tip) / 100 / people


def arithmetic(rng: random.Random, lang: str) -> Task:
    """A percent of a number, a bill split evenly (with a tip or not), or an average; the
    truth to the cent, as an answer would round it, or exact where that has six places at
    most."""
    kind = rng.choice(list(ARITHMETIC[lang]))
    if kind == "percent":
        fields, truth = _percent(rng, lang)
    elif kind == "average":
        values = [rng.randint(10, 100) for _ in range(rng.randint(3, 8))]
        fields = {"numbers": listed([str(v) for v in values], lang)}
        truth = Decimal(sum(values)) / len(values)
    else:
        tip = rng.choice([10, 12, 15, 18, 20]) if kind == "split_tip" else 0
        fields, truth = _split(rng, lang, tip)
    request = ask(rng, ARITHMETIC, lang, kind, **fields)
    # To the cent, or exactly where the exact value has a few more places (73.5 % of 5,901 is
    # 4,337.235: right, not a miss of 4,337.24).
    exact = -int(truth.normalize().as_tuple().exponent)
    places = (2, exact) if 2 < exact <= 6 else (2,)
    return make_task("arithmetic", lang, request, {"has": [figures(truth, lang, places)]})


def units(rng: random.Random, lang: str) -> Task:
    """A distance, weight or temperature in another unit; an answer to two places or to one
    passes (a small tolerance, as a person rounds)."""
    src, dst = rng.choice(list(CONVERSIONS))
    value = _source_value(rng, src)
    truth = CONVERSIONS[src, dst](value)
    names = UNIT_NAMES[lang]
    fields = {"value": written(value, lang), "src": names[src], "dst": names[dst]}
    request = ask(rng, UNITS, lang, "convert", **fields)
    return make_task("units", lang, request, {"has": [figures(truth, lang, (2, 1))]})


def dates(rng: random.Random, lang: str) -> Task:
    """Days from one date to another (the difference, as a calendar counts it), or the day
    of the week of a date, named in the request's language or in English."""
    kind = rng.choice(list(DATES[lang]))
    first = date(1950, 1, 1) + timedelta(days=rng.randint(0, 90 * 365))
    iso = rng.random() < 0.3  # one way of writing dates in a request, as a person keeps to

    def spelled(day: date) -> str:
        return day.isoformat() if iso else long_date(day, lang)

    if kind == "between":
        second = first + timedelta(days=rng.randint(2, 1500))
        fields = {"d1": spelled(first), "d2": spelled(second)}
        wanted = figures(Decimal((second - first).days), lang)
    else:
        fields = {"date": spelled(first)}
        names = WEEKDAYS[lang][first.weekday()]
        wanted = names + [n for n in WEEKDAYS["en"][first.weekday()] if n not in names]
    request = ask(rng, DATES, lang, kind, **fields)
    return make_task("dates", lang, request, {"has": [wanted]})
