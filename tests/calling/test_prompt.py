"""The compact tool listing (T2): a signature line per tool, and parameter notes while the
listing's budget lasts."""

from __future__ import annotations

from typing import Any

from lar.calling.prompt import LISTING_BUDGET, tool_listing
from lar.tools.base import SchemaTool


def _tool(name: str, description: str, **params: str) -> SchemaTool:
    props: dict[str, Any] = {p: {"type": "string", "description": d} for p, d in params.items()}
    schema = {"type": "object", "properties": props, "required": list(params)}
    return SchemaTool(name, description, schema, dict)


TAX = _tool(
    "calculate_tax",
    "Calculates the sales tax for a purchase, e.g. a laptop. It returns the total.",
    state="The U.S. state abbreviation, such as 'CA' for California. Two letters.",
    city="The city.",
)


def test_a_parameter_note_says_what_the_signature_cannot() -> None:
    listing = tool_listing([TAX])
    assert listing.splitlines() == [
        "calculate_tax(state: str, city: str): Calculates the sales tax for a purchase, "
        "e.g. a laptop.",  # "e.g." does not end the sentence
        "  state: The U.S. state abbreviation, such as 'CA' for California.",
    ]  # "The city." says no more than the name: no note


def test_notes_are_added_tool_by_tool_while_the_budget_lasts() -> None:
    long = "A value written in the form the service expects, with its unit and an example. " * 3
    tools = [_tool(f"tool_{n}", f"Tool number {n}.", value=long) for n in range(20)]
    listing = tool_listing(tools)
    heads = [line for line in listing.splitlines() if not line.startswith("  ")]
    assert len(heads) == 20  # every tool keeps its line
    noted = listing.count("  value: ")
    assert 0 < noted < 20 and len(listing) <= LISTING_BUDGET + len(heads)
    assert listing.startswith("tool_0(value: str): Tool number 0.\n  value: A value written")
    assert "  value: " not in listing.split("tool_19(")[1]  # the last tools stay one line
