"""Context checks a rule's match must pass to be a finding: what a regular expression cannot say
cheaply. A rule names one with ``check``; each takes the content and the span and says whether the
match stands.

- zero-width: a run hides something, and so does one inside a word (splitting "ig-nore" from a
  filter), unless the word's script needs it: a joiner or non-joiner inside a Persian or Devanagari
  word, a zero-width space between Thai, Khmer, Myanmar or CJK characters (a word break in scripts
  written without spaces), a joiner between emoji (a family). One at the edge of a word hides nothing.
- variation-selectors: a run of presentation selectors (U+FE0E/FE0F: a doubled emoji selector) is
  harmless; any other run of selectors carries bytes.
- tags: tag characters spelling a subdivision flag after U+1F3F4 (Scotland, Wales) are the flag.
- owner-annotation: an HTML comment in the annotation syntax of the store's own tool (OpenClaw's
  recall annotations, dreaming and wiki markers, USER.md directive metadata; Mnemoscope's markdown
  export) is the owner's, not hidden text. Its text is still scanned by every other rule: a trigger
  phrase that asks the model to ignore its instructions is found as that.
- outside-code: a chat-template token inside `inline code` is someone writing about the format.
- url-carries-data: an image that fills its address with a placeholder or encoded text sends data
  out the moment it is rendered.
- not-encoded-data: a long token that is image data, a subresource-integrity hash, a public key or
  encoded text (base64 of a settings blob) is no random key; encoded text that holds a password, a
  token or user:password (HTTP basic auth) still is one.
- credential-value / strong- / strict-credential-value: what follows "password is" is one when it
  is quoted, a PIN of 4 digits or more, or a token of letters with a digit, a symbol or an inner
  capital - not a word ("stored", "patience"), a placeholder (${DB_PASSWORD}, <your key>, YOUR_KEY)
  or an address. Right after the word, with no "is": strong (letters, a digit and a symbol or mixed
  case), and strict after "pass" (a verb as often: "pass 'strict' to raise"), quoted or not.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from urllib.parse import unquote

from .decoding import base64_or_hex

_OWNER_ANNOTATION = re.compile(
    r"(?i:openclaw:[a-z0-9:_-]{1,80}"  # dreaming, wiki and human-section markers
    r"|openclaw-memory-(?:promotion|lineage):[^\s<>]{1,200}"
    r"|openclaw-publication:[^\s<>]{1,200}"
    r"|/?openclaw[-_][a-z_-]{1,60}"  # OPENCLAW_CACHE_BOUNDARY, OPENCLAW-RELOCATABLE-BOUNDARY
    r"|observed:\s*(?:\d{4}-\d{2}-\d{2}|yyyy-mm-dd)\s*\|\s*status:\s*(?:active|superseded)"
    r"|importance:\s*\d{1,2}"
    r"|trigger:\s*[^\s,;<>][^,;<>\n]{0,58}(?:[,;]\s*[^\s,;<>][^,;<>\n]{0,58}){0,11}"
    r"|project:\s*[\w./:@+~-]{1,200}(?:\s*;\s*[\w./:@+~-]{1,200}){0,9}"
    r"|[\w.:-]{1,80}\s+\d{4}-\d{2}-\d{2})"  # Mnemoscope's markdown export: <!-- id date -->
)
_TRIGGER_PHRASE_WORDS = 4  # OpenClaw's are "short trigger phrases"
_FLAG_TAGS = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,6}\U000e007f")
_PLACEHOLDER = re.compile(r"\{|\$\{|<|\[|%7[Bb]|%3[Cc]|%5[Bb]|[=/](?:[A-Z][A-Z0-9]*_)+[A-Z0-9]+\b|=[A-Z]{5,}(?=&|#|$)")
_QUERY_VALUE = re.compile(r"[?&][^=&#]*=([^&#]{16,})")
_QUOTES = "'\"‘’“”«»「」"
_PLACEHOLDER_VALUE = re.compile(r"[$<{%*\[]|(?i:your[_ -]|xxx|changeme|placeholder|redacted|example)|[A-Z]+_[A-Z_]*$")
_SYMBOLS = frozenset("!#$%&*+=?@^~")
_SECRET_TEXT = re.compile(r"(?i)pass(?:word|wd)?\b|secret|token|api[_-]?key|private key|^[\w.@+-]{1,64}:[^\s:]{4,}$")
_PUBLIC_KEY = re.compile(r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+$")


def zero_width(content: str, start: int, end: int) -> bool:
    if end - start > 1:
        return True
    char = content[start]
    before = content[start - 1] if start else ""
    after = content[end] if end < len(content) else ""
    if not (before.isalnum() and after.isalnum()):
        return False  # one, at the edge of a word (a line's BOM, a joiner between emoji): it hides nothing
    if char == "\u200d":
        return not (_emoji(before) and _emoji(after) or _joining_script(before) and _joining_script(after))
    if char == "\u200c":
        return not (_joining_script(before) and _joining_script(after))
    if char == "\u200b":
        return not (_spaceless_script(before) and _spaceless_script(after))
    return True


def _emoji(char: str) -> bool:
    code = ord(char)
    return code >= 0x1F000 or char == "\ufe0f" or 0xE0020 <= code <= 0xE007F or unicodedata.category(char) == "So"


def _joining_script(char: str) -> bool:
    """A letter or mark of a script past Latin, Greek and Cyrillic (Hebrew, Arabic, Indic, ...)."""
    code = ord(char)
    return (0x0590 <= code < 0x2000 or 0xA800 <= code < 0xABFF or 0xFB1D <= code <= 0xFEFC) and (
        unicodedata.category(char)[0] in "LM")


def _spaceless_script(char: str) -> bool:
    code = ord(char)
    return (0x0E00 <= code <= 0x0FFF or 0x1000 <= code <= 0x109F or 0x1780 <= code <= 0x17FF
            or 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7AF)


def variation_selectors(content: str, start: int, end: int) -> bool:
    return any(c not in "\ufe0e\ufe0f" for c in content[start:end])


def tags(content: str, start: int, end: int) -> bool:
    return not (start and content[start - 1] == "\U0001f3f4" and _FLAG_TAGS.fullmatch(content, start, end))


def owner_annotation(content: str, start: int, end: int) -> bool:
    comment = content[start:end]
    body = comment[4:-3] if comment.endswith("-->") and len(comment) >= 7 else comment[4:]
    body = body.strip()
    if not _OWNER_ANNOTATION.fullmatch(body):
        return True
    if body[:8].lower() == "trigger:":  # phrases, not sentences
        return any(len(p.split()) > _TRIGGER_PHRASE_WORDS for p in re.split(r"[,;]", body[8:]))
    return False


def outside_code(content: str, start: int, end: int) -> bool:
    line_start = content.rfind("\n", 0, start) + 1
    line_end = content.find("\n", end)
    line_end = len(content) if line_end < 0 else line_end
    return not (content.count("`", line_start, start) % 2 == 1 and "`" in content[end:line_end])


def url_carries_data(content: str, start: int, end: int) -> bool:
    url = content[start:end]
    query = url.partition("?")[2]
    if _PLACEHOLDER.search(url.partition("://")[2].partition("/")[2]):
        return True
    for value in _QUERY_VALUE.findall("?" + query) if query else ():
        decoded = base64_or_hex(value) or unquote(value.replace("+", " "))
        if decoded != value and len(decoded.split()) >= 3:
            return True
    return False


def not_encoded_data(content: str, start: int, end: int) -> bool:
    token = content[start:end]
    if re.match(r"sha(?:1|224|256|384|512)-", token):
        return False
    before = content[max(0, start - 48) : start]
    if before.endswith("base64,") or _PUBLIC_KEY.search(before):
        return False
    decoded = base64_or_hex(token)  # encoded text is no random key, unless the text is a secret
    return decoded is None or _SECRET_TEXT.search(decoded) is not None


def credential_value(content: str, start: int, end: int) -> bool:
    return _credential(content[start:end], strong=False)


def strong_credential_value(content: str, start: int, end: int) -> bool:
    return _credential(content[start:end], strong=True)


def strict_credential_value(content: str, start: int, end: int) -> bool:
    value = content[start:end]
    return _credential(value[1:-1] if value[:1] in _QUOTES else value, strong=True)


def _credential(value: str, strong: bool) -> bool:
    if value[:1] in _QUOTES:
        return len(value) > 4 and not _PLACEHOLDER_VALUE.match(value[1:]) and "://" not in value
    if value.strip("*`_~") != value:  # markdown emphasis or code around a word
        return False
    if _PLACEHOLDER_VALUE.match(value) or "://" in value or value[:1] in "/~.":
        return False
    if not strong and value.rstrip("#").isdigit():
        return len(value.rstrip("#")) >= 4
    letters, digits = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    symbols = any(c in _SYMBOLS for c in value)
    mixed = re.search(r"[a-z][A-Z]", value) is not None
    if strong:  # (a hyphen or an underscore counts here: a digit is needed besides)
        joined = "-" in value or "_" in value
        return letters and digits and (symbols or joined or mixed or re.search(r"[A-Z][a-z]", value) is not None)
    return letters and len(value) >= 5 and (digits or symbols or mixed)


CHECKS: dict[str, Callable[[str, int, int], bool]] = {
    "zero-width": zero_width,
    "variation-selectors": variation_selectors,
    "tags": tags,
    "owner-annotation": owner_annotation,
    "outside-code": outside_code,
    "url-carries-data": url_carries_data,
    "not-encoded-data": not_encoded_data,
    "credential-value": credential_value,
    "strong-credential-value": strong_credential_value,
    "strict-credential-value": strict_credential_value,
}
