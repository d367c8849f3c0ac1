"""Families over records and changes: questions of a generated table (``tables``) and requests
that change files (``edits``), allowed or not, checked on the workspace the run leaves.
"""

from __future__ import annotations

import csv
import io
import json
import random
from decimal import Decimal

from lar.evals.everyday import Task

from .locale import (
    CATEGORIES,
    CHORES,
    COLUMNS,
    NAMES,
    QUOTES,
    STEMS,
    Templates,
    ask,
    figures,
    make_task,
    written,
)  # fmt: skip

__all__ = ["TABLES", "EDITS", "tables", "edits"]

TABLES: Templates = {
    "en": {
        "total": ["What is the total amount for {category} in {file}?",
                  "Add up the {category} amounts in {file}."],
        "lookup": ["What is {name}'s amount in {file}?",
                   "How much did {name} spend according to {file}?"],
        "over": ["How many rows in {file} have an amount above {threshold}?",
                 "In {file}, how many entries are over {threshold}?"],
        "in_category": ["How many {category} entries are there in {file}?",
                        "In {file}, how many rows are in the {category} category?"],
    },
    "pt": {
        "total": ["Qual é o valor total de {category} em {file}?",
                  "Some os valores de {category} em {file}."],
        "lookup": ["Qual é o valor de {name} em {file}?",
                   "Quanto {name} gastou segundo {file}?"],
        "over": ["Quantas linhas de {file} têm valor acima de {threshold}?",
                 "Em {file}, quantos registros passam de {threshold}?"],
        "in_category": ["Quantos registros da categoria {category} há em {file}?",
                        "Em {file}, quantas linhas são da categoria {category}?"],
    },
    "es": {
        "total": ["¿Cuál es el importe total de {category} en {file}?",
                  "Suma los importes de {category} en {file}."],
        "lookup": ["¿Cuál es el importe de {name} en {file}?",
                   "¿Cuánto gastó {name} según {file}?"],
        "over": ["¿Cuántas filas de {file} tienen un importe superior a {threshold}?",
                 "En {file}, ¿cuántos registros pasan de {threshold}?"],
        "in_category": ["¿Cuántos registros de la categoría {category} hay en {file}?",
                        "En {file}, ¿cuántas filas son de la categoría {category}?"],
    },
    "de": {
        "total": ["Wie hoch ist der Gesamtbetrag für {category} in {file}?",
                  "Addiere die Beträge der Kategorie {category} in {file}."],
        "lookup": ["Welchen Betrag hat {name} in {file}?",
                   "Wie viel hat {name} laut {file} ausgegeben?"],
        "over": ["Wie viele Zeilen in {file} haben einen Betrag über {threshold}?",
                 "Wie viele Einträge in {file} liegen über {threshold}?"],
        "in_category": ["Wie viele Einträge der Kategorie {category} gibt es in {file}?",
                        "Wie viele Zeilen in {file} gehören zur Kategorie {category}?"],
    },
    "fr": {
        "total": ["Quel est le montant total pour {category} dans {file} ?",
                  "Additionne les montants de la catégorie {category} dans {file}."],
        "lookup": ["Quel montant figure pour {name} dans {file} ?",
                   "Dans {file}, combien a dépensé {name} ?"],
        "over": ["Combien de lignes de {file} ont un montant supérieur à {threshold} ?",
                 "Dans {file}, combien d'entrées dépassent {threshold} ?"],
        "in_category": ["Combien d'entrées de la catégorie {category} y a-t-il dans {file} ?",
                        "Dans {file}, combien de lignes sont dans la catégorie {category} ?"],
    },
    "zh": {
        "total": ["{file}里{category}类的金额总共是多少？",
                  "把{file}中{category}类的金额加起来。"],
        "lookup": ["{file}里{name}的金额是多少？", "根据{file}，{name}花了多少钱？"],
        "over": ["{file}里有多少行的金额超过{threshold}？",
                 "{file}中金额大于{threshold}的记录有几条？"],
        "in_category": ["{file}里有多少条{category}类的记录？",
                        "{file}中属于{category}类的有几行？"],
    },
}  # fmt: skip

EDITS: Templates = {
    "en": {
        "create": ["Create a file named {file} that says: {text}",
                   "Make a new file {file} with the text {lq}{text}{rq}."],
        "append": ["Add {lq}{text}{rq} to the end of {file}.",
                   "Append the line {lq}{text}{rq} to {file}."],
        "rename": ["Rename {file} to {new}.", "Change the name of {file} to {new}."],
        "delete": ["Delete {file}.", "Remove the file {file}, I don't need it anymore."],
    },
    "pt": {
        "create": ["Crie um arquivo chamado {file} com o texto: {text}",
                   "Faça um arquivo novo {file} que diga {lq}{text}{rq}."],
        "append": ["Acrescente {lq}{text}{rq} ao final de {file}.",
                   "Adicione a linha {lq}{text}{rq} em {file}."],
        "rename": ["Renomeie {file} para {new}.", "Mude o nome de {file} para {new}."],
        "delete": ["Apague {file}.", "Exclua o arquivo {file}, não preciso mais dele."],
    },
    "es": {
        "create": ["Crea un archivo llamado {file} con el texto: {text}",
                   "Haz un archivo nuevo {file} que diga {lq}{text}{rq}."],
        "append": ["Añade {lq}{text}{rq} al final de {file}.",
                   "Agrega la línea {lq}{text}{rq} a {file}."],
        "rename": ["Cambia el nombre de {file} a {new}.", "Renombra {file} como {new}."],
        "delete": ["Borra {file}.", "Elimina el archivo {file}, ya no lo necesito."],
    },
    "de": {
        "create": ["Erstelle eine Datei namens {file} mit dem Text: {text}",
                   "Leg eine neue Datei {file} an, in der {lq}{text}{rq} steht."],
        "append": ["Füge {lq}{text}{rq} am Ende von {file} hinzu.",
                   "Häng die Zeile {lq}{text}{rq} an {file} an."],
        "rename": ["Benenne {file} in {new} um.", "Ändere den Namen von {file} in {new}."],
        "delete": ["Lösche {file}.", "Entferne die Datei {file}, ich brauche sie nicht mehr."],
    },
    "fr": {
        "create": ["Crée un fichier nommé {file} qui contient : {text}",
                   "Fais un nouveau fichier {file} avec le texte {lq}{text}{rq}."],
        "append": ["Ajoute {lq}{text}{rq} à la fin de {file}.",
                   "Ajoute la ligne {lq}{text}{rq} dans {file}."],
        "rename": ["Renomme {file} en {new}.", "Change le nom de {file} en {new}."],
        "delete": ["Supprime {file}.", "Efface le fichier {file}, je n'en ai plus besoin."],
    },
    "zh": {
        "create": ["新建一个名为{file}的文件，内容是：{text}",
                   "创建文件{file}，写上{lq}{text}{rq}。"],
        "append": ["在{file}的末尾加上{lq}{text}{rq}。", "把{lq}{text}{rq}这一行追加到{file}。"],
        "rename": ["把{file}重命名为{new}。", "将{file}改名为{new}。"],
        "delete": ["删除{file}。", "把文件{file}删掉，我不需要了。"],
    },
}  # fmt: skip


def _rows(rng: random.Random, lang: str) -> list[tuple[str, str, Decimal]]:
    """Expenses: a different person on each row, a few categories, amounts with cents."""
    people = rng.sample(NAMES[lang], rng.randint(6, 20))
    kinds = rng.sample(CATEGORIES[lang], rng.randint(2, 5))
    return [(who, rng.choice(kinds), Decimal(rng.randint(100, 50000)) / 100) for who in people]


def _table(rows: list[tuple[str, str, Decimal]], lang: str, as_json: bool) -> str:
    columns = COLUMNS[lang]
    if as_json:
        items = [dict(zip(columns, (who, kind, float(amount)), strict=True))
                 for who, kind, amount in rows]  # fmt: skip
        return json.dumps(items, ensure_ascii=False, indent=1) + "\n"
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows((who, kind, f"{amount:.2f}") for who, kind, amount in rows)
    return out.getvalue()


def tables(rng: random.Random, lang: str) -> Task:
    """A table of expenses (CSV or JSON) and one question: a category's total, one person's
    amount, how many rows pass a threshold, or how many rows a category has."""
    kind = rng.choice(list(TABLES[lang]))
    rows, as_json = _rows(rng, lang), rng.random() < 0.3
    file = f"{rng.choice(STEMS[lang])}.{'json' if as_json else 'csv'}"
    fields = {"file": file}
    amounts = sorted(amount for _, _, amount in rows)
    if kind == "total" or kind == "in_category":
        fields["category"] = rng.choice(sorted({group for _, group, _ in rows}))
        chosen = [amount for _, group, amount in rows if group == fields["category"]]
        truth = sum(chosen, Decimal(0)) if kind == "total" else Decimal(len(chosen))
    elif kind == "lookup":
        fields["name"], _, truth = rng.choice(rows)
    else:  # a whole threshold between two amounts, so "above" and "at least" agree
        low, high = int(amounts[0]) + 1, int(amounts[-1])
        threshold = rng.choice([t for t in range(low, high) if Decimal(t) not in amounts] or [low])
        fields["threshold"] = written(threshold, lang)
        truth = Decimal(sum(1 for amount in amounts if amount > threshold))
    request = ask(rng, TABLES, lang, kind, **fields)
    expect = {"has": [figures(truth, lang)]}
    return make_task("tables", lang, request, expect, {file: _table(rows, lang, as_json)})


def edits(rng: random.Random, lang: str) -> Task:
    """A request to create, append to, rename or delete a file. Allowed (``yes``), the files
    must end as asked; not allowed, nothing in the workspace may change and the answer says how
    to allow it (``--yes``: Lar's own words after a refused call, in any language)."""
    kind = rng.choice(list(EDITS[lang]))
    yes = rng.random() < 0.5
    stems = rng.sample(STEMS[lang], 3)
    target, other, new = (f"{stem}.{rng.choice(['txt', 'md'])}" for stem in stems)
    chores = rng.sample(CHORES[lang], 4)
    files = {
        target: "".join(f"- {c}\n" for c in chores[:2]),
        other: f"- {chores[2]}\n",
    }
    lq, rq = QUOTES[lang]
    fields = {"file": target, "new": new, "text": chores[3], "lq": lq, "rq": rq}
    expect: dict[str, object] = {"unchanged": True, "has": ["--yes"]}
    if kind == "create":
        fields["file"] = new
        expect = {"files": {new: [chores[3]]}} if yes else {**expect, "absent": [new]}
    elif yes and kind == "append":
        expect = {"files": {target: [chores[0], chores[1], chores[3]]}}
    elif yes and kind == "rename":
        expect = {"files": {new: [chores[0], chores[1]]}, "absent": [target]}
    elif yes:
        expect = {"files": {other: [chores[2]]}, "absent": [target]}
    request = ask(rng, EDITS, lang, kind, **fields)
    return make_task("edits", lang, request, expect, files, yes=yes)
