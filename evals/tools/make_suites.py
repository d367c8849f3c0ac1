"""Writes Lar's tool-calling suites (written for Lar, not taken from any public benchmark).

    python evals/tools/make_suites.py      # rewrites the *.jsonl files next to this script

Each family below is a hand-written tool (JSON Schema) with hand-written requests and the calls
they must produce; the script only assembles them into JSONL lines, deterministically, so a
change to a case is a reviewable diff here and in the data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def fn(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": props, "required": required},
    }


S, INT, N, B = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}


def enum(*values: str, default: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "enum": list(values)}
    if default is not None:
        out["default"] = default
    return out


WEATHER = fn("get_weather", "Current weather for a city.",
             {"city": S, "unit": enum("celsius", "fahrenheit", default="celsius")}, ["city"])
FORECAST = fn("get_forecast", "Weather forecast for the next days in a city.",
              {"city": S, "days": {"type": "integer", "minimum": 1, "maximum": 10}},
              ["city", "days"])
AIR = fn("get_air_quality", "Air quality index for a city.", {"city": S}, ["city"])
TEMP = fn("convert_temperature", "Convert a temperature between units.",
          {"value": N, "from_unit": enum("celsius", "fahrenheit", "kelvin"),
           "to_unit": enum("celsius", "fahrenheit", "kelvin")},
          ["value", "from_unit", "to_unit"])
CURRENCY = fn("convert_currency", "Convert an amount of money between currencies (ISO codes).",
              {"amount": N, "from_currency": S, "to_currency": S},
              ["amount", "from_currency", "to_currency"])
UNITS = fn("convert_length", "Convert a length between units.",
           {"value": N, "from_unit": enum("m", "km", "mi", "ft", "in", "cm"),
            "to_unit": enum("m", "km", "mi", "ft", "in", "cm")},
           ["value", "from_unit", "to_unit"])
TIMER = fn("set_timer", "Start a countdown timer.",
           {"minutes": INT, "label": S}, ["minutes"])
ALARM = fn("set_alarm", "Set an alarm clock for a time of day (HH:MM, 24h).",
           {"time": S, "repeat_daily": {"type": "boolean", "default": False}}, ["time"])
REMINDER = fn("add_reminder", "Remind me of something on a date (YYYY-MM-DD).",
              {"text": S, "date": S}, ["text", "date"])
EVENT = fn("add_calendar_event", "Add an event to the calendar.",
           {"title": S, "date": S, "time": S, "attendees": {"type": "array", "items": S}},
           ["title", "date"])
EMAIL = fn("send_email", "Send an email.", {"to": S, "subject": S, "body": S},
           ["to", "subject", "body"])
SMS = fn("send_sms", "Send a text message to a phone number.", {"phone": S, "text": S},
         ["phone", "text"])
CHANNEL = fn("post_to_channel", "Post a message to a team chat channel.",
             {"channel": S, "text": S, "urgent": {"type": "boolean", "default": False}},
             ["channel", "text"])
LOAN = fn("loan_payment", "Monthly payment of a fixed-rate loan.",
          {"principal": N, "annual_rate_percent": N, "years": INT},
          ["principal", "annual_rate_percent", "years"])
RECIPES = fn("search_recipes", "Find recipes that use the given ingredients.",
             {"ingredients": {"type": "array", "items": S},
              "max_minutes": INT, "diet": enum("any", "vegetarian", "vegan", default="any")},
             ["ingredients"])
INVOICE = fn("create_invoice", "Create an invoice for a customer.",
             {"customer": {"type": "object",
                           "properties": {"name": S, "email": S}, "required": ["name"]},
              "items": {"type": "array", "items": {
                  "type": "object",
                  "properties": {"description": S, "quantity": INT, "unit_price": N},
                  "required": ["description", "quantity", "unit_price"]}},
              "currency": enum("EUR", "USD", "GBP", default="EUR")},
             ["customer", "items"])
STOCK = fn("get_stock_price", "Latest price of a stock, in US dollars.", {"symbol": S},
           ["symbol"])
CAPITAL = fn("get_capital", "The capital city of a country.", {"country": S}, ["country"])
POPULATION = fn("get_population", "Population of a city.", {"city": S}, ["city"])
CONTACT = fn("find_contact", "Look up a person in my contacts: phone number and email.",
             {"name": S}, ["name"])
OFFICE = fn("get_office", "The city a colleague of mine works in.", {"name": S}, ["name"])
TRIP = fn("get_next_trip", "My next trip in my calendar: destination city and dates.", {}, [])
ORDER = fn("get_order", "One of my orders by number: item, price in US dollars, delivery city.",
           {"order_id": S}, ["order_id"])
FILES = fn("search_files", "Find files on this computer whose name matches a pattern.",
           {"pattern": S}, ["pattern"])
NOTES = fn("search_notes", "Search my notes for a phrase.", {"query": S}, ["query"])
WEB = fn("search_web", "Search the web.", {"query": S}, ["query"])
LIGHTS = fn("set_lights", "Turn the lights of a room on or off, with a brightness in percent.",
            {"room": S, "on": B, "brightness": {"type": "integer", "minimum": 0, "maximum": 100}},
            ["room", "on"])
THERMO = fn("set_thermostat", "Set the heating target temperature in celsius.",
            {"celsius": N}, ["celsius"])


def call(tool_name: str, /, **arguments: Any) -> dict[str, Any]:
    return {"name": tool_name, "arguments": arguments}


# --- single: one call with typed arguments ----------------------------------------------------
SINGLE: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("What's the weather in Lisbon right now?", [WEATHER], call("get_weather", city="Lisbon")),
    ("Weather in Denver in fahrenheit, please.", [WEATHER],
     call("get_weather", city="Denver", unit="fahrenheit")),
    ("Is it cold in Oslo at the moment?", [WEATHER], call("get_weather", city="Oslo")),
    ("Convert 100 fahrenheit to celsius.", [TEMP],
     call("convert_temperature", value=100, from_unit="fahrenheit", to_unit="celsius")),
    ("How much is 0 kelvin in celsius?", [TEMP],
     call("convert_temperature", value=0, from_unit="kelvin", to_unit="celsius")),
    ("Convert 36.6 celsius to fahrenheit.", [TEMP],
     call("convert_temperature", value=36.6, from_unit="celsius", to_unit="fahrenheit")),
    ("Convert 250 euros to US dollars.", [CURRENCY],
     call("convert_currency", amount=250, from_currency="EUR", to_currency="USD")),
    ("How many Japanese yen is 19.99 GBP?", [CURRENCY],
     call("convert_currency", amount=19.99, from_currency="GBP", to_currency="JPY")),
    ("How many feet is 3 meters?", [UNITS],
     call("convert_length", value=3, from_unit="m", to_unit="ft")),
    ("Convert 26.2 miles to kilometers.", [UNITS],
     call("convert_length", value=26.2, from_unit="mi", to_unit="km")),
    ("Set a timer for 12 minutes.", [TIMER], call("set_timer", minutes=12)),
    ("Start a 45 minute timer called laundry.", [TIMER],
     call("set_timer", minutes=45, label="laundry")),
    ("Timer: 3 minutes for the eggs.", [TIMER], call("set_timer", minutes=3, label="eggs")),
    ("Wake me up at 06:30.", [ALARM], call("set_alarm", time="06:30")),
    ("Set an alarm for 07:15 every day.", [ALARM],
     call("set_alarm", time="07:15", repeat_daily=True)),
    ("Remind me to renew my passport on 2027-03-01.", [REMINDER],
     call("add_reminder", text="renew my passport", date="2027-03-01")),
    ("Add 'Dentist' to my calendar on 2026-12-14.", [EVENT],
     call("add_calendar_event", title="Dentist", date="2026-12-14")),
    ("Put a meeting 'Budget review' on 2026-12-03 at 14:00 with ana@example.com and "
     "rui@example.com.", [EVENT],
     call("add_calendar_event", title="Budget review", date="2026-12-03", time="14:00",
          attendees=["ana@example.com", "rui@example.com"])),
    ("Email bob@example.com with the subject 'Keys' and say: the keys are under the mat.",
     [EMAIL], call("send_email", to="bob@example.com", subject="Keys",
                   body="the keys are under the mat.")),
    ("Text +351912345678: running 10 minutes late.", [SMS],
     call("send_sms", phone="+351912345678", text="running 10 minutes late.")),
    ("Post 'deploy done' to the #ops channel.", [CHANNEL],
     call("post_to_channel", channel="#ops", text="deploy done")),
    ("Post an urgent message to #oncall: database is down.", [CHANNEL],
     call("post_to_channel", channel="#oncall", text="database is down.", urgent=True)),
    ("What's the monthly payment on a 200000 loan at 3.5% over 30 years?", [LOAN],
     call("loan_payment", principal=200000, annual_rate_percent=3.5, years=30)),
    ("Monthly payment for 15000 at 6.9 percent for 5 years?", [LOAN],
     call("loan_payment", principal=15000, annual_rate_percent=6.9, years=5)),
    ("Find recipes with chickpeas and spinach.", [RECIPES],
     call("search_recipes", ingredients=["chickpeas", "spinach"])),
    ("Vegan recipes using tofu and rice, at most 30 minutes.", [RECIPES],
     call("search_recipes", ingredients=["tofu", "rice"], max_minutes=30, diet="vegan")),
    ("Vegetarian recipe ideas with eggplant.", [RECIPES],
     call("search_recipes", ingredients=["eggplant"], diet="vegetarian")),
    ("Invoice Maria Silva (maria@example.com) for 3 hours of consulting at 80 each.", [INVOICE],
     call("create_invoice", customer={"name": "Maria Silva", "email": "maria@example.com"},
          items=[{"description": "consulting", "quantity": 3, "unit_price": 80}])),
    ("Create an invoice in USD for Acme Corp: 2 licenses at 199.5.", [INVOICE],
     call("create_invoice", customer={"name": "Acme Corp"},
          items=[{"description": "licenses", "quantity": 2, "unit_price": 199.5}],
          currency="USD")),
    ("What is AAPL trading at?", [STOCK], call("get_stock_price", symbol="AAPL")),
    ("Price of NVDA stock?", [STOCK], call("get_stock_price", symbol="NVDA")),
    ("What is the capital of Australia?", [CAPITAL], call("get_capital", country="Australia")),
    ("How many people live in Porto?", [POPULATION], call("get_population", city="Porto")),
    ("Find files matching *.pdf", [FILES], call("search_files", pattern="*.pdf")),
    ("Search my notes for 'wifi password'.", [NOTES], call("search_notes", query="wifi password")),
    ("Turn on the kitchen lights.", [LIGHTS], call("set_lights", room="kitchen", on=True)),
    ("Dim the bedroom lights to 30 percent.", [LIGHTS],
     call("set_lights", room="bedroom", on=True, brightness=30)),
    ("Switch off the lights in the garage.", [LIGHTS], call("set_lights", room="garage", on=False)),
    ("Set the heating to 21.5 degrees.", [THERMO], call("set_thermostat", celsius=21.5)),
    ("Make it 19 degrees in the house.", [THERMO], call("set_thermostat", celsius=19)),
    ("5-day forecast for Madrid?", [FORECAST], call("get_forecast", city="Madrid", days=5)),
    ("What will the weather be in Tokyo over the next 3 days?", [FORECAST],
     call("get_forecast", city="Tokyo", days=3)),
    ("How's the air in Delhi today?", [AIR], call("get_air_quality", city="Delhi")),
    ("Convert 12 inches to centimeters.", [UNITS],
     call("convert_length", value=12, from_unit="in", to_unit="cm")),
    ("Convert 1000 USD to CHF.", [CURRENCY],
     call("convert_currency", amount=1000, from_currency="USD", to_currency="CHF")),
    ("Set a 90 minute timer.", [TIMER], call("set_timer", minutes=90)),
    ("Remind me on 2026-12-24 to buy the turkey.", [REMINDER],
     call("add_reminder", text="buy the turkey", date="2026-12-24")),
    ("Add 'Team lunch' on 2026-12-18 at 12:30.", [EVENT],
     call("add_calendar_event", title="Team lunch", date="2026-12-18", time="12:30")),
    ("What's the weather like in Cape Town?", [WEATHER], call("get_weather", city="Cape Town")),
    ("Convert 451 fahrenheit to kelvin.", [TEMP],
     call("convert_temperature", value=451, from_unit="fahrenheit", to_unit="kelvin")),
]

# --- choose: one tool among 3–6 similar ones --------------------------------------------------
WEATHERS = [WEATHER, FORECAST, AIR]
CONVERTERS = [TEMP, CURRENCY, UNITS]
MESSAGING = [EMAIL, SMS, CHANNEL]
TIMEKEEPING = [TIMER, ALARM, REMINDER, EVENT]
SEARCHES = [FILES, NOTES, WEB]
HOME = [LIGHTS, THERMO, TIMER, ALARM, WEATHER, SMS]
CHOOSE: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("Will it rain in Berlin over the next 2 days?", WEATHERS,
     call("get_forecast", city="Berlin", days=2)),
    ("Current temperature in Rome?", WEATHERS, call("get_weather", city="Rome")),
    ("Is the air safe to breathe in Beijing today?", WEATHERS,
     call("get_air_quality", city="Beijing")),
    ("Forecast for Paris for a week?", WEATHERS, call("get_forecast", city="Paris", days=7)),
    ("Pollution level in Mexico City?", WEATHERS, call("get_air_quality", city="Mexico City")),
    ("Convert 20 celsius to fahrenheit.", CONVERTERS,
     call("convert_temperature", value=20, from_unit="celsius", to_unit="fahrenheit")),
    ("Convert 50 GBP to EUR.", CONVERTERS,
     call("convert_currency", amount=50, from_currency="GBP", to_currency="EUR")),
    ("How many meters is 10 feet?", CONVERTERS,
     call("convert_length", value=10, from_unit="ft", to_unit="m")),
    ("300 kelvin in celsius?", CONVERTERS,
     call("convert_temperature", value=300, from_unit="kelvin", to_unit="celsius")),
    ("5 km in miles?", CONVERTERS, call("convert_length", value=5, from_unit="km", to_unit="mi")),
    ("Email carla@example.com, subject 'Lunch', body 'Friday at 1?'.", MESSAGING,
     call("send_email", to="carla@example.com", subject="Lunch", body="Friday at 1?")),
    ("Send an SMS to +447700900123 saying 'call me'.", MESSAGING,
     call("send_sms", phone="+447700900123", text="call me")),
    ("Tell the #general channel that the office is closed tomorrow.", MESSAGING,
     call("post_to_channel", channel="#general", text="the office is closed tomorrow")),
    ("Text +15551234567: I'm outside.", MESSAGING,
     call("send_sms", phone="+15551234567", text="I'm outside.")),
    ("Post to #design: new mockups are up.", MESSAGING,
     call("post_to_channel", channel="#design", text="new mockups are up.")),
    ("Countdown of 20 minutes, please.", TIMEKEEPING, call("set_timer", minutes=20)),
    ("Alarm at 05:45.", TIMEKEEPING, call("set_alarm", time="05:45")),
    ("Remind me to call mom on 2026-12-07.", TIMEKEEPING,
     call("add_reminder", text="call mom", date="2026-12-07")),
    ("Schedule 'Quarterly planning' on 2027-01-10.", TIMEKEEPING,
     call("add_calendar_event", title="Quarterly planning", date="2027-01-10")),
    ("Set a 7 minute timer for tea.", TIMEKEEPING, call("set_timer", minutes=7, label="tea")),
    ("Find the file called budget.xlsx on my computer.", SEARCHES,
     call("search_files", pattern="budget.xlsx")),
    ("What did I write in my notes about the landlord?", SEARCHES,
     call("search_notes", query="landlord")),
    ("Search the web for the latest Python release.", SEARCHES,
     call("search_web", query="latest Python release")),
    ("Look through my notes for 'gift ideas'.", SEARCHES, call("search_notes", query="gift ideas")),
    ("Find all .png files.", SEARCHES, call("search_files", pattern="*.png")),
    ("Turn the living room lights off.", HOME, call("set_lights", room="living room", on=False)),
    ("Heat the house to 22 degrees.", HOME, call("set_thermostat", celsius=22)),
    ("Wake me at 08:00 every day.", HOME, call("set_alarm", time="08:00", repeat_daily=True)),
    ("Text +351934567890 'dinner is ready'.", HOME,
     call("send_sms", phone="+351934567890", text="dinner is ready")),
    ("Pizza timer, 14 minutes.", HOME, call("set_timer", minutes=14, label="pizza")),
    ("What's it like outside in Dublin?", HOME, call("get_weather", city="Dublin")),
    ("Bathroom lights on at 50%.", HOME,
     call("set_lights", room="bathroom", on=True, brightness=50)),
    ("Price of MSFT shares?", [STOCK, CURRENCY, CAPITAL], call("get_stock_price", symbol="MSFT")),
    ("Capital of Canada?", [STOCK, CAPITAL, POPULATION], call("get_capital", country="Canada")),
    ("Population of Nairobi?", [CAPITAL, POPULATION, WEATHER],
     call("get_population", city="Nairobi")),
]

# --- parallel: several independent calls ------------------------------------------------------
PARALLEL: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    ("Weather in Porto and in Faro?", [WEATHER],
     [call("get_weather", city="Porto"), call("get_weather", city="Faro")]),
    ("What's the weather in London, Paris and Madrid?", [WEATHER],
     [call("get_weather", city="London"), call("get_weather", city="Paris"),
      call("get_weather", city="Madrid")]),
    ("Set two timers: 5 minutes and 25 minutes.", [TIMER],
     [call("set_timer", minutes=5), call("set_timer", minutes=25)]),
    ("Convert 10 and 20 celsius to fahrenheit.", [TEMP],
     [call("convert_temperature", value=10, from_unit="celsius", to_unit="fahrenheit"),
      call("convert_temperature", value=20, from_unit="celsius", to_unit="fahrenheit")]),
    ("Stock prices of AAPL and GOOG?", [STOCK],
     [call("get_stock_price", symbol="AAPL"), call("get_stock_price", symbol="GOOG")]),
    ("Capitals of Peru and Chile?", [CAPITAL],
     [call("get_capital", country="Peru"), call("get_capital", country="Chile")]),
    ("Turn off the kitchen and the hallway lights.", [LIGHTS],
     [call("set_lights", room="kitchen", on=False), call("set_lights", room="hallway", on=False)]),
    ("Populations of Lagos and Cairo?", [POPULATION],
     [call("get_population", city="Lagos"), call("get_population", city="Cairo")]),
    ("Convert 100 USD to EUR and 100 USD to GBP.", [CURRENCY],
     [call("convert_currency", amount=100, from_currency="USD", to_currency="EUR"),
      call("convert_currency", amount=100, from_currency="USD", to_currency="GBP")]),
    ("Alarms at 06:00 and 06:10.", [ALARM],
     [call("set_alarm", time="06:00"), call("set_alarm", time="06:10")]),
    ("Weather and air quality in Milan?", [WEATHER, AIR],
     [call("get_weather", city="Milan"), call("get_air_quality", city="Milan")]),
    ("Text +351911111111 'on my way' and email joe@example.com subject 'ETA' body '10 min'.",
     [SMS, EMAIL],
     [call("send_sms", phone="+351911111111", text="on my way"),
      call("send_email", to="joe@example.com", subject="ETA", body="10 min")]),
    ("Set the heating to 20 and turn on the office lights.", [THERMO, LIGHTS],
     [call("set_thermostat", celsius=20), call("set_lights", room="office", on=True)]),
    ("Forecast for Lyon for 2 days and for Nice for 4 days.", [FORECAST],
     [call("get_forecast", city="Lyon", days=2), call("get_forecast", city="Nice", days=4)]),
    ("Convert 1 mile and 1 foot to meters.", [UNITS],
     [call("convert_length", value=1, from_unit="mi", to_unit="m"),
      call("convert_length", value=1, from_unit="ft", to_unit="m")]),
    ("Search my notes for 'tax' and search files for *.csv.", [NOTES, FILES],
     [call("search_notes", query="tax"), call("search_files", pattern="*.csv")]),
    ("Capital of Japan and population of Osaka?", [CAPITAL, POPULATION],
     [call("get_capital", country="Japan"), call("get_population", city="Osaka")]),
    ("Timers for 2 and 4 minutes.", [TIMER],
     [call("set_timer", minutes=2), call("set_timer", minutes=4)]),
    ("Weather in Reykjavik in fahrenheit and in Helsinki in celsius.", [WEATHER],
     [call("get_weather", city="Reykjavik", unit="fahrenheit"),
      call("get_weather", city="Helsinki", unit="celsius")]),
    ("Prices of TSLA and AMZN?", [STOCK],
     [call("get_stock_price", symbol="TSLA"), call("get_stock_price", symbol="AMZN")]),
]

# --- abstain: no tool fits; answer without calling --------------------------------------------
ABSTAIN: list[tuple[str, list[dict[str, Any]], list[str]]] = [
    ("Translate 'good morning' into French.", [WEATHER, TIMER], ["bonjour"]),
    ("Write a haiku about autumn leaves.", [STOCK, CURRENCY], []),
    ("What is the capital of France?", [TIMER, ALARM], ["paris"]),
    ("Say hello.", [EMAIL, SMS], ["hello"]),
    ("What does 'ephemeral' mean?", [LIGHTS, THERMO], []),
    ("Tell me a joke about programmers.", [INVOICE], []),
    ("What is 7 times 8?", [WEATHER, FORECAST], ["56"]),
    ("Who wrote Don Quixote?", [SEARCHES[0], TIMER], ["cervantes"]),
    ("Give me three synonyms for 'happy'.", [RECIPES], []),
    ("How many days are in a leap year?", [EVENT, REMINDER], ["366"]),
    ("Explain what a noun is in one sentence.", [STOCK], []),
    ("Spell 'necessary' backwards.", [CURRENCY, UNITS], []),
    ("Thanks, that's all for now!", [WEATHER, EMAIL, TIMER], []),
    ("What's the opposite of 'cold'?", [TEMP, THERMO], ["hot"]),
    ("Suggest a name for a black cat.", [LIGHTS], []),
    ("Translate 'thank you' into Spanish.", [SMS, CHANNEL], ["gracias"]),
    ("What is the chemical symbol for gold?", [STOCK, CURRENCY], ["au"]),
    ("How many legs does a spider have?", [POPULATION, CAPITAL], ["8", "eight"]),
    ("Rewrite this more politely: 'send me the file now'.", [EMAIL], []),
    ("What color do you get by mixing blue and yellow?", [LIGHTS, THERMO], ["green"]),
    ("Is a tomato a fruit?", [RECIPES], ["fruit"]),
    ("What is the plural of 'mouse'?", [FILES, NOTES], ["mice"]),
    ("Write one sentence about the sea.", [WEATHER, FORECAST, AIR], []),
    ("What year did the Second World War end?", [EVENT], ["1945"]),
    ("Good night!", [ALARM, TIMER, LIGHTS], []),
    ("What's the square root of 81?", [LOAN], ["9"]),
    ("Name a primary color.", [LIGHTS], []),
    ("How do you say 'cat' in German?", [SMS, EMAIL], ["katze"]),
    ("Which planet is closest to the sun?", [WEATHER], ["mercury"]),
    ("Summarize in five words: the meeting moved to Tuesday because Ana is away.",
     [EVENT, REMINDER], []),
]

# --- two_step: a call whose result the next call or the answer needs ---------------------------
Step2 = tuple[str, list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], list[str]]
TWO_STEP: list[Step2] = [
    # The first step needs data only a tool has (my contacts, colleagues, calendar, orders,
    # notes) or a live figure: a model that skips it cannot get the second call right by
    # knowing the answer (an earlier version asked for "the capital of X", which small models
    # answer, or get wrong, without the tool).
    ("What is the population of the city my colleague Marta works in?", [OFFICE, POPULATION],
     [call("get_office", name="Marta"), call("get_population", city="Porto")],
     {"get_office": "Porto", "get_population": "232,000"}, ["232"]),
    ("What's the weather where my next trip goes?", [TRIP, WEATHER],
     [call("get_next_trip"), call("get_weather", city="Oslo")],
     {"get_next_trip": "Oslo, 3-7 March", "get_weather": "-3 degrees, snow"}, ["-3", "snow"]),
    ("How much is one AAPL share in euros?", [STOCK, CURRENCY],
     [call("get_stock_price", symbol="AAPL"),
      call("convert_currency", amount=190.5, from_currency="USD", to_currency="EUR")],
     {"get_stock_price": 190.5, "convert_currency": 175.26}, ["175"]),
    ("What is the air quality in the city my order 8812 was delivered to?", [ORDER, AIR],
     [call("get_order", order_id="8812"), call("get_air_quality", city="New Delhi")],
     {"get_order": "Desk lamp, 45.00 USD, delivered to New Delhi",
      "get_air_quality": "AQI 182 (unhealthy)"}, ["182"]),
    ("What is the population of the city where my colleague Kenji works?", [OFFICE, POPULATION],
     [call("get_office", name="Kenji"), call("get_population", city="Nairobi")],
     {"get_office": "Nairobi", "get_population": "4.4 million"}, ["4.4"]),
    ("What is the current temperature in Phoenix, in kelvin?", [WEATHER, TEMP],
     [call("get_weather", city="Phoenix"),
      call("convert_temperature", value=40, from_unit="celsius", to_unit="kelvin")],
     {"get_weather": 40, "convert_temperature": 313.15}, ["313"]),
    ("How much is one NVDA share in British pounds?", [STOCK, CURRENCY],
     [call("get_stock_price", symbol="NVDA"),
      call("convert_currency", amount=142.0, from_currency="USD", to_currency="GBP")],
     {"get_stock_price": 142.0, "convert_currency": 111.4}, ["111"]),
    ("Forecast for the next 3 days where my next trip goes?", [TRIP, FORECAST],
     [call("get_next_trip"), call("get_forecast", city="Cairo", days=3)],
     {"get_next_trip": "Cairo, 12-15 May", "get_forecast": "sunny, 31/32/30 degrees"}, ["31"]),
    ("Weather in fahrenheit in the city where my colleague Lucía works?", [OFFICE, WEATHER],
     [call("get_office", name="Lucía"),
      call("get_weather", city="Buenos Aires", unit="fahrenheit")],
     {"get_office": "Buenos Aires", "get_weather": "77 F, clear"}, ["77"]),
    ("How many people live in the city my order 5521 ships to?", [ORDER, POPULATION],
     [call("get_order", order_id="5521"), call("get_population", city="Tokyo")],
     {"get_order": "Headphones, 89.90 USD, shipping to Tokyo",
      "get_population": "14 million"}, ["14"]),
    ("What is 2 GOOG shares worth in euros? Get the price first.", [STOCK, CURRENCY],
     [call("get_stock_price", symbol="GOOG"),
      call("convert_currency", amount=330.0, from_currency="USD", to_currency="EUR")],
     {"get_stock_price": 165.0, "convert_currency": 303.6}, ["303"]),
    ("How much did my order 3310 cost in euros?", [ORDER, CURRENCY],
     [call("get_order", order_id="3310"),
      call("convert_currency", amount=120.0, from_currency="USD", to_currency="EUR")],
     {"get_order": "Keyboard, 120.00 USD, delivered to Lyon", "convert_currency": 110.4},
     ["110"]),
    ("What's the weather where my colleague Ana works?", [OFFICE, WEATHER],
     [call("get_office", name="Ana"), call("get_weather", city="Brasília")],
     {"get_office": "Brasília", "get_weather": "27 degrees, thunderstorms"}, ["27"]),
    ("Find my notes about the boiler, then text the plumber's number from them 'please call'.",
     [NOTES, SMS],
     [call("search_notes", query="boiler"),
      call("send_sms", phone="+351965550100", text="please call")],
     {"search_notes": "Boiler: plumber João, +351965550100", "send_sms": "sent"}, []),
    ("Text Pedro 'running late'; his number is in my contacts.", [CONTACT, SMS],
     [call("find_contact", name="Pedro"), call("send_sms", phone="+351912345678",
                                                text="running late")],
     {"find_contact": "Pedro Alves, +351912345678, pedro@example.com", "send_sms": "sent"}, []),
    ("Convert today's temperature in Chicago to celsius.", [WEATHER, TEMP],
     [call("get_weather", city="Chicago"),
      call("convert_temperature", value=50, from_unit="fahrenheit", to_unit="celsius")],
     {"get_weather": "50 F", "convert_temperature": 10}, ["10"]),
    ("What's one MSFT share in Swiss francs?", [STOCK, CURRENCY],
     [call("get_stock_price", symbol="MSFT"),
      call("convert_currency", amount=420.0, from_currency="USD", to_currency="CHF")],
     {"get_stock_price": 420.0, "convert_currency": 371.7}, ["371"]),
    ("Email Dr. Silva from my contacts, subject 'Appointment', saying 'can we move to Friday?'",
     [CONTACT, EMAIL],
     [call("find_contact", name="Dr. Silva"),
      call("send_email", to="helena.silva@example.com", subject="Appointment",
           body="can we move to Friday?")],
     {"find_contact": "Dr. Helena Silva, +351213000000, helena.silva@example.com",
      "send_email": "sent"}, []),
    ("Air quality where my next trip goes?", [TRIP, AIR],
     [call("get_next_trip"), call("get_air_quality", city="Warsaw")],
     {"get_next_trip": "Warsaw, 9-11 June", "get_air_quality": "AQI 41 (good)"},
     ["41", "good"]),
    ("Population of the city my order 7004 was delivered to?", [ORDER, POPULATION],
     [call("get_order", order_id="7004"), call("get_population", city="Abuja")],
     {"get_order": "Running shoes, 75.00 USD, delivered to Abuja",
      "get_population": "3.8 million"}, ["3.8"]),
]


def cases(
    prefix: str,
    single: list[Any],
    choose: list[Any],
    parallel: list[Any],
    abstain: list[Any],
    two_step: list[Any],
) -> dict[str, list[dict[str, Any]]]:
    """Each category's cases as suite rows, with ids ``{prefix}{category}-NN`` (also used by
    evals/test/make_english.py, so both sets have one format)."""
    out: dict[str, list[dict[str, Any]]] = {}

    def add(category: str, i: int, q: str, tools: list[Any], **rest: Any) -> None:
        case = {"id": f"{prefix}{category.replace('_', '-')}-{i:02d}", "category": category,
                "question": q, "tools": tools, **rest}  # fmt: skip
        out.setdefault(category, []).append(case)

    for i, (q, tools, expected) in enumerate(single, 1):
        add("single", i, q, tools, expect={"calls": [expected]})
    for i, (q, tools, expected) in enumerate(choose, 1):
        add("choose", i, q, tools, expect={"calls": [expected]})
    for i, (q, tools, calls) in enumerate(parallel, 1):
        add("parallel", i, q, tools, expect={"calls": calls})
    for i, (q, tools, contains) in enumerate(abstain, 1):
        expect: dict[str, Any] = {"abstain": True}
        if contains:
            expect["answer_contains"] = contains
        add("abstain", i, q, tools, expect=expect)
    for i, (q, tools, calls, results, contains) in enumerate(two_step, 1):
        expect = {"calls": calls, "ordered": True}
        if contains:
            expect["answer_contains"] = contains
        add("two_step", i, q, tools, results=results, expect=expect)
    return out


def main() -> None:
    suites = cases("", SINGLE, CHOOSE, PARALLEL, ABSTAIN, TWO_STEP)
    for name, rows in suites.items():
        path = HERE / f"{name}.jsonl"
        path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in rows))
        print(f"{path.name}: {len(rows)} cases")


if __name__ == "__main__":
    main()
