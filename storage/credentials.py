"""Passwords and API keys: kept only in the OS keyring, never in a file Mnemoscope writes.

A credential is named by a stable string without its secret, derived from what it opens:
``credential_name("postgresql+psycopg://bob:pw@db.example/agents")`` is
``postgresql://bob@db.example:5432/agents``; an embeddings key is named
``embeddings:https://api.openai.com/v1``. The keyring holds the secret under the service
``mnemoscope`` and that name.

    secret("postgresql://bob@db.example:5432/agents")  # Secret or None
    remember(name, value); forget(name); keyring_status()  # (usable, why)
    Credentials(ask).get(name)  # the keyring's, else asked for (and offered to be remembered)

A secret travels as a ``Secret``: its str, repr and format are a mask, JSON and pickle refuse
it, and only ``reveal()`` gives the text, at the one call that hands it to a driver. Every URL
that is shown, saved or put in a message goes through ``redacted()`` first; ``scrubbed()`` cleans
a library's error text before it becomes a message.

The keyring cannot list what it holds on every platform, so the names (never the values) of
the credentials stored through Mnemoscope are kept in its data folder (``credentials.json``,
beside the app's settings; MNEMOSCOPE_HOME relocates it).
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote, unquote, unquote_plus, urlsplit

from .atomic_file import atomic_write_bytes
from .data_folder import data_folder
from .errors import StoreError

SERVICE = "mnemoscope"
NAMES_FILE = "credentials.json"
MASK = "********"
# A name holds the port always (databases) or only when it is not the scheme's default (web).
NAMED_DEFAULT_PORTS = {"postgresql": 5432, "postgres": 5432, "mysql": 3306}
UNNAMED_DEFAULT_PORTS = {"http": 80, "https": 443}
# Query parameters that carry a secret (matched on the lower-cased name, "-" read as "_").
SECRET_PARAMETER = re.compile(r"pass|pwd|secret|token|api_?key|access_?key|auth|credential|signature|^sig$|^key$")
# What follows a URL's "://"; its scheme is found from there backwards (at most SCHEME_LONGEST
# characters), so that a long run of letters is read once, not tried from each of its letters.
_URL_REST = re.compile(r"://[^\s'\"<>]*")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
SCHEME_LONGEST = 32


class KeyringUnavailableError(StoreError):
    """No usable keyring: nothing was stored or read. The secret is asked for each time instead."""


class Secret:
    """A password or API key. Shown, logged, formatted or serialised, it is a mask; ``reveal()``
    is the one way to the text."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError("a Secret holds text")
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return MASK

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode("utf-8"), other._value.encode("utf-8"))

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> Any:
        raise TypeError("a Secret is not pickled: keep it in the keyring")


# -- URLs without their secrets ------------------------------------------------------------------


def split_secret(url: str) -> tuple[str, Secret | None]:
    """The URL without its password (or secret query parameter), and that secret if it held one."""
    purpose, url = _purpose(url)
    if "://" not in url:
        return purpose + url, None
    parts = _split(url)
    if parts is None:
        return purpose + _redacted_roughly(url), None
    found: Secret | None = None
    netloc = parts.netloc
    userinfo, at, hostport = netloc.rpartition("@")
    if at:
        user, colon, password = userinfo.partition(":")
        if colon:
            found = Secret(unquote(password))
        netloc = f"{user}@{hostport}" if user else hostport
    kept = []
    for pair in parts.query.split("&") if parts.query else []:
        key, _, value = pair.partition("=")
        if SECRET_PARAMETER.search(unquote_plus(key).lower().replace("-", "_")):
            found = found or Secret(unquote_plus(value))
        else:
            kept.append(pair)
    return purpose + _joined(parts.scheme, netloc, parts.path, "&".join(kept), parts.fragment), found


def redacted(url: str) -> str:
    """The URL as it may be shown, saved or logged: no password, no secret query parameter."""
    return split_secret(url)[0]


def scrubbed(text: str, *secrets: Secret | None) -> str:
    """Text (a library's error message) fit for a person: every URL in it redacted, and the
    secrets given replaced by a mask wherever they appear."""
    text = _urls_redacted(text)
    for secret in secrets:
        if secret:
            for form in {secret.reveal(), quote(secret.reveal(), safe="")}:
                text = text.replace(form, MASK)
    return text


def _urls_redacted(text: str) -> str:
    """text with every URL in it (a scheme of letters, digits, +, . or -, starting with a letter,
    then "://" and no space or quote) redacted; linear in text: each "://" is looked at once, a
    URL's rest read once, and a scheme-less "://" swallows nothing after it."""
    out: list[str] = []
    done = at = 0
    while (at := text.find("://", at)) >= 0:
        start = at
        while start > done and at - start < SCHEME_LONGEST and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < at and not ("a" <= text[start].lower() <= "z"):
            start += 1
        if start == at:  # no scheme before it
            at += 1
            continue
        rest = _URL_REST.match(text, at)
        end = rest.end() if rest is not None else at + 3
        out += [text[done:start], redacted(text[start:end])]
        done = at = end
    return "".join(out) + text[done:]


def credential_name(url: str) -> str:
    """The keyring name for what a URL opens: scheme without driver, user, lower-cased host, port
    (a database's default one filled in, a web one's left out), path; no secret, no query, so
    every spelling of one server's URL names one credential. A ``purpose:`` prefix is kept, so
    ``embeddings:https://api.openai.com/v1/`` is ``embeddings:https://api.openai.com/v1``."""
    purpose, url = _purpose(url.strip())
    purpose = purpose.lower()
    if "://" not in url:
        return purpose + url
    parts = _split(url)
    if parts is None:
        return purpose + _redacted_roughly(url)
    scheme = parts.scheme.lower().partition("+")[0]
    userinfo, at, hostport = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0] if at else ""
    try:
        host, port = (parts.hostname or ""), parts.port
    except ValueError:
        host, port = hostport.lower(), None
    if ":" in host:
        host = f"[{host}]"
    port = port or NAMED_DEFAULT_PORTS.get(scheme)
    if port == UNNAMED_DEFAULT_PORTS.get(scheme):
        port = None
    netloc = (f"{user}@" if user else "") + host + (f":{port}" if port and host else "")
    path = parts.path.rstrip("/") if host else parts.path
    return purpose + _joined(scheme, netloc, path, "", "")


def _purpose(url: str) -> tuple[str, str]:
    """("embeddings:", "https://...") for "embeddings:https://..."; ("", url) for a plain URL."""
    head, sep, tail = url.partition("://")
    if sep and ":" in head:
        purpose, _, scheme = head.partition(":")
        return purpose + ":", f"{scheme}://{tail}"
    return "", url


def _split(url: str) -> Any:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is no number
    except ValueError:
        return None
    return parts


def _joined(scheme: str, netloc: str, path: str, query: str, fragment: str) -> str:
    """urlunsplit, but keeping the "//" of an empty authority (sqlite:///path stays so)."""
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "") + (f"#{fragment}" if fragment else "")


def _redacted_roughly(url: str) -> str:
    """For a URL urlsplit refuses (a port that is no number): drop the password between the user and '@'."""
    return re.sub(r"^([^:/?#]+://[^:@/?#]*):[^/?#]*@", r"\1@", url)


# -- the keyring ---------------------------------------------------------------------------------


class KeyringStatus(NamedTuple):
    usable: bool
    why: str


def keyring_backend_name() -> str:
    import keyring

    backend = keyring.get_keyring()
    return f"{getattr(backend, 'name', type(backend).__name__)} ({type(backend).__module__}.{type(backend).__name__})"


def keyring_status() -> KeyringStatus:
    """Whether secrets can be kept in the keyring here, and why (or why not), naming the backend."""
    import keyring
    from keyring.backends import chainer, fail

    backend = keyring.get_keyring()
    label = keyring_backend_name()
    if isinstance(backend, fail.Keyring) or (isinstance(backend, chainer.ChainerBackend) and not backend.backends):
        return KeyringStatus(False, f"no OS keyring is available here (the active backend is {label})")
    if type(backend).__module__ == "keyring.backends.null":
        return KeyringStatus(False, f"the keyring is switched off (the active backend is {label})")
    try:
        backend.get_password(SERVICE, "mnemoscope:probe")
    except Exception as exc:  # a locked keyring, a D-Bus without the secrets service, ...
        return KeyringStatus(False, f"the keyring {label} cannot be used: {_reason(exc)}")
    return KeyringStatus(True, f"secrets are kept in {label}")


def secret(name: str) -> Secret | None:
    """The secret the keyring holds under name, or None. Raises KeyringUnavailableError when the
    keyring cannot be read."""
    import keyring

    try:
        value = keyring.get_password(SERVICE, name)
    except Exception as exc:
        raise KeyringUnavailableError(f"The keyring could not be read for {name}: {_reason(exc)}.") from None
    return None if value is None else Secret(value)


def remember(name: str, value: Secret | str) -> str:
    """Keep value in the keyring under name; returns the backend's name. Nothing is written
    anywhere else when the keyring cannot take it (KeyringUnavailableError)."""
    import keyring

    status = keyring_status()
    if not status.usable:
        raise KeyringUnavailableError(f"Nothing was stored for {name}: {status.why}.")
    text = value.reveal() if isinstance(value, Secret) else value
    if not text:
        raise StoreError(f"An empty secret was given for {name}; nothing was stored.")
    try:
        keyring.set_password(SERVICE, name, text)
    except Exception as exc:
        raise KeyringUnavailableError(f"The keyring did not store the secret for {name}: {_reason(exc)}.") from None
    _keep_name(name, True)
    return keyring_backend_name()


def forget(name: str) -> bool:
    """Delete the secret kept under name; False if the keyring held none."""
    import keyring
    from keyring.errors import PasswordDeleteError

    status = keyring_status()
    if not status.usable:
        raise KeyringUnavailableError(f"Nothing can be forgotten for {name}: {status.why}.")
    try:
        keyring.delete_password(SERVICE, name)
        deleted = True
    except PasswordDeleteError:
        deleted = False
    except Exception as exc:
        raise KeyringUnavailableError(f"The keyring did not delete the secret for {name}: {_reason(exc)}.") from None
    _keep_name(name, False)
    return deleted


def stored_names() -> list[str]:
    """The names of the credentials stored through Mnemoscope (names only), sorted."""
    try:
        data = json.loads(names_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    names = data.get("names") if isinstance(data, dict) else None
    return sorted(n for n in names if isinstance(n, str)) if isinstance(names, list) else []


def names_file() -> Path:
    return data_folder() / NAMES_FILE


def _keep_name(name: str, present: bool) -> None:
    names = set(stored_names())
    if (name in names) == present:
        return
    names = names | {name} if present else names - {name}
    payload = {"version": 1, "note": "names only: the secrets are in the OS keyring", "names": sorted(names)}
    atomic_write_bytes(names_file(), (json.dumps(payload, indent=2) + "\n").encode("utf-8"))


def _reason(exc: BaseException) -> str:
    """A keyring error as a phrase: its type, and its text scrubbed of URLs' secrets."""
    text = scrubbed(" ".join(str(exc).split()))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- asking a person -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What the person is asked: the credential's name, a prompt, whether the answer can be
    remembered (and why not), and whether the last answer was refused."""

    name: str
    prompt: str
    can_remember: bool
    why_not: str = ""
    retry: bool = False


@dataclass(frozen=True)
class Answer:
    secret: Secret
    remember: bool = False


Ask = Callable[[Request], "Answer | None"]


class Credentials:
    """Secrets for one run: from the keyring, else asked through ``ask`` (a terminal prompt, a
    dialog), each asked once per run. An answer the person asked to remember is stored in the
    keyring once the server took it (``accepted``); a refused one is asked for again."""

    def __init__(self, ask: Ask | None = None) -> None:
        self._ask = ask
        self._known: dict[str, Secret] = {}
        self._to_remember: set[str] = set()
        self._refused: set[str] = set()

    def offer(self, name: str, value: Secret, *, remember: bool = False) -> None:
        """A secret the person gave up front (a connect dialog's password field): used before the
        keyring's, and remembered once the server took it if they asked."""
        self._known[name] = value
        self._refused.discard(name)
        if remember:
            self._to_remember.add(name)

    def stored(self, name: str) -> Secret | None:
        """The secret for name known this run or held by the keyring; nobody is asked."""
        if name in self._known:
            return self._known[name]
        if name in self._refused or not keyring_status().usable:
            return None
        try:
            found = secret(name)
        except KeyringUnavailableError:
            return None
        if found:
            self._known[name] = found
        return found

    def get(self, name: str, prompt: str | None = None) -> Secret | None:
        """The secret for name, or None when the keyring has none and nobody could be asked
        (or the person cancelled)."""
        if name in self._known:
            return self._known[name]
        status = keyring_status()
        if status.usable and name not in self._refused:
            try:
                found = secret(name)
            except KeyringUnavailableError:
                found = None
            if found:
                self._known[name] = found
                return found
        if self._ask is None:
            return None
        answer = self._ask(Request(
            name=name,
            prompt=prompt or f"Password for {name}",
            can_remember=status.usable,
            why_not="" if status.usable else status.why,
            retry=name in self._refused,
        ))
        if answer is None or not answer.secret:
            return None
        self._known[name] = answer.secret
        if answer.remember and status.usable:
            self._to_remember.add(name)
        return answer.secret

    def for_url(self, url: str, prompt: str | None = None) -> tuple[str, str, Secret | None]:
        """(the URL without its secret, the credential's name, the secret): the one written into
        the URL wins, then the keyring's, then the person's answer."""
        clean, inline = split_secret(url)
        name = credential_name(clean)
        if inline:
            self._known[name] = inline
            return clean, name, inline
        return clean, name, self.get(name, prompt or f"Password for {redacted(url)}")

    def accepted(self, name: str) -> str | None:
        """The server took the secret: remember it if the person asked to. Returns where it was
        stored (the backend's name), or None."""
        self._refused.discard(name)
        if name not in self._to_remember or name not in self._known:
            return None
        self._to_remember.discard(name)
        return remember(name, self._known[name])

    def refused(self, name: str) -> None:
        """The server refused the secret: the next get() asks again (saying so), and a stale copy
        in the keyring is not used."""
        self._known.pop(name, None)
        self._to_remember.discard(name)
        self._refused.add(name)
