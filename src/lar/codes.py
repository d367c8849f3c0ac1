"""Every code a notice, a correction, a refused or failed tool call, or a failed run carries
(``lar.types.Code``; the values are what JSON shows)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Code"]


class Code(StrEnum):
    """Every code a notice, a correction, a refused or failed tool call, or a failed run carries
    (the values are what JSON shows)."""

    # notices: something the user should know that is not an error
    REPAIRED = "repaired"
    PARSE_WARNING = "parse_warning"
    COERCED = "coerced"
    INVENTED_TOOL = "invented_tool"
    MORE_CALLS = "more_calls"
    LOOP_BLOCKED = "loop_blocked"
    FAILOVER = "failover"
    MAX_TURNS = "max_turns"
    BUDGET = "budget"
    STATE_SAVED = "state_saved"
    BAD_PLAN = "bad_plan"
    MISSING_PARTS = "missing_parts"
    REPEATED_CALL = "repeated_call"
    CONSOLIDATED = "consolidated"
    UNCONSTRAINED = "unconstrained"
    CUT_CALL = "cut_call"
    LEAKED_TEXT = "leaked_text"
    INVENTED_RESULT = "invented_result"
    UNLISTED_TOOL = "unlisted_tool"
    # corrections: the loop did something about a reply instead of taking it
    DESCRIBED_CALL = "described_call"
    MADE_UP_RESULT = "made_up_result"
    PASTED_RESULT = "pasted_result"
    DEFERRED_CALL = "deferred_call"
    UNGROUNDED_CALL = "ungrounded_call"
    OFF_TOPIC_CALL = "off_topic_call"
    INVENTED_OPTION = "invented_option"
    PERCENT_SCALE = "percent_scale"
    GROUPED_FIGURES = "grouped_figures"
    FIGURES_WITHOUT_DATA = "figures_without_data"
    ENGLISH_ANSWER = "english_answer"
    UNCHECKED_FIGURE = "unchecked_figure"
    UNREAD_FILE = "unread_file"
    TABLE_BY_CODE = "table_by_code"
    NARROW_READ = "narrow_read"
    LOST_TEXT = "lost_text"
    CONTRADICTED_WEEKDAY = "contradicted_weekday"
    MADE_UP_RATE = "made_up_rate"
    PATCHED_RENAME = "patched_rename"
    REFUSED_CALL = "refused_call"
    ASSUMED_FACTOR = "assumed_factor"
    IGNORED_MEMORY = "ignored_memory"
    # tool calls that did not run, or failed
    UNKNOWN_TOOL = "unknown_tool"
    NOT_ALLOWED = "not_allowed"
    CIRCUIT_OPEN = "circuit_open"
    INVALID_ARGUMENTS = "invalid_arguments"
    REFUSED = "refused"
    DENIED = "denied"
    TIMEOUT = "timeout"
    TOOL_ERROR = "tool_error"
    UNKNOWN_OUTCOME = "unknown_outcome"
    NOT_POSSIBLE = "not_possible"
    SKIPPED = "skipped"
    # runs
    ENGINE_ERROR = "engine_error"
