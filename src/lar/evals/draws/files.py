"""Families over files in the workspace: facts of one file (``file_facts``) and of a folder tree
(``folders``). Each draws the files, asks one question of them and computes the truth from what
it drew, so the answer is known without anyone having read the files.
"""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import PurePosixPath

from lar.evals.everyday import Task

from .locale import FOLDERS, NAMES, STEMS, WORDS, Templates, ask, figures, make_task

__all__ = ["FILE_FACTS", "FOLDER_FACTS", "file_facts", "folders"]

FILE_FACTS: Templates = {
    "en": {
        "lines": ["How many lines are in {file}?", "Count the lines in {file}.",
                  "How many lines does {file} have?"],
        "words": ["How many words are in {file}?", "Count the words in {file}.",
                  "What's the word count of {file}?"],
        "sum": ["Read {file} and tell me the sum of the numbers.",
                "What do the numbers in {file} add up to?", "Add up all the numbers in {file}."],
        "max": ["What is the largest number in {file}?", "Which is the highest value in {file}?"],
        "min": ["What is the smallest number in {file}?", "Which is the lowest value in {file}?"],
        "line_of": ["Which line of {file} mentions {name}? Give me the line number.",
                    "On which line number does {name} appear in {file}?"],
    },
    "pt": {
        "lines": ["Quantas linhas tem o {file}?", "Conte as linhas de {file}.",
                  "Quantas linhas há em {file}?"],
        "words": ["Quantas palavras tem o {file}?", "Conte as palavras de {file}.",
                  "Qual é o número de palavras de {file}?"],
        "sum": ["Leia {file} e me diga a soma dos números.",
                "Quanto dá a soma dos números em {file}?", "Some todos os números de {file}."],
        "max": ["Qual é o maior número em {file}?", "Qual é o valor mais alto de {file}?"],
        "min": ["Qual é o menor número em {file}?", "Qual é o valor mais baixo de {file}?"],
        "line_of": ["Em que linha de {file} aparece {name}? Diga o número da linha.",
                    "Qual é o número da linha de {file} que menciona {name}?"],
    },
    "es": {
        "lines": ["¿Cuántas líneas tiene {file}?", "Cuenta las líneas de {file}.",
                  "¿Cuántas líneas hay en {file}?"],
        "words": ["¿Cuántas palabras tiene {file}?", "Cuenta las palabras de {file}.",
                  "¿Cuál es el número de palabras de {file}?"],
        "sum": ["Lee {file} y dime la suma de los números.",
                "¿Cuánto suman los números de {file}?", "Suma todos los números de {file}."],
        "max": ["¿Cuál es el número más grande de {file}?",
                "¿Cuál es el valor más alto de {file}?"],
        "min": ["¿Cuál es el número más pequeño de {file}?",
                "¿Cuál es el valor más bajo de {file}?"],
        "line_of": ["¿En qué línea de {file} aparece {name}? Dime el número de línea.",
                    "¿Qué número de línea de {file} menciona a {name}?"],
    },
    "de": {
        "lines": ["Wie viele Zeilen hat {file}?", "Zähle die Zeilen in {file}.",
                  "Wie viele Zeilen stehen in {file}?"],
        "words": ["Wie viele Wörter enthält {file}?", "Zähle die Wörter in {file}.",
                  "Wie viele Wörter stehen in {file}?"],
        "sum": ["Lies {file} und sag mir die Summe der Zahlen.",
                "Was ergibt die Summe der Zahlen in {file}?", "Addiere alle Zahlen in {file}."],
        "max": ["Was ist die größte Zahl in {file}?", "Welcher ist der höchste Wert in {file}?"],
        "min": ["Was ist die kleinste Zahl in {file}?",
                "Welcher ist der niedrigste Wert in {file}?"],
        "line_of": ["In welcher Zeile von {file} wird {name} erwähnt? Nenne die Zeilennummer.",
                    "Welche Zeilennummer in {file} erwähnt {name}?"],
    },
    "fr": {
        "lines": ["Combien de lignes contient {file} ?", "Compte les lignes de {file}.",
                  "Combien y a-t-il de lignes dans {file} ?"],
        "words": ["Combien de mots contient {file} ?", "Compte les mots de {file}.",
                  "Combien y a-t-il de mots dans {file} ?"],
        "sum": ["Lis {file} et donne-moi la somme des nombres.",
                "Quelle est la somme des nombres de {file} ?",
                "Additionne tous les nombres de {file}."],
        "max": ["Quel est le plus grand nombre de {file} ?",
                "Quelle est la valeur la plus élevée de {file} ?"],
        "min": ["Quel est le plus petit nombre de {file} ?",
                "Quelle est la valeur la plus basse de {file} ?"],
        "line_of": ["Quelle ligne de {file} mentionne {name} ? Donne le numéro de ligne.",
                    "Sur quelle ligne de {file} apparaît {name} ?"],
    },
    "zh": {  # no word count: Chinese text does not split into words by spaces
        "lines": ["{file}有多少行？", "数一下{file}的行数。", "{file}一共几行？"],
        "sum": ["读一下{file}，告诉我里面数字的总和。", "{file}里的数字加起来是多少？",
                "把{file}里的所有数字加起来。"],
        "max": ["{file}里最大的数是多少？", "{file}中的最大值是多少？"],
        "min": ["{file}里最小的数是多少？", "{file}中的最小值是多少？"],
        "line_of": ["{file}的哪一行提到了{name}？请告诉我行号。", "{name}出现在{file}的第几行？"],
    },
}  # fmt: skip

FOLDER_FACTS: Templates = {
    "en": {
        "count_all": ["How many {ext} files are in this folder, including subfolders?",
                      "Count all the {ext} files here, subfolders included."],
        "count_top": ["How many {ext} files are directly in this folder, not counting subfolders?",
                      "Not counting subfolders, how many {ext} files are in this folder?"],
        "count_in": ["How many {ext} files are in the {folder} folder, including its subfolders?",
                     "Count the {ext} files under {folder}/, subfolders included."],
        "largest": ["Which is the largest file in this folder and its subfolders?",
                    "Find the biggest file here, subfolders included. What is it called?"],
        "size_total": ["What is the total size in bytes of all {ext} files here, subfolders "
                       "included?", "Add up the sizes of the {ext} files in this folder and its "
                       "subfolders, in bytes."],
    },
    "pt": {
        "count_all": ["Quantos arquivos {ext} há nesta pasta, incluindo as subpastas?",
                      "Conte todos os arquivos {ext} daqui, subpastas incluídas."],
        "count_top": ["Quantos arquivos {ext} estão diretamente nesta pasta, sem contar as "
                      "subpastas?", "Sem contar as subpastas, quantos arquivos {ext} há nesta "
                      "pasta?"],
        "count_in": ["Quantos arquivos {ext} há na pasta {folder}, incluindo as subpastas dela?",
                     "Conte os arquivos {ext} dentro de {folder}/, subpastas incluídas."],
        "largest": ["Qual é o maior arquivo desta pasta e das subpastas?",
                    "Encontre o maior arquivo daqui, incluindo as subpastas. Como ele se chama?"],
        "size_total": ["Qual é o tamanho total, em bytes, dos arquivos {ext} daqui, incluindo as "
                       "subpastas?", "Some os tamanhos dos arquivos {ext} desta pasta e das "
                       "subpastas, em bytes."],
    },
    "es": {
        "count_all": ["¿Cuántos archivos {ext} hay en esta carpeta, incluidas las subcarpetas?",
                      "Cuenta todos los archivos {ext} de aquí, subcarpetas incluidas."],
        "count_top": ["¿Cuántos archivos {ext} hay directamente en esta carpeta, sin contar las "
                      "subcarpetas?", "Sin contar las subcarpetas, ¿cuántos archivos {ext} hay "
                      "en esta carpeta?"],
        "count_in": ["¿Cuántos archivos {ext} hay en la carpeta {folder}, incluidas sus "
                     "subcarpetas?", "Cuenta los archivos {ext} dentro de {folder}/, "
                     "subcarpetas incluidas."],
        "largest": ["¿Cuál es el archivo más grande de esta carpeta y sus subcarpetas?",
                    "Busca el archivo más grande de aquí, subcarpetas incluidas. ¿Cómo se llama?"],
        "size_total": ["¿Cuál es el tamaño total en bytes de los archivos {ext} de aquí, "
                       "incluidas las subcarpetas?", "Suma los tamaños de los archivos {ext} de "
                       "esta carpeta y sus subcarpetas, en bytes."],
    },
    "de": {
        "count_all": ["Wie viele {ext}-Dateien gibt es in diesem Ordner, Unterordner "
                      "eingeschlossen?", "Zähle alle {ext}-Dateien hier, auch die in den "
                      "Unterordnern."],
        "count_top": ["Wie viele {ext}-Dateien liegen direkt in diesem Ordner, ohne "
                      "Unterordner?", "Ohne die Unterordner: Wie viele {ext}-Dateien sind in "
                      "diesem Ordner?"],
        "count_in": ["Wie viele {ext}-Dateien sind im Ordner {folder}, einschließlich seiner "
                     "Unterordner?", "Zähle die {ext}-Dateien unter {folder}/, Unterordner "
                     "eingeschlossen."],
        "largest": ["Welche ist die größte Datei in diesem Ordner und seinen Unterordnern?",
                    "Finde die größte Datei hier, Unterordner eingeschlossen. Wie heißt sie?"],
        "size_total": ["Wie viele Bytes sind alle {ext}-Dateien hier zusammen groß, "
                       "Unterordner eingeschlossen?", "Addiere die Größen der {ext}-Dateien in "
                       "diesem Ordner und seinen Unterordnern, in Bytes."],
    },
    "fr": {
        "count_all": ["Combien de fichiers {ext} y a-t-il dans ce dossier, sous-dossiers "
                      "compris ?", "Compte tous les fichiers {ext} d'ici, sous-dossiers "
                      "compris."],
        "count_top": ["Combien de fichiers {ext} se trouvent directement dans ce dossier, sans "
                      "compter les sous-dossiers ?", "Sans compter les sous-dossiers, combien y "
                      "a-t-il de fichiers {ext} dans ce dossier ?"],
        "count_in": ["Combien de fichiers {ext} y a-t-il dans le dossier {folder}, "
                     "sous-dossiers compris ?", "Compte les fichiers {ext} dans {folder}/, "
                     "sous-dossiers compris."],
        "largest": ["Quel est le plus gros fichier de ce dossier et de ses sous-dossiers ?",
                    "Trouve le fichier le plus volumineux ici, sous-dossiers compris. Comment "
                    "s'appelle-t-il ?"],
        "size_total": ["Quelle est la taille totale en octets des fichiers {ext} d'ici, "
                       "sous-dossiers compris ?", "Additionne la taille des fichiers {ext} de ce "
                       "dossier et de ses sous-dossiers, en octets."],
    },
    "zh": {
        "count_all": ["这个文件夹（包括子文件夹）里有多少个{ext}文件？",
                      "数一下这里所有的{ext}文件，子文件夹也算。"],
        "count_top": ["不算子文件夹，这个文件夹里直接有多少个{ext}文件？",
                      "这个文件夹本身（不含子文件夹）有几个{ext}文件？"],
        "count_in": ["{folder}文件夹（包括它的子文件夹）里有多少个{ext}文件？",
                     "数一下{folder}/下面的{ext}文件，子文件夹也算。"],
        "largest": ["这个文件夹及其子文件夹里最大的文件是哪个？",
                    "找出这里最大的文件（包括子文件夹），它叫什么？"],
        "size_total": ["这里所有{ext}文件（包括子文件夹）总共多少字节？",
                       "把这个文件夹及子文件夹里{ext}文件的大小加起来，以字节为单位。"],
    },
}  # fmt: skip

_EXTENSIONS = ["txt", "md", "csv", "jpg", "png", "pdf", "json", "py"]


def _joined(words: list[str], lang: str) -> str:
    return "，".join(words) if lang == "zh" else " ".join(words)


def _numbers(rng: random.Random) -> list[str]:
    """A numbers file's lines: whole numbers or amounts with cents, as data files write them."""
    count, cents = rng.randint(4, 25), rng.random() < 0.5
    if cents:
        return [f"{Decimal(rng.randint(100, 99999)) / 100:.2f}" for _ in range(count)]
    return [str(rng.randint(1, 999)) for _ in range(count)]


def _mentions(rng: random.Random, lang: str) -> tuple[list[str], str, int]:
    """Lines that each name one person; a person whose name no other line holds, and the
    number of their line."""
    people = rng.sample(NAMES[lang], rng.randint(5, 20))
    colon = "：" if lang == "zh" else ": "
    lines = [
        who + colon + _joined(rng.sample(WORDS[lang], rng.randint(2, 7)), lang) for who in people
    ]
    alone = [
        n
        for n, who in enumerate(people)
        if not any(who.casefold() in line.casefold() for m, line in enumerate(lines) if m != n)
    ]
    n = rng.choice(alone)
    return lines, people[n], n + 1


def _padded(lines: list[str], line: int, name: str, lang: str) -> tuple[list[str], int]:
    """Half the files that name people are long (a log or journal of 100-240 lines, no more
    names among the added ones), so the line asked for is often past what one read shows;
    decided by an RNG of the drawn lines, so the draw's other tasks are the same as without."""
    local = random.Random("\n".join(lines))
    if local.random() < 0.5:
        return lines, line
    filler = [
        _joined(local.sample(WORDS[lang], local.randint(3, 8)), lang)
        for _ in range(local.randint(100, 240) - len(lines))
    ]
    filler = [f for f in filler if name.casefold() not in f.casefold()]
    target = lines[line - 1]
    for kept in lines:
        filler.insert(local.randint(0, len(filler)), kept)
    return filler, filler.index(target) + 1


def file_facts(rng: random.Random, lang: str) -> Task:
    """A text or numbers file and one fact of it: lines, words, sum, largest or smallest
    number, or the line that names someone."""
    kind = rng.choice(list(FILE_FACTS[lang]))
    file = f"{rng.choice(STEMS[lang])}.txt"
    fields = {"file": file}
    if kind in ("sum", "max", "min"):
        lines = _numbers(rng)
        values = [Decimal(v) for v in lines]
        truth = {"sum": sum(values, Decimal(0)), "max": max(values), "min": min(values)}[kind]
    elif kind == "line_of":
        lines, fields["name"], line = _mentions(rng, lang)
        lines, line = _padded(lines, line, fields["name"], lang)
        truth = Decimal(line)
    else:
        pool = WORDS[lang] + NAMES[lang]
        lines = [_joined(rng.choices(pool, k=rng.randint(1, 10)), lang)
                 for _ in range(rng.randint(3, 30))]  # fmt: skip
        words = sum(len(line.split(" ")) for line in lines)
        truth = Decimal(len(lines) if kind == "lines" else words)
    request = ask(rng, FILE_FACTS, lang, kind, **fields)
    content = "".join(line + "\n" for line in lines)
    return make_task("file_facts", lang, request, {"has": [figures(truth, lang)]}, {file: content})


def _filler(rng: random.Random, lang: str, size: int) -> str:
    """Text of exactly ``size`` bytes (ASCII), so a file's size is known before it is written."""
    line = " ".join(rng.choices(STEMS[lang] + FOLDERS[lang], k=8)) + "\n"
    return (line * (size // len(line) + 1))[: size - 1] + "\n"


def _tree(rng: random.Random, lang: str) -> dict[str, str]:
    """A workspace of nested folders and files of several kinds and sizes: every size differs
    and no file's name is part of another's, so "the largest" names one file unmistakably."""
    tops = rng.sample(FOLDERS[lang], rng.randint(2, 4))
    nested = [f"{top}/{rng.choice([f for f in FOLDERS[lang] if f != top])}"
              for top in tops if rng.random() < 0.6]  # fmt: skip
    dirs = ["", "", *tops, *nested]
    extensions = rng.sample(_EXTENSIONS, rng.randint(3, 5))
    count = rng.randint(len(dirs) + 2, len(dirs) + 10)
    sizes = rng.sample(range(20, 2500), count)
    names: list[str] = []
    while len(names) < count:
        stem = rng.choice(STEMS[lang])
        if rng.random() < 0.4:
            stem = f"{rng.choice(FOLDERS[lang])}-{stem}"
        name = f"{stem}.{rng.choice(extensions)}"
        if not any(name in other or other in name for other in names):
            names.append(name)
    files = {}
    for n, (name, size) in enumerate(zip(names, sizes, strict=True)):
        where = dirs[n] if n < len(dirs) else rng.choice(dirs)
        files[f"{where}/{name}" if where else name] = _filler(rng, lang, size)
    return files


def folders(rng: random.Random, lang: str) -> Task:
    """A folder tree and one fact of it: how many files of a kind (here, under a folder, or
    everywhere), the largest file, or the total size of a kind in bytes."""
    kind = rng.choice(list(FOLDER_FACTS[lang]))
    files = _tree(rng, lang)
    paths = [PurePosixPath(p) for p in files]
    fields: dict[str, str] = {}
    if kind == "largest":
        largest = max(paths, key=lambda p: len(files[str(p)].encode()))
        request = ask(rng, FOLDER_FACTS, lang, kind)
        return make_task("folders", lang, request, {"has": [largest.name]}, files)
    if kind == "count_top":
        scope = [p for p in paths if len(p.parts) == 1]
    elif kind == "count_in":
        fields["folder"] = rng.choice(sorted({p.parts[0] for p in paths if len(p.parts) > 1}))
        scope = [p for p in paths if p.parts[0] == fields["folder"] and len(p.parts) > 1]
    else:
        scope = paths
    fields["ext"] = rng.choice(sorted({p.suffix for p in scope}))
    chosen = [p for p in scope if p.suffix == fields["ext"]]
    if kind == "size_total":
        truth = Decimal(sum(len(files[str(p)].encode()) for p in chosen))
    else:
        truth = Decimal(len(chosen))
    request = ask(rng, FOLDER_FACTS, lang, kind, **fields)
    return make_task("folders", lang, request, {"has": [figures(truth, lang)]}, files)
