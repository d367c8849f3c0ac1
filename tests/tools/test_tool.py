from typing import Literal

import pytest

from lar.errors import ToolDefinitionError
from lar.tools.base import ToolArgumentError, ToolContext, tool


@tool
def weather(city: str, ctx: ToolContext, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
    """Get the forecast for a city.

    Args:
        city: City name, e.g. Paris.
        unit: Temperature unit.
        days: How many days
            ahead to look.
    """
    return f"{city} {unit} {days}"


def test_schema_from_hints_and_docstring() -> None:
    assert weather.name == "weather"
    assert weather.description == "Get the forecast for a city."
    props = weather.parameters["properties"]
    assert set(props) == {"city", "unit", "days"}  # the context parameter is hidden
    assert weather.parameters["required"] == ["city"]
    assert props["city"] == {"type": "string", "description": "City name, e.g. Paris."}
    assert props["unit"]["enum"] == ["c", "f"]
    assert props["days"]["description"] == "How many days ahead to look."
    assert weather.context_param == "ctx"


def test_signature_is_compact() -> None:
    assert weather.signature() == 'weather(city: str, unit: "c"|"f" = "c", days: int = 1)'


def test_validation_coerces_and_reports_every_problem() -> None:
    assert weather.validate({"city": "Oslo", "days": "3"}) == {
        "city": "Oslo",
        "unit": "c",
        "days": 3,
    }
    with pytest.raises(ToolArgumentError) as info:
        weather.validate({"unit": "kelvin", "zip": 1})
    msg = str(info.value)
    assert "missing required argument 'city'" in msg
    assert "argument 'unit'" in msg and "'kelvin'" in msg
    assert "unknown argument 'zip'" in msg
    assert msg.endswith('Expected: weather(city: str, unit: "c"|"f" = "c", days: int = 1)')


def test_decorated_function_stays_callable() -> None:
    assert (
        weather("Rome", ToolContext(workspace=__import__("pathlib").Path(".")), unit="f")
        == "Rome f 1"
    )


def test_options_and_bad_definitions() -> None:
    @tool(name="math.square", permission="confirm", timeout_s=2, description="Square it.")
    async def square(x: float) -> float:
        return x * x

    assert square.name == "math.square" and square.is_async and square.permission == "confirm"
    assert square.description == "Square it."
    with pytest.raises(ToolDefinitionError, match="must start with a letter"):
        tool(name="9lives")(lambda: None)

    def noop(*args: int) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="permission 'sometimes'"):
        tool(permission="sometimes")(noop)  # type: ignore[call-overload]
    with pytest.raises(ToolDefinitionError, match=r"\*args/\*\*kwargs"):
        tool(noop)


def test_sphinx_docstrings() -> None:
    @tool
    def greet(name: str) -> str:
        """Say hello.

        :param name: Who to greet.
        """
        return name

    assert greet.description == "Say hello."
    assert greet.parameters["properties"]["name"]["description"] == "Who to greet."
