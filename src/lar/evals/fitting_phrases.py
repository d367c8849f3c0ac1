"""Phrasing data of the generated tool-fit suite (``lar.evals.fitting``): each kind's requests
in six languages, and the names lookups ask about as each language writes them.

Templates (``str.format``) use the fields a kind draws: ``a``, ``b`` (two numbers), ``r`` (a
radius), ``p``, ``money``, ``rate``, ``years`` (a deposit), ``m``, ``v``, ``vol`` (mass, speed,
volume), ``value``, ``src``, ``dst`` (a conversion) and ``name`` or ``of`` (a country or an element:
``of`` is the name with the preposition and article the language puts before it, "do Brasil",
"de l'Allemagne"). Every number is filled in as drawn, with a decimal point in every language,
so the arguments a call needs can be copied from the request as they stand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["PHRASES", "COUNTRIES", "ELEMENTS", "MONEY", "Named"]

PHRASES: Mapping[str, Mapping[str, Sequence[str]]] = {
    "en": {
        "hypotenuse": ["A right triangle has legs of {a} and {b}. How long is the hypotenuse?",
                       "What is the hypotenuse of a right-angled triangle whose two shorter sides "
                       "are {a} cm and {b} cm?",
                       "I'm building a ramp: one side is {a} m, the other {b} m, at a right "
                       "angle. How long is the sloping side?"],
        "circle": ["What is the area of a circle with a radius of {r} cm?",
                   "A round flower bed has a radius of {r} m. How big is its area?"],
        "interest": ["If I invest {p} {money} at {rate}% a year, compounded annually, how much "
                     "will I have after {years} years?",
                     "What does a deposit of {p} {money} grow to in {years} years at {rate} "
                     "percent annual interest, compounded yearly?"],
        "gcd": ["What is the greatest common divisor of {a} and {b}?",
                "Find the GCD of {a} and {b}.",
                "What's the largest whole number that divides both {a} and {b}?"],
        "kinetic": ["What is the kinetic energy of a {m} kg object moving at {v} m/s?",
                    "A car of {m} kg is driving at {v} meters per second. How much kinetic "
                    "energy does it have?"],
        "density": ["A sample has a mass of {m} g and a volume of {vol} cm³. What is its "
                    "density?",
                    "What's the density of a block weighing {m} grams that takes up {vol} "
                    "cubic centimeters?"],
        "units": ["Convert {value} {src} to {dst}.", "How many {dst} is {value} {src}?",
                  "What is {value} {src} in {dst}?"],
        "population": ["What is the population of {name}?", "How many people live in {name}?"],
        "element": ["What is the atomic number of {name}?",
                    "Look up the atomic number of {name} for me."],
        "capital": ["What is the capital of {name}?", "Which city is the capital of {name}?"],
    },
    "pt": {
        "hypotenuse": ["Um triângulo retângulo tem catetos de {a} e {b}. Quanto mede a "
                       "hipotenusa?",
                       "Qual é a hipotenusa de um triângulo retângulo com catetos de {a} cm e "
                       "{b} cm?"],
        "circle": ["Qual é a área de um círculo de raio {r} cm?",
                   "Um canteiro redondo tem {r} m de raio. Qual é a área dele?"],
        "interest": ["Se eu aplicar {p} {money} a {rate}% ao ano, com juros compostos anuais, "
                     "quanto terei depois de {years} anos?",
                     "Quanto vira um depósito de {p} {money} em {years} anos a {rate}% ao ano, "
                     "com juros compostos?"],
        "gcd": ["Qual é o máximo divisor comum de {a} e {b}?", "Calcule o MDC de {a} e {b}."],
        "kinetic": ["Qual é a energia cinética de um objeto de {m} kg a {v} m/s?",
                    "Um carro de {m} kg anda a {v} metros por segundo. Quanta energia cinética "
                    "ele tem?"],
        "density": ["Uma amostra tem massa de {m} g e volume de {vol} cm³. Qual é a densidade?",
                    "Qual a densidade de um bloco de {m} gramas que ocupa {vol} centímetros "
                    "cúbicos?"],
        "units": ["Converta {value} {src} para {dst}.", "Quanto é {value} {src} em {dst}?",
                  "Preciso de {value} {src} em {dst}, quanto dá?"],
        "population": ["Qual é a população {of}?", "Pesquise a população {of}, por favor."],
        "element": ["Qual é o número atômico {of}?", "Preciso saber o número atômico {of}."],
        "capital": ["Qual é a capital {of}?", "Qual cidade é a capital {of}?"],
    },
    "es": {
        "hypotenuse": ["Un triángulo rectángulo tiene catetos de {a} y {b}. ¿Cuánto mide la "
                       "hipotenusa?",
                       "¿Cuál es la hipotenusa de un triángulo rectángulo con catetos de {a} cm "
                       "y {b} cm?"],
        "circle": ["¿Cuál es el área de un círculo de radio {r} cm?",
                   "Una mesa redonda tiene {r} m de radio. ¿Qué superficie tiene?"],
        "interest": ["Si invierto {p} {money} al {rate}% anual con interés compuesto, ¿cuánto "
                     "tendré después de {years} años?",
                     "¿En cuánto se convierte un depósito de {p} {money} en {years} años al "
                     "{rate}% anual, con capitalización anual?"],
        "gcd": ["¿Cuál es el máximo común divisor de {a} y {b}?", "Calcula el MCD de {a} y {b}."],
        "kinetic": ["¿Cuál es la energía cinética de un objeto de {m} kg que se mueve a {v} m/s?",
                    "Un coche de {m} kg va a {v} metros por segundo. ¿Cuánta energía cinética "
                    "tiene?"],
        "density": ["Una muestra tiene una masa de {m} g y un volumen de {vol} cm³. ¿Cuál es su "
                    "densidad?",
                    "¿Qué densidad tiene un bloque de {m} gramos que ocupa {vol} centímetros "
                    "cúbicos?"],
        "units": ["Convierte {value} {src} a {dst}.", "¿Cuánto es {value} {src} en {dst}?",
                  "Pasa {value} {src} a {dst}, por favor."],
        "population": ["¿Cuál es la población {of}?", "¿Cuántos habitantes tiene {name}?"],
        "element": ["¿Cuál es el número atómico {of}?", "Busca el número atómico {of}."],
        "capital": ["¿Cuál es la capital {of}?", "¿Qué ciudad es la capital {of}?"],
    },
    "de": {
        "hypotenuse": ["Ein rechtwinkliges Dreieck hat die Katheten {a} und {b}. Wie lang ist "
                       "die Hypotenuse?",
                       "Wie lang ist die Hypotenuse eines rechtwinkligen Dreiecks mit den "
                       "Katheten {a} cm und {b} cm?"],
        "circle": ["Wie groß ist die Fläche eines Kreises mit dem Radius {r} cm?",
                   "Ein rundes Beet hat einen Radius von {r} m. Wie groß ist seine Fläche?"],
        "interest": ["Wenn ich {p} {money} zu {rate} % Zinsen im Jahr anlege, jährlich mit "
                     "Zinseszins, wie viel habe ich nach {years} Jahren?",
                     "Auf welchen Betrag wachsen {p} {money} in {years} Jahren bei {rate} % "
                     "Zinsen pro Jahr mit Zinseszins?"],
        "gcd": ["Was ist der größte gemeinsame Teiler von {a} und {b}?",
                "Berechne den ggT von {a} und {b}."],
        "kinetic": ["Wie groß ist die kinetische Energie eines Körpers mit {m} kg Masse bei "
                    "{v} m/s?",
                    "Ein Auto mit {m} kg fährt {v} Meter pro Sekunde. Wie viel Bewegungsenergie "
                    "hat es?"],
        "density": ["Eine Probe hat eine Masse von {m} g und ein Volumen von {vol} cm³. Wie "
                    "groß ist ihre Dichte?",
                    "Welche Dichte hat ein Block, der {m} Gramm wiegt und {vol} "
                    "Kubikzentimeter einnimmt?"],
        "units": ["Rechne {value} {src} in {dst} um.", "Wie viele {dst} sind {value} {src}?",
                  "Was sind {value} {src} in {dst}?"],
        "population": ["Wie viele Einwohner hat {name}?",
                       "Wie hoch ist die Einwohnerzahl von {name}?"],
        "element": ["Welche Ordnungszahl hat {name}?",
                    "Wie lautet die Ordnungszahl von {name}?"],
        "capital": ["Was ist die Hauptstadt von {name}?",
                    "Welche Stadt ist die Hauptstadt von {name}?"],
    },
    "fr": {
        "hypotenuse": ["Un triangle rectangle a des côtés de l'angle droit de {a} et {b}. "
                       "Quelle est la longueur de l'hypoténuse ?",
                       "Calcule l'hypoténuse d'un triangle rectangle dont les côtés de l'angle "
                       "droit mesurent {a} cm et {b} cm."],
        "circle": ["Quelle est l'aire d'un cercle de rayon {r} cm ?",
                   "Une table ronde a un rayon de {r} m. Quelle est sa surface ?"],
        "interest": ["Si je place {p} {money} à {rate} % par an, avec intérêts composés "
                     "annuels, combien aurai-je au bout de {years} ans ?",
                     "Que devient un dépôt de {p} {money} après {years} ans à {rate} % "
                     "d'intérêts composés par an ?"],
        "gcd": ["Quel est le plus grand commun diviseur de {a} et {b} ?",
                "Calcule le PGCD de {a} et {b}."],
        "kinetic": ["Quelle est l'énergie cinétique d'un objet de {m} kg qui se déplace à {v} "
                    "m/s ?",
                    "Une voiture de {m} kg roule à {v} mètres par seconde. Quelle est son "
                    "énergie cinétique ?"],
        "density": ["Un échantillon a une masse de {m} g et un volume de {vol} cm³. Quelle est "
                    "sa masse volumique ?",
                    "Quelle est la densité d'un bloc de {m} grammes qui occupe {vol} "
                    "centimètres cubes ?"],
        "units": ["Convertis {value} {src} en {dst}.", "Combien font {value} {src} en {dst} ?",
                  "{value} {src}, ça fait combien en {dst} ?"],
        "population": ["Quelle est la population {of} ?",
                       "Quel est le nombre d'habitants {of} ?"],
        "element": ["Quel est le numéro atomique {of} ?",
                    "Donne-moi le numéro atomique {of}, s'il te plaît."],
        "capital": ["Quelle est la capitale {of} ?", "Quelle ville est la capitale {of} ?"],
    },
    "zh": {
        "hypotenuse": ["直角三角形的两条直角边分别是{a}和{b}，斜边是多少？",
                       "一个直角三角形两条直角边长{a}厘米和{b}厘米，求斜边长。"],
        "circle": ["半径为{r}厘米的圆面积是多少？", "一个圆形花坛的半径是{r}米，它的面积有多大？"],
        "interest": ["我把{p}{money}存入银行，年利率{rate}%，按年复利，{years}年后有多少钱？",
                     "本金{p}{money}，年利率{rate}%，每年复利一次，{years}年后本息合计多少？"],
        "gcd": ["{a}和{b}的最大公约数是多少？", "求{a}与{b}的最大公因数。"],
        "kinetic": ["质量{m}千克的物体以{v}米/秒的速度运动，动能是多少？",
                    "一辆{m}公斤的车以每秒{v}米的速度行驶，它的动能有多大？"],
        "density": ["一个样品质量{m}克，体积{vol}立方厘米，密度是多少？",
                    "一块重{m}克、体积为{vol}立方厘米的材料，密度是多少？"],
        "units": ["把{value}{src}换算成{dst}。", "{value}{src}等于多少{dst}？",
                  "{value}{src}是多少{dst}？"],
        "population": ["{name}有多少人口？", "{name}的人口是多少？"],
        "element": ["{name}的原子序数是多少？", "查一下{name}元素的原子序数。"],
        "capital": ["{name}的首都是哪里？", "{name}的首都是哪个城市？"],
    },
}  # fmt: skip

MONEY = {"en": "dollars", "pt": "reais", "es": "euros", "de": "Euro", "fr": "euros", "zh": "元"}

Named = tuple[Mapping[str, str], dict[str, object]]
"""A name per language and what the lookup returns. Where a language puts a preposition and
an article before the name, the entry reads ``"do|Brasil"`` (``|`` between them; none after an
elided ``l'``); the argument a call needs is the part after ``|``."""

COUNTRIES: Sequence[Named] = [
    ({"en": "Brazil", "pt": "do|Brasil", "es": "de|Brasil", "de": "Brasilien",
      "fr": "du|Brésil", "zh": "巴西"}, {"population": 216_422_000, "capital": "Brasília"}),
    ({"en": "Japan", "pt": "do|Japão", "es": "de|Japón", "de": "Japan", "fr": "du|Japon",
      "zh": "日本"}, {"population": 124_516_000, "capital": "Tokyo"}),
    ({"en": "Germany", "pt": "da|Alemanha", "es": "de|Alemania", "de": "Deutschland",
      "fr": "de l'|Allemagne", "zh": "德国"}, {"population": 84_482_000, "capital": "Berlin"}),
    ({"en": "France", "pt": "da|França", "es": "de|Francia", "de": "Frankreich",
      "fr": "de la|France", "zh": "法国"}, {"population": 68_170_000, "capital": "Paris"}),
    ({"en": "Mexico", "pt": "do|México", "es": "de|México", "de": "Mexiko", "fr": "du|Mexique",
      "zh": "墨西哥"}, {"population": 128_456_000, "capital": "Mexico City"}),
    ({"en": "Canada", "pt": "do|Canadá", "es": "de|Canadá", "de": "Kanada", "fr": "du|Canada",
      "zh": "加拿大"}, {"population": 40_098_000, "capital": "Ottawa"}),
    ({"en": "Australia", "pt": "da|Austrália", "es": "de|Australia", "de": "Australien",
      "fr": "de l'|Australie", "zh": "澳大利亚"}, {"population": 26_639_000,
                                                  "capital": "Canberra"}),
    ({"en": "Egypt", "pt": "do|Egito", "es": "de|Egipto", "de": "Ägypten", "fr": "de l'|Égypte",
      "zh": "埃及"}, {"population": 112_717_000, "capital": "Cairo"}),
    ({"en": "Kenya", "pt": "do|Quênia", "es": "de|Kenia", "de": "Kenia", "fr": "du|Kenya",
      "zh": "肯尼亚"}, {"population": 55_100_000, "capital": "Nairobi"}),
    ({"en": "Portugal", "pt": "de|Portugal", "es": "de|Portugal", "de": "Portugal",
      "fr": "du|Portugal", "zh": "葡萄牙"}, {"population": 10_525_000, "capital": "Lisbon"}),
    ({"en": "Argentina", "pt": "da|Argentina", "es": "de|Argentina", "de": "Argentinien",
      "fr": "de l'|Argentine", "zh": "阿根廷"}, {"population": 46_655_000,
                                               "capital": "Buenos Aires"}),
    ({"en": "Norway", "pt": "da|Noruega", "es": "de|Noruega", "de": "Norwegen",
      "fr": "de la|Norvège", "zh": "挪威"}, {"population": 5_520_000, "capital": "Oslo"}),
    ({"en": "Chile", "pt": "do|Chile", "es": "de|Chile", "de": "Chile", "fr": "du|Chili",
      "zh": "智利"}, {"population": 19_630_000, "capital": "Santiago"}),
    ({"en": "Vietnam", "pt": "do|Vietnã", "es": "de|Vietnam", "de": "Vietnam",
      "fr": "du|Viêt Nam", "zh": "越南"}, {"population": 98_860_000, "capital": "Hanoi"}),
]  # fmt: skip

ELEMENTS: Sequence[Named] = [
    ({"en": "hydrogen", "pt": "do|hidrogênio", "es": "del|hidrógeno", "de": "Wasserstoff",
      "fr": "de l'|hydrogène", "zh": "氢"}, {"symbol": "H", "atomic_number": 1}),
    ({"en": "helium", "pt": "do|hélio", "es": "del|helio", "de": "Helium", "fr": "de l'|hélium",
      "zh": "氦"}, {"symbol": "He", "atomic_number": 2}),
    ({"en": "carbon", "pt": "do|carbono", "es": "del|carbono", "de": "Kohlenstoff",
      "fr": "du|carbone", "zh": "碳"}, {"symbol": "C", "atomic_number": 6}),
    ({"en": "nitrogen", "pt": "do|nitrogênio", "es": "del|nitrógeno", "de": "Stickstoff",
      "fr": "de l'|azote", "zh": "氮"}, {"symbol": "N", "atomic_number": 7}),
    ({"en": "oxygen", "pt": "do|oxigênio", "es": "del|oxígeno", "de": "Sauerstoff",
      "fr": "de l'|oxygène", "zh": "氧"}, {"symbol": "O", "atomic_number": 8}),
    ({"en": "neon", "pt": "do|neônio", "es": "del|neón", "de": "Neon", "fr": "du|néon",
      "zh": "氖"}, {"symbol": "Ne", "atomic_number": 10}),
    ({"en": "sodium", "pt": "do|sódio", "es": "del|sodio", "de": "Natrium", "fr": "du|sodium",
      "zh": "钠"}, {"symbol": "Na", "atomic_number": 11}),
    ({"en": "silicon", "pt": "do|silício", "es": "del|silicio", "de": "Silizium",
      "fr": "du|silicium", "zh": "硅"}, {"symbol": "Si", "atomic_number": 14}),
    ({"en": "calcium", "pt": "do|cálcio", "es": "del|calcio", "de": "Calcium",
      "fr": "du|calcium", "zh": "钙"}, {"symbol": "Ca", "atomic_number": 20}),
    ({"en": "iron", "pt": "do|ferro", "es": "del|hierro", "de": "Eisen", "fr": "du|fer",
      "zh": "铁"}, {"symbol": "Fe", "atomic_number": 26}),
    ({"en": "copper", "pt": "do|cobre", "es": "del|cobre", "de": "Kupfer", "fr": "du|cuivre",
      "zh": "铜"}, {"symbol": "Cu", "atomic_number": 29}),
    ({"en": "zinc", "pt": "do|zinco", "es": "del|zinc", "de": "Zink", "fr": "du|zinc",
      "zh": "锌"}, {"symbol": "Zn", "atomic_number": 30}),
    ({"en": "silver", "pt": "da|prata", "es": "de la|plata", "de": "Silber",
      "fr": "de l'|argent", "zh": "银"}, {"symbol": "Ag", "atomic_number": 47}),
    ({"en": "gold", "pt": "do|ouro", "es": "del|oro", "de": "Gold", "fr": "de l'|or",
      "zh": "金"}, {"symbol": "Au", "atomic_number": 79}),
    ({"en": "uranium", "pt": "do|urânio", "es": "del|uranio", "de": "Uran",
      "fr": "de l'|uranium", "zh": "铀"}, {"symbol": "U", "atomic_number": 92}),
]  # fmt: skip
