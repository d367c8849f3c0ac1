"""Invented values and the remaining calls on the real embedded model (protocol track).

The requests are written here, not taken from the eval suites (what is reported is never what a
test is fitted to); each asserts the outcome a user sees, whichever correction gets there.
"""

from __future__ import annotations

from typing import Any

import pytest

from lar.agents.agent import Agent
from lar.tools.base import SchemaTool

pytestmark = pytest.mark.usefixtures("lar_home")  # a fresh home sharing the assembled model

ran: list[tuple[str, dict[str, Any]]] = []


def schema_tool(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> Any:
    def run(**args: Any) -> str:
        ran.append((name, args))
        return f"{name} done: {args}"

    schema = {"type": "object", "properties": properties, "required": required}
    return SchemaTool(name, description, schema, run)


def ask(question: str, tools: list[Any]) -> Any:
    ran.clear()
    agent = Agent(
        tools=tools, track="protocol", memory=False, traces=False, approver=lambda c, t: True
    )
    try:
        return agent.run(question)
    finally:
        agent.close()


def test_a_request_naming_two_cities_gets_a_call_for_each() -> None:
    weather = schema_tool(
        "get_weather",
        "Current weather for a city.",
        {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        ["city"],
    )
    result = ask("What is the weather like in Lyon and in Nantes?", [weather])
    cities = sorted(args["city"] for name, args in ran if name == "get_weather")
    assert cities == ["Lyon", "Nantes"], (cities, result.text)
    assert result.text.strip()


def test_a_greeting_sends_no_message_to_a_made_up_address() -> None:
    text = {"type": "string"}
    email = schema_tool(
        "send_email", "Send an email.", {"to": text, "subject": text, "body": text}, ["to", "body"]
    )
    sms = schema_tool(
        "send_sms", "Send a text message.", {"to": text, "body": text}, ["to", "body"]
    )
    result = ask("Say good morning.", [email, sms])
    assert ran == []  # no address is in the conversation: nothing is sent
    assert "morning" in result.text.lower()
