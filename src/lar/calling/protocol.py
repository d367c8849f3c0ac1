"""Text-protocol tool-call parser (T2, T3).

Small models rarely produce clean native ``tool_calls``: they write the call as text, in any of a
dozen dialects. ``parse`` recognizes, in this order:

1. tag blocks: ``<tool_call>{json}</tool_call>`` (Qwen/Hermes; also ``<tool_use>``,
   ``<function_call>``), with JSON or GLM-style bodies (``name $k=v``, ``<k>v</k>``,
   ``<arg_key>k</arg_key><arg_value>v</arg_value>``, ``k: v`` lines); an unclosed tag at the end
   of the text counts (generation often stops on the closing tag);
2. ``<function=name>…</function>`` (Llama 3.1 / Qwen3-Coder) and Mistral's ``[TOOL_CALLS]``;
3. ReAct ``Action:`` / ``Action Input:``;
4. fenced blocks: ```json (or unlabelled) holding a call object, and ```python (CodeAct) holding
   calls to known tools (or, with ``codeact=True``, any code, run with ``code_run``);
5. bare JSON objects in the text that look like a call, and a line that is only
   ``known_tool(args)``.

Broken JSON is repaired (json-repair) before giving up; what cannot be parsed stays text.
"""

from __future__ import annotations

import ast
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lar.repair import SURROGATE_RE, jsonable, load_json, nesting, no_surrogates, too_deep
from lar.types import ToolCall

__all__ = ["ParseResult", "parse", "KnownTools"]

KnownTools = Mapping[str, Sequence[str]]
"""Tool name → ordered parameter names (used to map positional arguments)."""

_NAME_KEYS = ("name", "tool", "tool_name", "function", "function_name", "action", "command")
_ARG_KEYS = (
    "arguments",
    "args",
    "parameters",
    "params",
    "input",
    "action_input",
    "tool_input",
    "kwargs",
)
_TAGS = ("tool_call", "tool_use", "function_call", "toolcall", "tool")
_TAG_RE = re.compile(
    r"<(?P<tag>" + "|".join(_TAGS) + r")>(?P<body>.*?)(?:</(?P=tag)>|(?=<(?P=tag)>)|\Z)",
    re.S | re.I,
)
_FUNCTION_RE = re.compile(r"<function=(?P<name>[\w.\-]+)>(?P<body>.*?)(?:</function>|\Z)", re.S)
_PARAMETER_RE = re.compile(r"<parameter=(?P<k>[\w.\-]+)>(?P<v>.*?)(?:</parameter>|\Z)", re.S)
_ARG_KV_RE = re.compile(
    r"<arg_key>(?P<k>.*?)</arg_key>\s*+<arg_value>(?P<v>.*?)(?:</arg_value>|\Z)", re.S
)
_XML_KV_RE = re.compile(r"<(?P<k>[A-Za-z_][\w\-]*)>(?P<v>.*?)</(?P=k)>", re.S)
_DOLLAR_KV_RE = re.compile(
    r"\$(?P<k>[A-Za-z_]\w*)\s*=\s*(?P<v>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\[.*?\]|\{.*?\}|\S+)",
    re.S,
)
_COLON_KV_RE = re.compile(
    r"^[^\S\n]*+(?P<k>[A-Za-z_][\w\-]*+)[^\S\n]*+[:=][^\S\n]*+(?P<v>\S(?:[^\n]*\S)?)", re.M
)
_MISTRAL_RE = re.compile(r"\[TOOL_CALLS\]\s*(?P<body>.*)", re.S)
_REACT_RE = re.compile(
    r"^[^\S\n]*+Action[^\S\n]*+:[^\S\n]*+(?P<name>[^\n]+)\n\s*+Action\s*+Input\s*+:"
    r"(?P<input>.*?)(?=\n[^\S\n]*+(?:Observation|Thought|Action)[^\S\n]*+:|\Z)",
    re.S | re.M | re.I,
)
# No backtick in the info string (as CommonMark says): a run of backticks then costs O(1) each.
_FENCE_RE = re.compile(r"```[ \t]*+(?P<lang>[\w\-]*+)[^\n`]*+\n(?P<body>.*?)(?:```|\Z)", re.S)
_THINK_RE = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_REACT_FINISH = {"final answer", "finish", "final_answer", "answer", "none"}


@dataclass(slots=True)
class ParseResult:
    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""
    repaired: bool = False
    warnings: list[str] = field(default_factory=list)
    format: str | None = None


def _new_id() -> str:
    return "call_" + secrets.token_hex(4)


def _scalar(raw: str) -> Any:
    """A GLM/`k: v` value: JSON if it parses as JSON, else the stripped string."""
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


class _Parser:
    def __init__(self, text: str, known: KnownTools, codeact: bool) -> None:
        self.original = text
        self.known = known
        self.codeact = codeact
        self.result = ParseResult()
        self.spans: list[tuple[int, int]] = []
        self.decodes = 0
        self.budget = DECODE_BUDGET
        self.repair_left = REPAIR_BUDGET
        self.deep = too_deep(text)  # if the whole text is not, no part of it is

    # --- helpers -------------------------------------------------------------------------------

    def _add(self, name: str, arguments: dict[str, Any], raw: str, fmt: str) -> None:
        self.result.calls.append(ToolCall(_new_id(), name.strip(), arguments, raw=raw))
        self.result.format = self.result.format or fmt

    def _load(self, raw: str) -> Any:
        self.decodes += 1
        self.budget -= len(raw)
        if self.decodes > MAX_DECODES or self.budget < 0:
            return None  # bounded work on pathological text (thousands of openers)
        # json-repair's time grows with length times nesting (51 open braces before 1,700
        # characters: 0.8 s a try), so a try costs both
        cost = len(raw) * max(1, nesting(raw))
        repair = self.repair_left >= cost
        value, repaired = load_json(raw, depth_checked=not self.deep, repair=repair)
        if repair and (repaired or value is None):
            self.repair_left -= cost  # strict decoding failed: a repair was tried
        if repaired and value is not None:
            self.result.repaired = True
        return value

    def _args_value(self, value: Any) -> dict[str, Any] | None:
        if isinstance(value, dict):
            return value
        if isinstance(value, str):
            loaded = self._load(value) if value.strip().startswith("{") else None
            return loaded if isinstance(loaded, dict) else None
        if value is None:
            return {}
        return None

    def calls_from_obj(self, obj: Any, *, tagged: bool, raw: str, fmt: str) -> bool:
        """Add every call found in a decoded JSON value; return whether any was found.

        Outside tags a JSON object only counts as a call when it names a known tool or carries
        both a name key and an arguments key, so a JSON *answer* is not mistaken for a call.
        """
        if isinstance(obj, list):
            found = False
            for item in obj:
                found = self.calls_from_obj(item, tagged=tagged, raw=raw, fmt=fmt) or found
            return found
        if not isinstance(obj, dict):
            return False
        if isinstance(obj.get("tool_calls"), list):
            return self.calls_from_obj(obj["tool_calls"], tagged=True, raw=raw, fmt=fmt)
        if isinstance(obj.get("function"), dict):
            inner = dict(obj["function"])
            return self.calls_from_obj(inner, tagged=True, raw=raw, fmt=fmt)
        name_key = next((k for k in _NAME_KEYS if isinstance(obj.get(k), str) and obj[k]), None)
        if name_key is not None:
            return self._named_call(obj, name_key, tagged=tagged, raw=raw, fmt=fmt)
        if len(obj) == 1:
            ((name, value),) = obj.items()
            if name in self.known and isinstance(value, dict):
                self._add(name, value, raw, fmt)
                return True
        return False

    def _named_call(
        self, obj: dict[str, Any], name_key: str, *, tagged: bool, raw: str, fmt: str
    ) -> bool:
        """``{"name": …, "arguments": …}`` and its many spellings (see ``calls_from_obj``)."""
        name = obj[name_key]
        if name.strip().lower() in _REACT_FINISH and name not in self.known:
            return False
        arg_key = next((k for k in _ARG_KEYS if k in obj), None)
        if arg_key is not None:
            args = self._args_value(obj[arg_key])
            if args is None and isinstance(obj[arg_key], list) and name in self.known:
                params = list(self.known[name])  # positional: [17, 25] → {"a": 17, "b": 25}
                if len(obj[arg_key]) <= len(params):
                    args = dict(zip(params, obj[arg_key], strict=False))
            if args is None:
                args = {"input": obj[arg_key]} if tagged or name in self.known else None
            if args is None:
                return False
        elif name in self.known or tagged:
            args = {k: v for k, v in obj.items() if k not in (name_key, "type", "id")}
        else:
            return False
        if not tagged and name not in self.known and arg_key is None:
            return False
        self._add(name, args, raw, fmt)
        return True

    def _taken(self, start: int, end: int) -> bool:
        return any(s < end and start < e for s, e in self.spans)

    def _take(self, start: int, end: int) -> None:
        self.spans.append((start, end))

    # --- formats -------------------------------------------------------------------------------

    def tags(self, text: str) -> None:
        for m in _TAG_RE.finditer(text):
            body = m.group("body").strip()
            if not body:
                self._take(m.start(), m.end())
                continue
            raw = m.group(0)
            body = _strip_fence(body)
            if body[:1] in "{[":
                obj = self._load(body)
                if self.calls_from_obj(obj, tagged=True, raw=raw, fmt="tool_call_json"):
                    self._take(m.start(), m.end())
                    continue
            if self._glm_body(body, raw):
                self._take(m.start(), m.end())
            else:
                self.result.warnings.append(f"unparseable <{m.group('tag')}> block: {body[:80]!r}")

    def _glm_body(self, body: str, raw: str) -> bool:
        """``name $k=v``, ``name\\n<k>v</k>``, ``name\\n<arg_key>…``, ``name\\nk: v``."""
        m = re.match(r"\s*([A-Za-z_][\w.\-]*)\s*(.*)\Z", body, re.S)
        if not m:
            return False
        name, rest = m.group(1), m.group(2)
        if rest.startswith("("):
            return self._python_calls(f"{name}{rest}", raw, fmt="tool_call_python", tagged=True)
        args: dict[str, Any] = {}
        if rest.lstrip().startswith("{"):
            value = self._load(rest)
            if isinstance(value, dict):
                self._add(name, value, raw, "tool_call_glm")
                return True
        pairs = (
            _ARG_KV_RE.findall(rest)
            or _XML_KV_RE.findall(rest)
            or _DOLLAR_KV_RE.findall(rest)
            or _COLON_KV_RE.findall(rest)
        )
        for k, v in pairs:
            args[k.strip()] = _scalar(v)
        if not pairs and rest.strip():
            return False
        self._add(name, args, raw, "tool_call_glm")
        return True

    def functions(self, text: str) -> None:
        for m in _FUNCTION_RE.finditer(text):
            if self._taken(m.start(), m.end()):
                continue
            body = m.group("body")
            params = _PARAMETER_RE.findall(body)
            if params:
                args = {k: _scalar(v) for k, v in params}
            else:
                args = self._args_value(body.strip() or None) or {}
            self._add(m.group("name"), args, m.group(0), "function_tag")
            self._take(m.start(), m.end())
        for m in _MISTRAL_RE.finditer(text):
            if self._taken(m.start(), m.end()):
                continue
            body = m.group("body").strip()
            named = re.match(r"([\w.\-]+)\[ARGS\](.*)\Z", body, re.S)
            if named:
                args = self._args_value(named.group(2).strip()) or {}
                self._add(named.group(1), args, m.group(0), "mistral")
            elif not self.calls_from_obj(
                self._load(body), tagged=True, raw=m.group(0), fmt="mistral"
            ):
                continue
            self._take(m.start(), m.end())

    def react(self, text: str) -> None:
        for m in _REACT_RE.finditer(text):
            if self._taken(m.start(), m.end()):
                continue
            name = m.group("name").strip().strip("`'\"[]")
            if name.lower() in _REACT_FINISH:
                continue
            raw_input = _strip_fence(m.group("input").strip())
            if raw_input[:1] in "{[":
                args = self._args_value(raw_input)
                if args is None:
                    loaded = self._load(raw_input)
                    args = {"input": loaded}
            elif raw_input:
                params = self.known.get(name, ())
                args = {params[0] if params else "input": _scalar(raw_input)}
            else:
                args = {}
            self._add(name, args, m.group(0), "react")
            self._take(m.start(), m.end())

    def fences(self, text: str) -> None:
        for m in _FENCE_RE.finditer(text):
            if self._taken(m.start(), m.end()):
                continue
            lang = m.group("lang").lower()
            body = m.group("body").strip()
            raw = m.group(0)
            if lang in ("python", "py"):
                if self._python_calls(body, raw, fmt="codeact", tagged=False):
                    self._take(m.start(), m.end())
                elif self.codeact and "code_run" in self.known:
                    self._add("code_run", {"code": body, "language": "python"}, raw, "codeact")
                    self._take(m.start(), m.end())
                continue
            if (
                lang in ("", "json", "json5", "tool_call", "tool_code", "javascript", "js")
                and body[:1] in "{["
            ):
                obj = self._load(body)
                tagged = lang in ("tool_call", "tool_code")
                if self.calls_from_obj(obj, tagged=tagged, raw=raw, fmt="json_fence"):
                    self._take(m.start(), m.end())

    def bare_json(self, text: str) -> None:
        i = 0
        while self.decodes < MAX_DECODES and self.budget > 0:
            start = _next_object_start(text, i)
            if start < 0:
                return
            end = _balanced_end(text, start)
            self.budget -= end - start
            if self._taken(start, end):
                i = end
                continue
            raw = text[start:end]
            obj = self._load(raw)
            if self.calls_from_obj(obj, tagged=False, raw=raw, fmt="bare_json"):
                self._take(start, end)
                i = end
            else:
                i = start + 1

    def call_lines(self, text: str) -> None:
        if not self.known or "(" not in text:
            return
        for m in _call_line_pattern(tuple(sorted(self.known))).finditer(text):
            if self._taken(m.start(), m.end()):
                continue
            code = m.group(0).strip().strip("`;. ")
            if self._python_calls(code, m.group(0), fmt="call_line", tagged=False):
                self._take(m.start(), m.end())

    def _python_calls(self, code: str, raw: str, *, fmt: str, tagged: bool) -> bool:
        """Calls to tools written as Python (``add(1, b=2)``), literal arguments only."""
        if too_deep(code):
            return False
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False  # ValueError: null bytes, lone surrogates
        found: list[tuple[str, dict[str, Any]]] = []
        for stmt in tree.body:
            node = stmt.value if isinstance(stmt, ast.Expr | ast.Assign) else None
            if isinstance(node, ast.Call) and _func_name(node) == "print" and node.args:
                node = node.args[0]
            if not isinstance(node, ast.Call):
                return False
            name = _func_name(node)
            if name is None or (name not in self.known and not tagged):
                return False
            try:
                args = {
                    kw.arg: jsonable(ast.literal_eval(kw.value)) for kw in node.keywords if kw.arg
                }
                params = list(self.known.get(name, ()))
                for idx, arg in enumerate(node.args):
                    key = params[idx] if idx < len(params) else f"arg{idx}"
                    args[key] = jsonable(ast.literal_eval(arg))
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return False
            found.append((name, args))
        for name, args in found:
            self._add(name, args, raw, fmt)
        return bool(found)

    def run(self) -> ParseResult:
        text = _THINK_RE.sub(lambda m: " " * len(m.group(0)), self.original)
        self.tags(text)
        if not self.result.calls:
            self.functions(text)
        if not self.result.calls:
            self.react(text)
        if not self.result.calls:
            self.fences(text)
        if not self.result.calls:
            self.bare_json(text)
        if not self.result.calls:
            self.call_lines(text)
        remaining = []
        pos = 0
        for start, end in sorted(self.spans):
            remaining.append(self.original[pos:start])
            pos = max(pos, end)
        remaining.append(self.original[pos:])
        self.result.text = _THINK_RE.sub("", "".join(remaining)).strip()
        return self.result


@lru_cache(maxsize=64)
def _call_line_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(r"^[ \t`]*(?:print\()?(?:" + alternatives + r")\(.*\)\)?[ \t`;.]*$", re.M)


def _func_name(node: ast.Call) -> str | None:
    parts: list[str] = []
    func: ast.expr = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
        return ".".join(reversed(parts))
    return None


def _strip_fence(body: str) -> str:
    """The code of a fenced block (```lang … ```), or ``body`` if it is not fenced."""
    if not body.startswith("```"):
        return body
    inner = _FENCE_LANG_RE.sub("", body, count=1).strip()
    return inner.removesuffix("```").strip()


_FENCE_LANG_RE = re.compile(r"\A```[\w\-]*+")


def _next_object_start(text: str, i: int) -> int:
    brace = text.find("{", i)
    bracket = text.find("[{", i)
    starts = [s for s in (brace, bracket) if s >= 0]
    return min(starts) if starts else -1


_JSON_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\Z)|[{}\[\]]', re.S)


def _balanced_end(text: str, start: int) -> int:
    """End index of the JSON value starting at ``start``; the text's end if it never closes."""
    depth = 0
    for m in _JSON_TOKEN_RE.finditer(text, start):  # strings are skipped whole
        ch = m.group(0)
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return m.end()
    return len(text)


MAX_PARSE_CHARS = 64_000
"""A reply longer than this (~16k tokens, past any max_tokens Lar sets) is kept as text."""
MAX_DECODES = 200
"""JSON decodes per reply; a real reply has a handful, pathological text thousands."""
DECODE_BUDGET = 400_000
"""Characters handed to the JSON decoders per reply, all attempts together."""
REPAIR_BUDGET = 24_000
"""Characters times nesting depth handed to json-repair per reply, all tries together (about
0.25 s of its time; see ``REPAIR_MAX_CHARS``). A real reply's broken call (200 characters,
three levels) costs 600."""


def parse(text: str, known: KnownTools | None = None, *, codeact: bool = False) -> ParseResult:
    """Find the tool calls in a model's text answer. ``known``: tool name → parameter names.

    Never raises on model output, and its work is bounded for any input (tested by fuzzing).
    """
    if not text or not text.strip():
        return ParseResult(text=text.strip() if text else "")
    # Lone surrogates (a broken stream) cannot be encoded as UTF-8 anywhere downstream.
    text = SURROGATE_RE.sub("\ufffd", text)
    if len(text) > MAX_PARSE_CHARS:
        result = ParseResult(text=text.strip())
        result.warnings.append(f"reply of {len(text)} characters: not searched for tool calls")
        return result
    result = _Parser(text, known or {}, codeact).run()
    for call in result.calls:  # a JSON escape (``"\\udfff"``) decodes to a lone surrogate
        call.arguments = no_surrogates(call.arguments)
    return result
