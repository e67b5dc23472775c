"""Decoding what a finding's span may carry: base64 and hex tokens, percent, \\x, \\u and HTML
escapes, Unicode tag characters, variation selectors and zero-width bits.

A rule with ``decode`` names one of DECODERS; the scanner scans the text a span decodes to for
instructions (an encoded prompt injection is reported as one, not as a random-looking secret).
Each decoder returns None unless the span decodes to readable text: most long tokens (hashes,
image data, keys) decode to bytes that are no text, and cost one failed decode.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

MAX_DECODED = 4_000  # characters of a decoded payload kept for scanning
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})+")
_X_ESCAPES = re.compile(r"(?:\\x[0-9A-Fa-f]{2})+")
_U_ESCAPES = re.compile(r"(?:\\u[0-9A-Fa-f]{4})+")


def readable(data: bytes) -> str | None:
    """data as text when it is UTF-8 of mostly printable characters."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text[:MAX_DECODED] if _is_text(text) else None


def _is_text(text: str) -> bool:
    """Printable text with a letter in it: what random bytes (a key, a hash, image data) never are."""
    if len(text) < 8:
        return False
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return printable >= 0.95 * len(text) and any(c.isalpha() for c in text)


def base64_or_hex(token: str) -> str | None:
    """A token of hex digits, base64 or base64url, as the text it encodes (a key=value token: its value)."""
    token = token.strip()
    if "=" in token.rstrip("="):
        return next(filter(None, map(_decoded_token, re.split(r"=+(?=[^=])", token))), None)
    return _decoded_token(token)


def _decoded_token(token: str) -> str | None:
    if len(token) < 16:
        return None
    if len(token) % 2 == 0 and _HEX.fullmatch(token):
        return readable(bytes.fromhex(token))
    body = token.rstrip("=")
    if "=" in body or ("-" in body or "_" in body) and ("+" in body or "/" in body):
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        if "-" in body or "_" in body:
            data = base64.urlsafe_b64decode(padded)
        else:
            data = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
    return readable(data)


def escapes(text: str) -> str | None:
    """Percent-, \\x-, \\u- or HTML-escaped text, unescaped (None when nothing changed)."""
    out = text
    if "\\x" in out:
        out = _X_ESCAPES.sub(lambda m: _bytes_text(bytes.fromhex(m.group(0).replace("\\x", ""))), out)
    if "\\u" in out:
        out = _U_ESCAPES.sub(lambda m: "".join(chr(int(h, 16)) for h in m.group(0).split("\\u")[1:]), out)
    if "&#" in out:
        out = html.unescape(out)
    if "%" in out:
        out = _bytes_text(unquote_to_bytes(out))
    return out[:MAX_DECODED] if out != text and _is_text(out) else None


def _bytes_text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def tag_characters(text: str) -> str | None:
    """Unicode tag characters (U+E0020-E007E) as the ASCII they mirror."""
    out = "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)
    return out[:MAX_DECODED] if _is_text(out) else None


def variation_selectors(text: str) -> str | None:
    """Bytes hidden as variation selectors, one a byte (U+FE00-FE0F: 0-15, U+E0100-E01EF: 16-255)."""
    data = bytearray()
    for c in text:
        code = ord(c)
        if 0xFE00 <= code <= 0xFE0F:
            data.append(code - 0xFE00)
        elif 0xE0100 <= code <= 0xE01EF:
            data.append(code - 0xE0100 + 16)
    return readable(bytes(data))


def zero_width_bits(text: str) -> str | None:
    """Bits hidden as zero-width spaces and non-joiners (either way round), eight to a byte."""
    bits = [c for c in text if c in "\u200b\u200c"]
    if len(bits) < 16 or len(bits) % 8:
        return None
    for zero in ("\u200b", "\u200c"):
        data = bytes(int("".join("0" if c == zero else "1" for c in bits[i : i + 8]), 2) for i in range(0, len(bits), 8))
        found = readable(data)
        if found is not None:
            return found
    return None


DECODERS: dict[str, Callable[[str], str | None]] = {
    "base64": base64_or_hex,
    "escapes": escapes,
    "tags": tag_characters,
    "variation-selectors": variation_selectors,
    "zero-width-bits": zero_width_bits,
}
