"""Undo PyRIT's reversible converters, so a reviewer reads an encoded text in plain words.

An encoding attack sends its prompt through converters (Base64, ROT13, Caesar, Atbash, binary,
Morse, leetspeak, …) and the target often answers in the same encoding. The thread shows the
text as the target saw it; :func:`decode_chain` runs the chain backwards (the last converter
is undone first) and says which steps it took and whether every one was exact. A converter
that cannot be undone (translation, a QR code, an LLM rewrite) ends the attempt: nothing is
guessed.

What is decoded is only ever offered, never put in place of what PyRIT recorded:
:func:`own_decoding` undoes a piece's *own* converter chain, :func:`trial_decodings` tries the
common reversible encodings on a text no converter touched, and both keep a decoding only when
it :func:`reads_better` than the text it came from (see :func:`readability`).

Pure functions over the stored identifiers (class name and params), no Django.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Decoded",
    "decode_chain",
    "looks_like_text",
    "own_decoding",
    "readability",
    "reads_better",
    "trial_decodings",
]


@dataclass(frozen=True)
class Decoded:
    """The decoded text, the converters undone (in the order undone), and whether every
    step was exact (leetspeak and Morse lose case and some letters)."""

    text: str
    steps: tuple[str, ...] = field(default_factory=tuple)
    exact: bool = True

    @property
    def label(self) -> str:
        """The encodings undone, for people: ``ROT13``, ``Base64 → Caesar``."""
        return " → ".join(step.removesuffix("Converter") for step in reversed(self.steps))


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


# --- does a decoding read better than its source? ---------------------------------------------

# The commonest English words (function words and a few verbs and nouns every answer uses): in
# English prose about half the words are among them, in ROT13, Base64, Morse or binary almost
# none. Contractions are kept whole, as :data:`_WORDS` reads them.
_COMMON_WORDS = frozenset(
    """a about after all also am an and any are as at back be because been before but by can
    can't could did do does don't for from get give go good had has have he help her here him
    his how i i'm if in into is it it's its just know let like make may me more most my no not
    now of on one only or other our out over please say see she so some sorry such than that
    the their them then there these they this those to up us use very want was way we well
    were what when where which who why will with would yes you your""".split()  # noqa: SIM905
)
_WORDS = re.compile(r"[a-z]+(?:'[a-z]+)?")

#: The :func:`readability` from which a text reads as language: English prose scores 0.3 to
#: 0.6, its ROT13 or Base64 0 to 0.05.
READS_AS_LANGUAGE = 0.2

#: Texts longer than this are not tried against every encoding (the page's cost stays bounded).
TRIAL_LIMIT = 20_000


def readability(text: str) -> float:
    """The share of ``text``'s words (runs of Latin letters, case ignored) that are among
    the commonest English words; 0 for a text without letters.

    One simple measure, chosen because it tells language from its encodings: ROT13 keeps the
    letters-and-spaces shape of a sentence and Base64 is valid ASCII, but neither keeps its
    words. It knows English only: a decoding into another language scores low and is then
    not offered (the original value PyRIT stored is still shown)."""
    words = _WORDS.findall(text.lower())
    if not words:
        return 0.0
    return sum(word in _COMMON_WORDS for word in words) / len(words)


def reads_better(decoded: str, source: str) -> bool:
    """Whether ``decoded`` reads as language and better than ``source``: it
    :func:`looks_like_text`, its :func:`readability` reaches :data:`READS_AS_LANGUAGE` and
    is higher than the source's."""
    if not looks_like_text(decoded):
        return False
    score = readability(decoded)
    return score >= READS_AS_LANGUAGE and score > readability(source)


def own_decoding(text: str, chain: Sequence[tuple[str, Mapping[str, Any]]]) -> Decoded | None:
    """``text`` (a piece's converted value) with the piece's own converter ``chain`` undone,
    when that reads better than ``text``; None otherwise."""
    decoded = decode_chain(text, chain)
    if decoded is None or not reads_better(decoded.text, text):
        return None
    return decoded


#: The encodings a text is tried against on demand: reversible without parameters.
TRIALS: tuple[tuple[str, Mapping[str, Any]], ...] = (
    ("ROT13Converter", {}),
    ("Base64Converter", {}),
    ("AtbashConverter", {}),
    ("BinaryConverter", {}),
    ("MorseConverter", {}),
)


def trial_decodings(
    text: str, *, hint: Sequence[tuple[str, Mapping[str, Any]]] = ()
) -> list[Decoded]:
    """The decodings of ``text`` worth offering when nothing recorded says it was encoded:
    each of :data:`TRIALS`, and ``hint`` (the converter chain of the prompt before an
    answer: a target often answers in it) first, that :func:`reads_better` than ``text``.

    Nothing is tried on a text that already reads as language, or one longer than
    :data:`TRIAL_LIMIT`."""
    if len(text) > TRIAL_LIMIT or readability(text) >= READS_AS_LANGUAGE:
        return []
    chains = [list(hint)] if hint else []
    chains += [[trial] for trial in TRIALS if not _covers(hint, trial)]
    found: list[Decoded] = []
    for chain in chains:
        decoded = decode_chain(text, chain)
        if decoded is None or not reads_better(decoded.text, text):
            continue
        if all(decoded.text != other.text for other in found):
            found.append(decoded)
    return found


def _covers(hint: Sequence[tuple[str, Mapping[str, Any]]], trial: tuple[str, Any]) -> bool:
    """Whether the hint is the trial's converter alone (then trying it again adds nothing)."""
    return len(hint) == 1 and hint[0][0] == trial[0]
