"""``web_page``: a shop's page served on 127.0.0.1 (a price list, an address, opening hours)
and one question about it: an item's price, the cheapest item, how many items are listed, or
the postcode. The page is in the request's language and the truth is computed from it.
"""

from __future__ import annotations

import html
import random
from decimal import Decimal

from lar.evals.everyday import Task

from .locale import NAMES, WORDS, Templates, ask, figures, make_task, written

__all__ = ["PAGES", "web_page"]

PAGES: Templates = {
    "en": {
        "price": ["How much does the {item} cost on {url}?",
                  "Look at {url}: what is the price of the {item}?"],
        "cheapest": ["Which item is the cheapest on {url}?",
                     "What is the least expensive thing sold on {url}?"],
        "count": ["How many items are on the price list at {url}?",
                  "Count the products listed on {url}."],
        "postcode": ["What is the postcode of the shop on {url}?",
                     "Read {url} and tell me the shop's postcode."],
    },
    "pt": {
        "price": ["Quanto custa {item} em {url}?", "Veja {url}: qual é o preço de {item}?"],
        "cheapest": ["Qual é o item mais barato em {url}?",
                     "O que é vendido mais barato em {url}?"],
        "count": ["Quantos itens há na lista de preços de {url}?",
                  "Conte os produtos listados em {url}."],
        "postcode": ["Qual é o código postal da loja em {url}?",
                     "Leia {url} e diga o código postal da loja."],
    },
    "es": {
        "price": ["¿Cuánto cuesta {item} en {url}?", "Mira {url}: ¿qué precio tiene {item}?"],
        "cheapest": ["¿Cuál es el artículo más barato en {url}?",
                     "¿Qué es lo más económico que venden en {url}?"],
        "count": ["¿Cuántos artículos hay en la lista de precios de {url}?",
                  "Cuenta los productos que aparecen en {url}."],
        "postcode": ["¿Cuál es el código postal de la tienda en {url}?",
                     "Lee {url} y dime el código postal de la tienda."],
    },
    "de": {
        "price": ["Wie viel kostet {item} laut {url}?", "Schau auf {url}: was kostet {item}?"],
        "cheapest": ["Welcher Artikel ist auf {url} am günstigsten?",
                     "Was ist das billigste Produkt auf {url}?"],
        "count": ["Wie viele Artikel stehen in der Preisliste auf {url}?",
                  "Zähl die Produkte auf {url}."],
        "postcode": ["Wie lautet die Postleitzahl des Ladens auf {url}?",
                     "Lies {url} und sag mir die Postleitzahl des Geschäfts."],
    },
    "fr": {
        "price": ["Combien coûte {item} sur {url} ?",
                  "Regarde {url} : quel est le prix de {item} ?"],
        "cheapest": ["Quel est l'article le moins cher sur {url} ?",
                     "Quel produit coûte le moins sur {url} ?"],
        "count": ["Combien d'articles y a-t-il dans la liste de prix de {url} ?",
                  "Compte les produits listés sur {url}."],
        "postcode": ["Quel est le code postal de la boutique sur {url} ?",
                     "Lis {url} et donne-moi le code postal de la boutique."],
    },
    "zh": {
        "price": ["{url}上{item}多少钱？", "看一下{url}：{item}的价格是多少？"],
        "cheapest": ["{url}上最便宜的商品是哪个？", "{url}卖的东西里哪样最便宜？"],
        "count": ["{url}的价目表上有多少种商品？", "数一下{url}上列出的商品。"],
        "postcode": ["{url}上那家店的邮政编码是多少？", "读一下{url}，告诉我这家店的邮编。"],
    },
}  # fmt: skip

# the page's own words: title, price-list heading, address and opening-hours labels
_PAGE = {
    "en": ("{name}'s shop", "Price list", "Address", "Opening hours", "Mon–Fri"),
    "pt": ("Loja de {name}", "Lista de preços", "Morada", "Horário", "seg–sex"),
    "es": ("Tienda de {name}", "Lista de precios", "Dirección", "Horario", "lun–vie"),
    "de": ("{name}s Laden", "Preisliste", "Adresse", "Öffnungszeiten", "Mo–Fr"),
    "fr": ("Boutique de {name}", "Liste des prix", "Adresse", "Horaires", "lun–ven"),
    "zh": ("{name}的小店", "价目表", "地址", "营业时间", "周一至周五"),
}  # fmt: skip
_STREETS = {
    "en": "{n} Mill Street, {code} Riverton", "pt": "Rua do Moinho {n}, {code} Vila Nova",
    "es": "Calle del Molino {n}, {code} Villanueva", "de": "Mühlenstraße {n}, {code} Neustadt",
    "fr": "{n} rue du Moulin, {code} Villeneuve", "zh": "新城区磨坊路{n}号，邮编 {code}",
}  # fmt: skip
_CURRENCY = {"en": "$", "pt": "€", "es": "€", "de": "€", "fr": "€", "zh": "¥"}


def _price(value: Decimal, lang: str) -> str:
    amount = written(value, lang, places=2)
    return f"{_CURRENCY[lang]}{amount}" if lang in ("en", "zh") else f"{amount} €"


def _page(name: str, items: list[tuple[str, Decimal]], address: str, lang: str) -> str:
    title, heading, where, hours, weekdays = _PAGE[lang]
    title = html.escape(title.format(name=name))
    rows = "".join(
        f"<tr><td>{html.escape(item)}</td><td>{_price(price, lang)}</td></tr>"
        for item, price in items
    )
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
        f"</head><body><h1>{title}</h1><h2>{heading}</h2><table>{rows}</table>"
        f"<p>{where}: {html.escape(address)}</p>"
        f"<p>{hours}: {weekdays} 9:00–18:00</p></body></html>"
    )


def web_page(rng: random.Random, lang: str) -> Task:
    """A shop's page and one question about it; the answer carries the value read there. The
    task allows calls that need a yes (see the end)."""
    kind = rng.choice(list(PAGES[lang]))
    # words long enough not to hide inside the page's other words ("rio" in "horário"), and
    # none inside another, so an answer naming one item never names a second by accident
    usable = [w for w in WORDS[lang] if len(w) >= 5 or lang == "zh"]
    names = rng.sample(usable, rng.randint(4, min(9, len(usable))))
    names = [n for n in names if not any(n != m and n in m for m in names)]
    prices = rng.sample(range(150, 9000), len(names))  # distinct, so one item is the cheapest
    items = [(n, Decimal(p) / 100) for n, p in zip(names, prices, strict=True)]
    code = str(rng.randint(10000, 99999))
    address = _STREETS[lang].format(n=rng.randint(2, 180), code=code)
    page = f"/{rng.choice(['shop', 'store', 'prices', 'menu'])}.html"
    item, price = rng.choice(items)
    request = ask(rng, PAGES, lang, kind, url="{base}" + page, item=item)
    truth: object
    if kind == "price":
        truth = figures(price, lang)
    elif kind == "cheapest":
        truth = min(items, key=lambda pair: pair[1])[0]
    elif kind == "count":
        truth = str(len(items))
    else:
        truth = code
    pages = {page: _page(rng.choice(NAMES[lang]), items, address, lang)}
    # The page stands for a site on the web, but it is served on 127.0.0.1, and Lar asks before
    # reaching a loopback or private address (web_scan's guard): allowed, the task measures
    # reading the page, as a peer's fetch (which has no such guard) does; nothing can change.
    return make_task("web_page", lang, request, {"has": [truth]}, pages=pages, yes=True)
