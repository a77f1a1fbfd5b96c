"""Undo PyRIT's reversible converters, so a reviewer reads an encoded text in plain words.

An encoding attack sends its prompt through converters (Base64, ROT13, Caesar, Atbash, binary,
Morse, leetspeak, …) and the target often answers in the same encoding. The thread shows the
text as the target saw it; :func:`decode_chain` runs the chain backwards (the last converter
is undone first) and says which steps it took and whether every one was exact. A converter
that cannot be undone (translation, a QR code, an LLM rewrite) ends the attempt: nothing is
guessed.

Pure functions over the stored identifiers (class name and params), no Django.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Decoded", "decode_chain", "looks_like_text"]


@dataclass(frozen=True)
class Decoded:
    """The decoded text, the converters undone (in the order undone), and whether every
    step was exact (leetspeak and Morse lose case and some letters)."""

    text: str
    steps: tuple[str, ...] = field(default_factory=tuple)
    exact: bool = True


class _Irreversible(ValueError):
    """This step cannot be undone for this text."""


_BASE64_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "b64encode": base64.b64decode,
    "standard_b64encode": base64.standard_b64decode,
    "urlsafe_b64encode": base64.urlsafe_b64decode,
    "b32encode": base64.b32decode,
    "b16encode": base64.b16decode,
    "a85encode": base64.a85decode,
    "b85encode": base64.b85decode,
}


def _base64(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    decoder = _BASE64_DECODERS.get(str(params.get("encoding_func") or "b64encode"))
    if decoder is None:
        raise _Irreversible
    try:
        raw = decoder(text.strip().encode("ascii"))
        return raw.decode("utf-8"), True
    except (ValueError, binascii.Error, UnicodeError) as exc:
        raise _Irreversible from exc


def _shift(text: str, offset: int, *, digits: bool = False) -> str:
    """Letters shifted by ``offset`` (mod 26), and digits too (mod 10) as PyRIT's Caesar does."""
    out = []
    for char in text:
        if "a" <= char <= "z":
            out.append(chr((ord(char) - 97 + offset) % 26 + 97))
        elif "A" <= char <= "Z":
            out.append(chr((ord(char) - 65 + offset) % 26 + 65))
        elif digits and "0" <= char <= "9":
            out.append(chr((ord(char) - 48 + offset) % 10 + 48))
        else:
            out.append(char)
    return "".join(out)


def _rot13(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    strategy = str(params.get("word_selection_strategy") or "AllWordsSelectionStrategy")
    if strategy != "AllWordsSelectionStrategy":
        # Only some words were rotated: rotating all of them back would garble the rest.
        raise _Irreversible
    return _shift(text, 13), True


def _caesar(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    try:
        offset = int(params["caesar_offset"])
    except (KeyError, TypeError, ValueError) as exc:
        raise _Irreversible from exc
    return _shift(text, -offset, digits=True), True


def _atbash(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    out = []
    for char in text:
        if "a" <= char <= "z":
            out.append(chr(219 - ord(char)))
        elif "A" <= char <= "Z":
            out.append(chr(155 - ord(char)))
        elif "0" <= char <= "9":
            out.append(chr(105 - ord(char)))
        else:
            out.append(char)
    return "".join(out), True


def _binary(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    groups = text.split()
    if not groups or any(set(g) - {"0", "1"} for g in groups):
        raise _Irreversible
    try:
        return "".join(chr(int(g, 2)) for g in groups), True
    except ValueError as exc:
        raise _Irreversible from exc


_MORSE = {
    ".-": "A", "-...": "B", "-.-.": "C", "-..": "D", ".": "E", "..-.": "F", "--.": "G",
    "....": "H", "..": "I", ".---": "J", "-.-": "K", ".-..": "L", "--": "M", "-.": "N",
    "---": "O", ".--.": "P", "--.-": "Q", ".-.": "R", "...": "S", "-": "T", "..-": "U",
    "...-": "V", ".--": "W", "-..-": "X", "-.--": "Y", "--..": "Z", "-----": "0",
    ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9", ".-.-.-": ".", "--..--": ",", "..--..": "?",
    ".----.": "'", "-.-.--": "!", "-..-.": "/", "-.--.": "(", "-.--.-": ")", ".-...": "&",
    "---...": ":", "-.-.-.": ";", "-...-": "=", ".-.-.": "+", "-....-": "-", "..--.-": "_",
    ".-..-.": '"', "...-..-": "$", ".--.-.": "@",
}  # fmt: skip


def _morse(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    if set(text) - set(".-/ \n"):
        raise _Irreversible
    words = [w for w in re.split(r"\s*/\s*", text.strip()) if w]
    try:
        decoded = " ".join("".join(_MORSE[c] for c in word.split()) for word in words)
    except KeyError as exc:
        raise _Irreversible from exc
    return decoded, False  # Morse has no case


# PyRIT's deterministic leetspeak substitutions, undone to the most likely letter.
_LEET = {"4": "a", "@": "a", "8": "b", "(": "c", "3": "e", "6": "g", "1": "i", "!": "i",
         "0": "o", "5": "s", "$": "s", "7": "t", "2": "z"}  # fmt: skip


def _leetspeak(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    return "".join(_LEET.get(c, c) for c in text), False  # 1 was i or l, 0 was o or O…


def _suffix(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    suffix = params.get("suffix")
    if not isinstance(suffix, str) or not text.endswith(suffix):
        raise _Irreversible
    # PyRIT joins with a space: "<prompt> <suffix>".
    return text[: len(text) - len(suffix)].removesuffix(" "), True


def _string_join(text: str, params: Mapping[str, Any]) -> tuple[str, bool]:
    join = params.get("join_value")
    if not isinstance(join, str) or not join:
        raise _Irreversible
    words = text.split(" ")
    return " ".join(word.replace(join, "") for word in words), False


_INVERSES: dict[str, Callable[[str, Mapping[str, Any]], tuple[str, bool]]] = {
    "Base64Converter": _base64,
    "ROT13Converter": _rot13,
    "CaesarConverter": _caesar,
    "AtbashConverter": _atbash,
    "BinaryConverter": _binary,
    "MorseConverter": _morse,
    "LeetspeakConverter": _leetspeak,
    "SuffixAppendConverter": _suffix,
    "StringJoinConverter": _string_join,
}

#: Converters whose output :func:`decode_chain` can turn back into text.
REVERSIBLE = frozenset(_INVERSES)


def decode_chain(text: str, chain: Sequence[tuple[str, Mapping[str, Any]]]) -> Decoded | None:
    """``text`` with the converters of ``chain`` (``(class_name, params)`` in the order
    PyRIT applied them) undone, last first; None when a step is not reversible or does not
    apply to this text, or when nothing changed."""
    if not chain:
        return None
    current, steps, exact = text, [], True
    for class_name, params in reversed(chain):
        inverse = _INVERSES.get(class_name)
        if inverse is None:
            return None
        try:
            current, step_exact = inverse(current, params)
        except _Irreversible:
            return None
        steps.append(class_name)
        exact = exact and step_exact
    if current == text:
        return None
    return Decoded(text=current, steps=tuple(steps), exact=exact)


def looks_like_text(text: str) -> bool:
    """Whether a decoding produced readable text rather than noise: mostly printable, with
    letters, and not one long run without a space."""
    if not text.strip():
        return False
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t")
    letters = sum(1 for c in text if c.isalpha())
    return printable / len(text) > 0.97 and letters / len(text) > 0.4
