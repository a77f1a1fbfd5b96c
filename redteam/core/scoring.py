"""Score value rules of contract §6.2 (no Django model imports)."""

from __future__ import annotations

import math

from redteam.core.choices import ScoreType


def score_numeric_value(score_type: str, score_value: str | None) -> float | None:
    """The value as a number (true → 1.0, false → 0.0), or None when it has none.

    Raises ``ValueError`` when the value is not valid for its type (contract §6.2): a true/false
    value other than "true"/"false" in any case, or a float_scale value outside [0, 1].
    """
    if score_value is None:
        return None
    if score_type == ScoreType.TRUE_FALSE:
        lowered = str(score_value).lower()
        if lowered not in {"true", "false"}:
            raise ValueError(
                f"true_false score value must be 'true' or 'false', not {score_value!r}"
            )
        return 1.0 if lowered == "true" else 0.0
    if score_type == ScoreType.FLOAT_SCALE:
        number = float(score_value)
        if math.isnan(number) or not 0.0 <= number <= 1.0:
            raise ValueError(f"float_scale score value must lie in [0, 1], not {score_value!r}")
        return number
    return None
