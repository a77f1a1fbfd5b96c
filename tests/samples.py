"""Small binary test data."""

import io

from PIL import Image


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 10, 10)).save(out, format="PNG")
    return out.getvalue()


PNG_BYTES = _png()
