"""The everyday policies on the embedded model: a currency conversion never ends in a made-up
rate (before assumed_factor and the converter's account, the 1.5B multiplied by a rate of its
own and gave the product as the answer)."""

from __future__ import annotations

import re
from pathlib import Path

from lar import Agent
from lar.tools import builtin_tools

CANNOT = ("can't", "cannot", "could not", "couldn't", "unable", "not able", "don't have",
          "do not have", "no access", "not available", "unavailable", "unknown")  # fmt: skip


def test_an_exchange_rate_is_not_made_up(lar_home: Path, tmp_path: Path) -> None:
    request = "How many Japanese yen do I get for 200 Swiss francs today?"
    with Agent(tools=builtin_tools(), workspace=tmp_path, approver=lambda c, t: False) as agent:
        result = agent.run(request)
    given = set(re.findall(r"\d+", request))
    figures = [f for f in re.findall(r"\d+(?:[.,]\d+)*", result.text) if f not in given]
    assert not figures, result.text  # no rate, no converted amount
    assert any(word in result.text.lower() for word in CANNOT), result.text
