"""Media type sniffing from bytes (pure; no Django models).

The type of stored media is decided by looking at the bytes, never by trusting a client's
file name or declared type: images through Pillow, audio and video by their signatures.
"""

from __future__ import annotations

import io

from PIL import Image, UnidentifiedImageError

OCTET_STREAM = "application/octet-stream"

# Image formats Pillow identifies, mapped to the MIME types we serve them as. Formats not
# listed (e.g. Pillow's EPS) are served as opaque downloads.
_PILLOW_MIME = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "BMP": "image/bmp",
    "TIFF": "image/tiff",
    "WEBP": "image/webp",
}


def _sniff_signature(data: bytes) -> str | None:
    """Audio/video (and PDF) types recognised by their leading bytes."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[:4] == b"RIFF" and data[8:12] == b"AVI ":
        return "video/x-msvideo"
    if data[:4] == b"OggS":
        return "audio/ogg"
    if data[:4] == b"fLaC":
        return "audio/flac"
    if data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return "audio/mpeg"
    if data[4:8] == b"ftyp":
        brand = data[8:12]
        if brand in {b"M4A ", b"M4B "}:
            return "audio/mp4"
        if brand == b"qt  ":
            return "video/quicktime"
        return "video/mp4"
    if data[:4] == b"\x1a\x45\xdf\xa3":
        return "video/webm"
    if data[:5] == b"%PDF-":
        return "application/pdf"
    return None


def sniff_content_type(data: bytes) -> str:
    """The MIME type of ``data``, judged from its content alone."""
    signature_type = _sniff_signature(data)
    if signature_type:
        return signature_type
    try:
        with Image.open(io.BytesIO(data)) as image:
            image_format = image.format or ""
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return OCTET_STREAM
    return _PILLOW_MIME.get(image_format, OCTET_STREAM)
