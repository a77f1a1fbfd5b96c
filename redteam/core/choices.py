"""PyRIT's enumerations as Django choices; every value is exactly PyRIT's (contract §1). And how
the pages show a stored value to people: :func:`choice_label`, :func:`readable_value`."""

from __future__ import annotations

import json

from django.db import models

# Which values name a file is PyRIT's reading rule, shared with the push client.
from pyrit_memory_reader.media import MEDIA_DATA_TYPES, is_media_value  # noqa: F401


class ChatMessageRole(models.TextChoices):
    """Role of a message; ``simulated_assistant`` is an assistant turn the target never said."""

    SYSTEM = "system", "System"
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"
    SIMULATED_ASSISTANT = "simulated_assistant", "Simulated assistant"
    TOOL = "tool", "Tool"
    DEVELOPER = "developer", "Developer"


class PromptDataType(models.TextChoices):
    """What a piece value holds: text, or a location string for media types."""

    TEXT = "text", "Text"
    IMAGE_PATH = "image_path", "Image"
    AUDIO_PATH = "audio_path", "Audio"
    VIDEO_PATH = "video_path", "Video"
    BINARY_PATH = "binary_path", "Binary file"
    URL = "url", "URL"
    REASONING = "reasoning", "Reasoning"
    ERROR = "error", "Error"
    FUNCTION_CALL = "function_call", "Function call"
    TOOL_CALL = "tool_call", "Tool call"
    FUNCTION_CALL_OUTPUT = "function_call_output", "Function call output"


class PromptResponseError(models.TextChoices):
    """Why a response is not a normal answer; NULL in PyRIT's column means ``none``."""

    NONE = "none", "None"
    BLOCKED = "blocked", "Blocked"
    PROCESSING = "processing", "Processing error"
    EMPTY = "empty", "Empty"
    UNKNOWN = "unknown", "Unknown"


class Originator(models.TextChoices):
    """Which component created a piece (never persisted; 0.9 said ``orchestrator`` for attack)."""

    ATTACK = "attack", "Attack"
    CONVERTER = "converter", "Converter"
    SCORER = "scorer", "Scorer"
    UNDEFINED = "undefined", "Undefined"


class ScoreType(models.TextChoices):
    """How a score value is to be read."""

    TRUE_FALSE = "true_false", "True/false"
    FLOAT_SCALE = "float_scale", "Float scale"
    UNKNOWN = "unknown", "Unknown"


class ScoreStatus(models.TextChoices):
    """PyRIT 1.1.0: an undetermined score has no value."""

    COMPLETE = "complete", "Complete"
    UNDETERMINED = "undetermined", "Undetermined"


class AttackOutcome(models.TextChoices):
    """Outcome of an attack; ``error`` exists from PyRIT 0.14 on."""

    SUCCESS = "success", "Success"
    FAILURE = "failure", "Failure"
    UNDETERMINED = "undetermined", "Undetermined"
    ERROR = "error", "Error"


class TimestampSource(models.TextChoices):
    """Where an attack result's ``timestamp`` came from. PyRIT 0.12 attack results carry
    none; Redline then takes the last piece of the attack's conversation."""

    PYRIT = "pyrit", "Recorded by PyRIT"
    LAST_PIECE = "last_piece", "Derived: the conversation's last piece"
    RECEIVED = "received", "Derived: when Redline received it (no pieces)"


class ConversationType(models.TextChoices):
    """Type of a conversation related to an attack result."""

    ADVERSARIAL = "adversarial", "Adversarial chat"
    PRUNED = "pruned", "Pruned"
    SCORE = "score", "Scorer"
    CONVERTER = "converter", "Converter"


class SeedType(models.TextChoices):
    """Kind of seed stored in the seed table."""

    PROMPT = "prompt", "Prompt"
    OBJECTIVE = "objective", "Objective"
    SIMULATED_CONVERSATION = "simulated_conversation", "Simulated conversation"


class ScenarioRunState(models.TextChoices):
    """State of a scenario run (upper-case, as PyRIT stores it)."""

    CREATED = "CREATED", "Created"
    IN_PROGRESS = "IN_PROGRESS", "In progress"
    COMPLETED = "COMPLETED", "Completed"
    FAILED = "FAILED", "Failed"
    CANCELLED = "CANCELLED", "Cancelled"


class ConversationRetryReason(models.TextChoices):
    """Why a conversation turn was rolled back and resent (PyRIT 1.1.0)."""

    JSON_PARSING = "json_parsing", "JSON parsing"


class ScorableType(models.TextChoices):
    """What a 1.1.0 score judged."""

    MESSAGE = "message", "Message"
    CONTENT = "content", "Content"
    CONTENT_ENTRY = "content_entry", "Stored content"


def choice_label(choices: type[models.Choices] | str, value: object) -> str:
    """``value`` as people read it: its label in ``choices`` (a Choices class, or the name of
    one in this module), so a stored enum value (``success``, ``image_path``) never reaches a
    page. A value the choices do not list (a newer PyRIT's) reads as its words
    (``function_call_output`` → "Function call output"); None and "" read as "".
    """
    if value is None or value == "":
        return ""
    if isinstance(choices, str):
        choices = globals()[choices]
    text = str(value)
    try:
        return str(choices(text).label)
    except ValueError:
        return text.replace("_", " ").strip().capitalize()


def readable_value(value: object) -> str:
    """A stored JSON value (a label's, a param's) as people read it, never a Python repr: a
    string as it is, a list of plain values as its items joined by ", ", anything else as
    compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int | float | bool) for v in value):
        return ", ".join(v if isinstance(v, str) else json.dumps(v) for v in value)
    return json.dumps(value, ensure_ascii=False)
