"""Capture raw tool-call outputs from the embedded models for the parser corpus.

    python bench/capture_corpus.py > /tmp/raw.jsonl

Each line holds the model, the tools it was shown, the prompt and the raw text. The expected parse
is added by hand (after review) in tests/calling/corpus/embedded.jsonl; this script only records
what the models really wrote, so the corpus can be refreshed when the prompt or model changes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from lar.agents.loop import DEFAULT_SYSTEM_PROMPT
from lar.calling.prompt import protocol_system_prompt
from lar.config import load_config
from lar.engines.default_model import DEFAULT_MODEL, TINY_MODEL, ensure_model
from lar.engines.llamacpp import LlamaCppEngine
from lar.tools.base import tool
from lar.tools.builtin import builtin_tools
from lar.types import Message


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def weather(city: str, unit: str = "c", days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return ""


@tool
def send_email(to: str, subject: str, body: str, cc: list[str] | None = None) -> str:
    """Send an email."""
    return ""


PROMPTS = [
    "What is 1234 + 4321?",
    "Please add 17 and 25.",
    "What's the weather in Paris for the next 3 days, in fahrenheit?",
    "Email bob@example.com with subject 'Lunch' saying 'See you at noon', cc alice@example.com.",
    "What is in notes.txt?",
    "Run python to print the first 5 squares.",
    "Write 'hello world' to greeting.txt.",
    "Replace 'foo' with 'bar' in config.ini.",
    "Who painted the Mona Lisa?",
    "Hi! How are you?",
    "Give me the weather in Tokyo and in Berlin.",
    "Add 2 and 3, and also add 10 and 20.",
    "Show me lines 10 to 20 of main.py.",
    "Ask me which file I want to read.",
    "Save a note that the goal is to fix the login bug.",
    "List the files in the current directory using the shell.",
    "Write a Python function that reverses a string.",
    'Return the JSON object {"ok": true} and nothing else.',
]


async def main() -> None:
    home = load_config().home
    tools_sets = {"math+weather+email": [add, weather, send_email], "builtin": builtin_tools()}
    for spec in (DEFAULT_MODEL, TINY_MODEL):
        path = ensure_model(home / "models", spec)
        engine = LlamaCppEngine(
            path=path, name=spec.name, defaults={"temperature": 0, "max_tokens": 160}
        )
        for set_name, tools in tools_sets.items():
            system = protocol_system_prompt(DEFAULT_SYSTEM_PROMPT, tools)
            for prompt in PROMPTS:
                r = await engine.generate([Message("system", system), Message("user", prompt)])
                known = {t.name: list(t.parameters.get("properties", {})) for t in tools}
                print(
                    json.dumps(
                        {
                            "model": spec.name,
                            "tools": set_name,
                            "known": known,
                            "prompt": prompt,
                            "text": r.content,
                        }
                    ),
                    flush=True,
                )
                print(f"{spec.name} {set_name} {prompt[:40]!r}", file=sys.stderr)
        await engine.aclose()


def _arguments() -> None:
    argparse.ArgumentParser(
        description=(
            "Run every prompt of this script through both embedded models (the default and the "
            "tiny one), with two tool sets, and print one JSON line per raw reply to stdout, for "
            "the parser corpus in tests/calling/corpus/. Loads each model: minutes on 2 cores."
        )
    ).parse_args()


if __name__ == "__main__":
    _arguments()
    asyncio.run(main())
