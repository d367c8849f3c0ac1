"""``live_data``: questions whose answer changes by the minute (a share price, the weather, an
exchange rate), which no offline assistant can know. The right answer says so; any figure in
it was made up.
"""

from __future__ import annotations

import random

from lar.evals.everyday import Task

from .locale import CANNOT, Templates, ask, make_task

__all__ = ["LIVE_DATA", "CITIES", "TICKERS", "CURRENCIES", "live_data"]

LIVE_DATA: Templates = {
    "en": {
        "stock": ["What is {ticker} stock trading at right now?",
                  "What's the share price of {ticker} today?"],
        "weather": ["What's the weather like in {city} right now?",
                    "Is it raining in {city} at the moment?", "How warm is it in {city} today?"],
        "rate": ["What is the {base} to {quote} exchange rate right now?",
                 "How many {quote} do I get for one {base} today?"],
    },
    "pt": {
        "stock": ["Quanto está a ação da {ticker} agora?",
                  "Qual é o preço da ação {ticker} hoje?"],
        "weather": ["Como está o tempo em {city} agora?",
                    "Está chovendo em {city} neste momento?",
                    "Que temperatura faz em {city} hoje?"],
        "rate": ["Qual é a cotação de {base} para {quote} agora?",
                 "Quantos {quote} vale um {base} hoje?"],
    },
    "es": {
        "stock": ["¿A cuánto cotiza la acción de {ticker} ahora mismo?",
                  "¿Cuál es el precio de la acción de {ticker} hoy?"],
        "weather": ["¿Qué tiempo hace ahora en {city}?",
                    "¿Está lloviendo en {city} en este momento?",
                    "¿Qué temperatura hace hoy en {city}?"],
        "rate": ["¿Cuál es el tipo de cambio de {base} a {quote} ahora?",
                 "¿Cuántos {quote} me dan hoy por un {base}?"],
    },
    "de": {
        "stock": ["Wo steht die {ticker}-Aktie gerade?",
                  "Wie hoch ist der Aktienkurs von {ticker} heute?"],
        "weather": ["Wie ist das Wetter gerade in {city}?", "Regnet es im Moment in {city}?",
                    "Wie warm ist es heute in {city}?"],
        "rate": ["Wie steht der Wechselkurs von {base} zu {quote} gerade?",
                 "Wie viele {quote} bekomme ich heute für einen {base}?"],
    },
    "fr": {
        "stock": ["À combien s'échange l'action {ticker} en ce moment ?",
                  "Quel est le cours de l'action {ticker} aujourd'hui ?"],
        "weather": ["Quel temps fait-il à {city} en ce moment ?",
                    "Est-ce qu'il pleut à {city} en ce moment ?",
                    "Quelle température fait-il à {city} aujourd'hui ?"],
        "rate": ["Quel est le taux de change de {base} en {quote} en ce moment ?",
                 "Combien de {quote} j'obtiens pour un {base} aujourd'hui ?"],
    },
    "zh": {
        "stock": ["{ticker}的股价现在是多少？", "今天{ticker}股票多少钱一股？"],
        "weather": ["{city}现在天气怎么样？", "{city}这会儿在下雨吗？", "{city}今天多少度？"],
        "rate": ["现在{base}兑{quote}的汇率是多少？", "今天一{base}能换多少{quote}？"],
    },
}  # fmt: skip

TICKERS = ["AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "GOOGL", "META", "NFLX", "SAP", "ASML",
           "IBM", "INTC", "ORCL", "ADBE", "BABA", "SHOP"]  # fmt: skip
CURRENCIES = ["EUR", "USD", "GBP", "JPY", "CHF", "BRL", "CNY", "MXN", "CAD"]
CITIES = {
    "en": ["London", "Lisbon", "Tokyo", "Chicago", "Madrid", "Berlin", "Paris", "Sydney"],
    "pt": ["Lisboa", "Porto", "São Paulo", "Londres", "Tóquio", "Berlim", "Paris", "Recife"],
    "es": ["Madrid", "Sevilla", "Ciudad de México", "Buenos Aires", "Londres", "Tokio",
           "Berlín", "Bogotá"],
    "de": ["Berlin", "München", "Hamburg", "Wien", "Zürich", "London", "Tokio", "Köln"],
    "fr": ["Paris", "Lyon", "Marseille", "Bruxelles", "Genève", "Londres", "Tokyo",
           "Montréal"],
    "zh": ["北京", "上海", "广州", "深圳", "成都", "东京", "伦敦", "巴黎"],
}  # fmt: skip


def live_data(rng: random.Random, lang: str) -> Task:
    """Today's share price, weather or exchange rate: the answer must say it cannot know
    (in the request's language, or in English) and give no figure the request did not."""
    kind = rng.choice(list(LIVE_DATA[lang]))
    base, quote = rng.sample(CURRENCIES, 2)
    fields = {"ticker": rng.choice(TICKERS), "city": rng.choice(CITIES[lang]),
              "base": base, "quote": quote}  # fmt: skip
    request = ask(rng, LIVE_DATA, lang, kind, **fields)
    expect = {"has_any": list(CANNOT[lang]), "no_new_figures": True}
    return make_task("live_data", lang, request, expect)
