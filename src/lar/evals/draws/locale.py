"""What every family of a draw shares: how each language writes numbers, lists and dates, the
words its generated files are made of, and the few phrases an honest "I can't" uses.

Numbers are kept as ``Decimal`` from generation to answer, so a truth is exact until the one
rounding an answer may use (two places at most, half up, trailing zeros dropped); ``figures``
then gives the ways a language may write it, as the scorer's group of "any one of these".
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from lar.evals.everyday import Task

__all__ = [
    "COMMA_LANGUAGES", "Templates", "ask", "plain", "figures", "written", "listed",
    "long_date", "NAMES", "WORDS", "STEMS", "FOLDERS", "CHORES", "CATEGORIES", "COLUMNS",
    "MONTHS", "WEEKDAYS", "CANNOT", "QUOTES", "make_task",
]  # fmt: skip

Templates = Mapping[str, Mapping[str, Sequence[str]]]
"""Phrasing data of one family: language -> kind of question -> templates (``str.format``)."""

COMMA_LANGUAGES = ("pt", "es", "de", "fr")
"""The languages whose decimal mark is a comma; the others write a point."""

# decimal mark, thousands separator, and the size from which a request groups thousands
_STYLE = {
    "en": (".", ",", 1000), "zh": (".", ",", 10000), "pt": (",", ".", 1000),
    "es": (",", ".", 10000), "de": (",", ".", 1000), "fr": (",", " ", 10000),
}  # fmt: skip
_AND = {"en": " and ", "pt": " e ", "es": " y ", "de": " und ", "fr": " et ", "zh": "和"}
_COMMA = {"zh": "、"}


def ask(rng: random.Random, templates: Templates, lang: str, kind: str, **fields: str) -> str:
    """One of the language's phrasings of a kind of question, filled in."""
    return rng.choice(templates[lang][kind]).format(**fields)


def make_task(
    family: str,
    lang: str,
    request: str,
    expect: Mapping[str, object],
    files: dict[str, str] | None = None,
    *,
    yes: bool = False,
    pages: dict[str, str] | None = None,
) -> Task:
    """A drawn task; ``draw`` gives it its id."""
    return Task(
        id="", category=family, request=request, expect=dict(expect), files=files or {}, yes=yes,
        language=lang, pages=pages or {},
    )  # fmt: skip


def plain(value: Decimal, places: int = 2) -> str:
    """A value as an answer gives it: ``places`` at most (half up), no trailing zeros, but
    one where rounding made a whole number of one that is not ("212.0" for 211.95): the
    scorer reads a whole wanted number as its integer part ("176.67" holds "176"), which
    would let "212.95" pass."""
    text = format(value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP), "f")
    if "." in text:
        text = text.rstrip("0")
        text += "0" if text.endswith(".") and value != value.to_integral_value() else ""
        text = text.rstrip(".")
    return "0" if text == "-0" else text


def _grouped(whole: str, sep: str) -> str:
    head = len(whole) % 3 or 3
    return sep.join([whole[:head]] + [whole[i : i + 3] for i in range(head, len(whole), 3)])


def _forms(text: str, lang: str) -> list[str]:
    sign, body = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, _, frac = body.partition(".")
    forms = [text]
    if len(whole) > 3:
        forms.append(sign + _grouped(whole, ",") + ("." + frac if frac else ""))
    if lang in COMMA_LANGUAGES:
        tail = "," + frac if frac else ""
        if frac:
            forms.append(sign + whole + tail)
        if len(whole) > 3:
            forms += [sign + _grouped(whole, sep) + tail for sep in (".", " ")]
    return forms


def figures(value: Decimal, lang: str, places: Sequence[int] = (2,)) -> str | list[str]:
    """The ways an answer in ``lang`` may write ``value`` rounded to each of ``places`` (as
    ``plain`` gives it): with a decimal point, and where the language writes one, a decimal
    comma, each with and without thousands separators. One way alone is a text; several are
    a group."""
    forms: list[str] = []
    for n in places:
        forms += [f for f in _forms(plain(value, n), lang) if f not in forms]
    return forms[0] if len(forms) == 1 else forms


def written(value: Decimal | int, lang: str, *, places: int | None = None) -> str:
    """A number as a user writing ``lang`` types it into a request ("2,340.5", "2.340,5")."""
    mark, sep, group_from = _STYLE[lang]
    text = format(Decimal(value), "f") if places is None else f"{Decimal(value):.{places}f}"
    whole, _, frac = text.partition(".")
    if abs(Decimal(value)) >= group_from:
        whole = _grouped(whole, sep)
    return whole + (mark + frac if frac else "")


def listed(items: Sequence[str], lang: str) -> str:
    """Items as a sentence lists them: "12, 15 and 30"."""
    comma = _COMMA.get(lang, ", ")
    return comma.join(items[:-1]) + _AND[lang] + items[-1]


MONTHS = {
    "en": ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"],
    "pt": ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
           "setembro", "outubro", "novembro", "dezembro"],
    "es": ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
           "septiembre", "octubre", "noviembre", "diciembre"],
    "de": ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August",
           "September", "Oktober", "November", "Dezember"],
    "fr": ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
           "septembre", "octobre", "novembre", "décembre"],
    "zh": [f"{n}月" for n in range(1, 13)],
}  # fmt: skip
_DATE = {
    "en": "{month} {day}, {year}", "pt": "{day} de {month} de {year}",
    "es": "{day} de {month} de {year}", "de": "{day}. {month} {year}",
    "fr": "{day} {month} {year}", "zh": "{year}年{month}{day}日",
}  # fmt: skip
_FIRST_DAY = {"fr": "1er"}


def long_date(day: date, lang: str) -> str:
    """A date spelled as ``lang`` writes it in a sentence ("5 de março de 2024")."""
    spelled = _FIRST_DAY.get(lang, "1") if day.day == 1 else str(day.day)
    return _DATE[lang].format(month=MONTHS[lang][day.month - 1], day=spelled, year=day.year)


WEEKDAYS = {  # Monday first; each day's accepted names
    "en": [["Monday"], ["Tuesday"], ["Wednesday"], ["Thursday"], ["Friday"], ["Saturday"],
           ["Sunday"]],
    "pt": [["segunda"], ["terça", "terca"], ["quarta"], ["quinta"], ["sexta"], ["sábado",
           "sabado"], ["domingo"]],
    "es": [["lunes"], ["martes"], ["miércoles", "miercoles"], ["jueves"], ["viernes"],
           ["sábado", "sabado"], ["domingo"]],
    "de": [["Montag"], ["Dienstag"], ["Mittwoch"], ["Donnerstag"], ["Freitag"],
           ["Samstag", "Sonnabend"], ["Sonntag"]],
    "fr": [["lundi"], ["mardi"], ["mercredi"], ["jeudi"], ["vendredi"], ["samedi"],
           ["dimanche"]],
    "zh": [["星期一", "周一", "礼拜一"], ["星期二", "周二", "礼拜二"], ["星期三", "周三", "礼拜三"],
           ["星期四", "周四", "礼拜四"], ["星期五", "周五", "礼拜五"], ["星期六", "周六", "礼拜六"],
           ["星期日", "星期天", "周日", "礼拜天"]],
}  # fmt: skip

NAMES = {
    "en": ["Alice", "Bruno", "Carla", "Daniel", "Emma", "Frank", "Grace", "Henry", "Irene",
           "Jack", "Karen", "Liam", "Maya", "Noah", "Olivia", "Peter", "Quinn", "Rosa",
           "Tina", "Umar", "Victor", "Wendy", "Yusuf", "George"],
    "pt": ["Ana", "Bruno", "Carlos", "Diogo", "Eduarda", "Fernanda", "Gabriel", "Helena",
           "Inês", "João", "Larissa", "Miguel", "Nuno", "Otávio", "Paula", "Rafael", "Sofia",
           "Tiago", "Beatriz", "Vasco", "Marta", "Rui", "Leonor", "Pedro"],
    "es": ["Lucía", "Mateo", "Valentina", "Santiago", "Camila", "Diego", "Isabel", "Javier",
           "Martina", "Pablo", "Carmen", "Alejandro", "Elena", "Hugo", "Julia", "Manuel",
           "Nerea", "Óscar", "Pilar", "Raúl", "Sara", "Tomás", "Adriana", "Iker"],
    "de": ["Anna", "Ben", "Clara", "David", "Emil", "Frieda", "Greta", "Hannes", "Ida",
           "Jonas", "Karl", "Lena", "Moritz", "Nora", "Otto", "Paul", "Rita", "Stefan",
           "Theo", "Ute", "Volker", "Wilma", "Jürgen", "Klaus"],
    "fr": ["Amélie", "Bastien", "Chloé", "Damien", "Élise", "Fabien", "Gaëlle", "Hugo",
           "Inès", "Julien", "Léa", "Mathis", "Noémie", "Olivier", "Pauline", "Quentin",
           "Romain", "Sophie", "Thibault", "Valérie", "Yann", "Zoé", "Margaux", "Lucas"],
    "zh": ["王芳", "李娜", "张伟", "刘洋", "陈静", "杨帆", "赵磊", "黄敏", "周杰", "吴婷",
           "徐明", "孙丽", "马超", "朱琳", "胡斌", "郭强", "何欢", "高翔", "林峰", "罗曼",
           "梁宇", "宋佳", "郑凯", "谢晨"],
}  # fmt: skip

WORDS = {
    "en": ["apple", "river", "window", "garden", "letter", "market", "candle", "bridge",
           "pencil", "forest", "kettle", "ladder", "pocket", "harbor", "blanket", "mirror",
           "ticket", "basket", "lantern", "meadow"],
    "pt": ["maçã", "rio", "janela", "jardim", "carta", "mercado", "vela", "ponte", "lápis",
           "floresta", "chaleira", "escada", "bolso", "porto", "cobertor", "espelho",
           "bilhete", "cesto", "lanterna", "prado"],
    "es": ["manzana", "río", "ventana", "jardín", "carta", "mercado", "vela", "puente",
           "lápiz", "bosque", "tetera", "escalera", "bolsillo", "puerto", "manta", "espejo",
           "billete", "cesta", "farol", "prado"],
    "de": ["Apfel", "Fluss", "Fenster", "Garten", "Brief", "Markt", "Kerze", "Brücke",
           "Bleistift", "Wald", "Kessel", "Leiter", "Tasche", "Hafen", "Decke", "Spiegel",
           "Fahrkarte", "Korb", "Laterne", "Wiese"],
    "fr": ["pomme", "rivière", "fenêtre", "jardin", "lettre", "marché", "bougie", "pont",
           "crayon", "forêt", "bouilloire", "échelle", "poche", "port", "couverture",
           "miroir", "billet", "panier", "lanterne", "prairie"],
    "zh": ["苹果", "河流", "窗户", "花园", "信件", "市场", "蜡烛", "桥梁", "铅笔", "森林",
           "水壶", "梯子", "口袋", "港口", "毯子", "镜子", "车票", "篮子", "灯笼", "草地"],
}  # fmt: skip

STEMS = {  # file names: ASCII, so every tool and shell takes them as they are
    "en": ["notes", "report", "shopping", "budget", "diary", "todo", "recipes", "contacts",
           "ideas", "travel", "invoices", "plans"],
    "pt": ["notas", "relatorio", "compras", "orcamento", "diario", "tarefas", "receitas",
           "contatos", "ideias", "viagem", "faturas", "planos"],
    "es": ["notas", "informe", "compras", "presupuesto", "diario", "tareas", "recetas",
           "contactos", "ideas", "viaje", "facturas", "planes"],
    "de": ["notizen", "bericht", "einkauf", "budget", "tagebuch", "aufgaben", "rezepte",
           "kontakte", "ideen", "reise", "rechnungen", "plaene"],
    "fr": ["notes", "rapport", "courses", "budget", "journal", "taches", "recettes",
           "contacts", "idees", "voyage", "factures", "projets"],
    "zh": ["biji", "baogao", "gouwu", "yusuan", "riji", "daiban", "caipu", "lianxiren",
           "xiangfa", "lvxing", "fapiao", "jihua"],
}  # fmt: skip

FOLDERS = {
    "en": ["photos", "documents", "music", "archive", "work", "school", "projects", "backup"],
    "pt": ["fotos", "documentos", "musica", "arquivo", "trabalho", "escola", "projetos",
           "copias"],
    "es": ["fotos", "documentos", "musica", "archivo", "trabajo", "escuela", "proyectos",
           "copias"],
    "de": ["fotos", "dokumente", "musik", "archiv", "arbeit", "schule", "projekte",
           "sicherung"],
    "fr": ["photos", "documents", "musique", "archives", "travail", "ecole", "projets",
           "sauvegarde"],
    "zh": ["zhaopian", "wendang", "yinyue", "guidang", "gongzuo", "xuexi", "xiangmu",
           "beifen"],
}  # fmt: skip

CHORES = {
    "en": ["buy milk", "call the plumber", "water the plants", "pay the electricity bill",
           "book the dentist", "return the library books", "renew the passport",
           "clean the fridge"],
    "pt": ["comprar leite", "ligar para o encanador", "regar as plantas",
           "pagar a conta da luz", "marcar consulta no dentista",
           "devolver os livros da biblioteca", "renovar o passaporte", "limpar a geladeira"],
    "es": ["comprar leche", "llamar al fontanero", "regar las plantas", "pagar la luz",
           "pedir cita con el dentista", "devolver los libros a la biblioteca",
           "renovar el pasaporte", "limpiar la nevera"],
    "de": ["Milch kaufen", "den Klempner anrufen", "die Pflanzen gießen",
           "die Stromrechnung bezahlen", "einen Zahnarzttermin machen",
           "die Bücher zur Bibliothek bringen", "den Reisepass verlängern",
           "den Kühlschrank putzen"],
    "fr": ["acheter du lait", "appeler le plombier", "arroser les plantes",
           "payer la facture d'électricité", "prendre rendez-vous chez le dentiste",
           "rendre les livres à la bibliothèque", "renouveler le passeport",
           "nettoyer le frigo"],
    "zh": ["买牛奶", "给水管工打电话", "给植物浇水", "交电费", "预约牙医", "去图书馆还书",
           "续签护照", "清洗冰箱"],
}  # fmt: skip

CATEGORIES = {
    "en": ["food", "transport", "rent", "books", "health", "travel"],
    "pt": ["comida", "transporte", "aluguel", "livros", "saúde", "viagens"],
    "es": ["comida", "transporte", "alquiler", "libros", "salud", "viajes"],
    "de": ["Essen", "Verkehr", "Miete", "Bücher", "Gesundheit", "Reisen"],
    "fr": ["courses", "transport", "loyer", "livres", "santé", "voyages"],
    "zh": ["餐饮", "交通", "房租", "书籍", "医疗", "旅行"],
}  # fmt: skip

COLUMNS = {  # a table's name, category and amount columns
    "en": ("name", "category", "amount"), "pt": ("nome", "categoria", "valor"),
    "es": ("nombre", "categoría", "importe"), "de": ("Name", "Kategorie", "Betrag"),
    "fr": ("nom", "catégorie", "montant"), "zh": ("姓名", "类别", "金额"),
}  # fmt: skip

QUOTES = {
    "en": ('"', '"'), "pt": ('"', '"'), "es": ('"', '"'), "de": ("„", "“"),
    "fr": ("« ", " »"), "zh": ("“", "”"),
}  # fmt: skip

_CANNOT_EN = ["can't", "can’t", "cannot", "unable", "don't have", "don’t have",
              "do not have", "no access", "not able", "could not", "couldn't",
              "couldn’t"]  # fmt: skip
CANNOT = {  # an honest "I can't know that" (or "I could not find it"), short and general;
    # English too, as a model may answer in it; the third person too ("Lar ne peut pas …"),
    # in the past as well ("Lar no pudo acceder a …", as German's "konnte nicht")
    "en": _CANNOT_EN,
    "pt": ["não consigo", "não posso", "não tenho", "sem acesso", "não é possível",
           "não consegui", "não pude", "não pode", "não tem", "não pôde",
           "não conseguiu"] + _CANNOT_EN,
    "es": ["no puedo", "no tengo", "sin acceso", "no es posible", "no dispongo", "no pude",
           "no he podido", "no puede", "no tiene", "no pudo", "no ha podido"] + _CANNOT_EN,
    "de": ["kann ich nicht", "kann nicht", "kann keine", "keinen zugriff", "nicht möglich",
           "habe keine", "konnte nicht", "konnte kein"] + _CANNOT_EN,
    "fr": ["ne peux pas", "n'ai pas", "n’ai pas", "pas accès", "pas d'accès", "impossible",
           "ne peut pas", "n'a pas", "n’a pas"] + _CANNOT_EN,
    "zh": ["无法", "不能", "没有实时", "没有办法", "没有权限", "不支持"] + _CANNOT_EN,
}  # fmt: skip
