"""Credentials in a real keyring (GNOME Keyring's Secret Service on a private bus), or none.

No mock: the keyring is the daemon's, started by helpers.keyring_daemon; "no keyring" is
keyring's own fail backend, what a headless machine has.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from helpers.keyring_daemon import keyring_daemon, no_keyring, secret_service  # noqa: F401
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemoscope.storage.credentials import (
    Answer,
    Credentials,
    KeyringUnavailableError,
    Request,
    Secret,
    credential_name,
    forget,
    keyring_status,
    names_file,
    redacted,
    remember,
    scrubbed,
    secret,
    split_secret,
    stored_names,
)

NAME = "postgresql://bob@db.example:5432/agents"


def test_a_secret_is_stored_read_and_forgotten_in_the_secret_service(secret_service) -> None:  # noqa: F811
    usable, why = keyring_status()
    assert usable and "SecretService" in why
    assert secret(NAME) is None

    backend = remember(NAME, Secret("hunter2-ü"))
    assert "SecretService" in backend
    assert secret(NAME) == Secret("hunter2-ü")
    assert secret(NAME).reveal() == "hunter2-ü"
    assert stored_names() == [NAME]
    kept = names_file().read_text(encoding="utf-8")
    assert NAME in kept and "hunter2" not in kept

    remember(NAME, "replaced")  # replacing keeps one name
    assert secret(NAME).reveal() == "replaced" and stored_names() == [NAME]

    assert forget(NAME) is True
    assert secret(NAME) is None and stored_names() == []
    assert forget(NAME) is False


def test_an_empty_secret_is_not_stored(secret_service) -> None:  # noqa: F811
    with pytest.raises(Exception, match="empty secret"):
        remember(NAME, "")
    assert secret(NAME) is None and stored_names() == []


def test_without_a_keyring_nothing_is_written_and_the_reason_names_the_backend(no_keyring, tmp_path: Path) -> None:  # noqa: F811
    usable, why = keyring_status()
    assert not usable and "fail" in why
    with pytest.raises(KeyringUnavailableError, match="Nothing was stored") as refused:
        remember(NAME, Secret("hunter2"))
    assert "hunter2" not in str(refused.value)
    with pytest.raises(KeyringUnavailableError):
        secret(NAME)
    assert not (tmp_path / "mnemoscope-home").exists()


def test_without_a_keyring_the_secret_is_asked_for_each_time(no_keyring) -> None:  # noqa: F811
    asked: list[Request] = []

    def ask(request: Request) -> Answer:
        asked.append(request)
        return Answer(Secret("hunter2"), remember=True)

    first = Credentials(ask)
    assert first.get(NAME).reveal() == "hunter2"
    assert first.get(NAME).reveal() == "hunter2"  # once per run
    assert first.accepted(NAME) is None  # asked to remember, but there is nowhere to
    assert len(asked) == 1
    assert not asked[0].can_remember and "fail" in asked[0].why_not
    assert asked[0].prompt == f"Password for {NAME}"

    assert Credentials(ask).get(NAME).reveal() == "hunter2"  # the next run asks again
    assert len(asked) == 2
    assert Credentials(None).get(NAME) is None  # nobody to ask


def test_an_answer_is_remembered_once_the_server_took_it(secret_service) -> None:  # noqa: F811
    asked: list[Request] = []

    def ask(request: Request) -> Answer:
        asked.append(request)
        return Answer(Secret("hunter2"), remember=True)

    run = Credentials(ask)
    assert run.get(NAME).reveal() == "hunter2"
    assert asked[0].can_remember and asked[0].why_not == ""
    assert secret(NAME) is None  # not before the server accepted it
    assert "SecretService" in run.accepted(NAME)
    assert secret(NAME).reveal() == "hunter2" and stored_names() == [NAME]

    assert Credentials(None).get(NAME).reveal() == "hunter2"  # the next run: from the keyring, unasked
    assert len(asked) == 1


def test_an_answer_not_to_be_remembered_stays_out_of_the_keyring(secret_service) -> None:  # noqa: F811
    run = Credentials(lambda request: Answer(Secret("once-only")))
    assert run.get(NAME).reveal() == "once-only"
    assert run.accepted(NAME) is None
    assert secret(NAME) is None and stored_names() == []


def test_a_refused_secret_is_asked_for_again_instead_of_the_keyrings(secret_service) -> None:  # noqa: F811
    remember(NAME, "stale")
    asked: list[Request] = []

    def ask(request: Request) -> Answer:
        asked.append(request)
        return Answer(Secret("fresh"), remember=True)

    run = Credentials(ask)
    assert run.get(NAME).reveal() == "stale"
    run.refused(NAME)
    assert run.get(NAME).reveal() == "fresh"
    assert asked[0].retry
    run.accepted(NAME)
    assert secret(NAME).reveal() == "fresh"


def test_a_cancelled_question_gives_no_secret(no_keyring) -> None:  # noqa: F811
    assert Credentials(lambda request: None).get(NAME) is None


def test_for_url_takes_the_password_written_in_the_url_first(secret_service) -> None:  # noqa: F811
    remember(NAME, "from-keyring")
    run = Credentials(None)
    clean, name, found = run.for_url("postgresql+psycopg://bob:in%40url@db.example/agents")
    assert (clean, name, found.reveal()) == ("postgresql+psycopg://bob@db.example/agents", NAME, "in@url")
    clean, name, found = Credentials(None).for_url("postgresql+psycopg://bob@db.example/agents")
    assert found.reveal() == "from-keyring"


def test_a_secret_shows_only_as_a_mask() -> None:
    value = Secret("hunter2")
    assert "hunter2" not in f"{value} {value!r} {value!s} {value:>20} {[value]} {dict(a=value)}"
    assert "hunter2" not in str(ValueError(f"could not log in with {value}"))
    assert json.dumps({"password": value}, default=str) == '{"password": "********"}'
    with pytest.raises(TypeError):
        json.dumps({"password": value})
    with pytest.raises(TypeError):
        pickle.dumps(value)
    assert value == Secret("hunter2") and value != Secret("hunter3") and value != "hunter2"
    assert not Secret("")


def test_scrubbed_masks_secrets_and_urls_in_a_librarys_message() -> None:
    message = 'connection to "postgresql://bob:hunter%2F2@h:5432/db" failed: password "hunter/2" rejected'
    cleaned = scrubbed(message, Secret("hunter/2"))
    assert "hunter" not in cleaned
    assert "postgresql://bob@h:5432/db" in cleaned


@pytest.mark.parametrize("before", ["", "(", "url=", "x" * 40, "at 12:30 ", "'"])
def test_every_url_in_a_message_loses_its_password_whatever_stands_before_it(before: str) -> None:
    cleaned = scrubbed(f"failed: {before}postgresql://bob:hunter2@db.example:5432/app) and more")
    assert "hunter2" not in cleaned and "bob@db.example:5432/app" in cleaned


@pytest.mark.parametrize("before", ["open (://x),", "9://x@", "1.2://a;", "see ://,", "-://", "1://" * 3])
def test_a_url_after_a_schemeless_separator_is_redacted_too(before: str) -> None:
    cleaned = scrubbed(f"{before}postgresql://dana:hunter2@db/mem failed")
    assert "hunter2" not in cleaned and "postgresql://dana@db/mem" in cleaned


def test_a_message_holding_a_huge_word_and_no_url_comes_back_unchanged() -> None:
    word = "m-" + "x" * 100_000
    assert scrubbed(f"No memory {word} in /tmp/store.") == f"No memory {word} in /tmp/store."
    assert scrubbed("://no scheme here ://") == "://no scheme here ://"


# -- names and redaction on generated URLs ---------------------------------------------------------

SECRET_PARAMETERS = ("password", "api_key", "apiKey", "access_token", "X-Api-Key", "sslpassword", "token", "secret")
PLAIN_PARAMETERS = ("sslmode", "connect_timeout", "tenant", "database", "application_name")
label = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12)
hosts = st.one_of(
    st.lists(label, min_size=1, max_size=3).map(".".join),
    st.sampled_from(["127.0.0.1", "[::1]", "[2001:db8::7]", "localhost"]),
)
users = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-~", min_size=1, max_size=16)
encoded_passwords = st.text(min_size=1, max_size=40).map(lambda text: (text, quote(text, safe="")))
# What people type unencoded: ':' and '@' (among others) inside a password work without encoding.
typed_passwords = st.text(alphabet="abcXYZ019!$&'()*+,;=:@._~-", min_size=1, max_size=24).map(lambda t: (t, t))


@st.composite
def store_urls(draw: st.DrawFn) -> tuple[str, str, str]:
    """(url with a secret, the same url without it, the secret)."""
    scheme = draw(st.sampled_from(["postgresql", "postgresql+psycopg", "http", "https", "mysql+pymysql"]))
    host = draw(hosts)
    port = draw(st.none() | st.integers(1, 65535))
    hostport = host + (f":{port}" if port else "")
    path = draw(st.lists(label, max_size=3).map(lambda parts: "".join(f"/{p}" for p in parts)))
    plain = draw(st.lists(st.tuples(st.sampled_from(PLAIN_PARAMETERS), label), max_size=2))
    in_query = draw(st.booleans())
    password, written = draw(encoded_passwords | typed_passwords)
    user = draw(users)
    plain_query = "&".join(f"{k}={v}" for k, v in plain)
    if in_query:
        key = draw(st.sampled_from(SECRET_PARAMETERS))
        pairs = [f"{k}={v}" for k, v in plain]
        pairs.insert(draw(st.integers(0, len(pairs))), f"{key}={quote_plus(password)}")
        with_secret = f"{scheme}://{user}@{hostport}{path}?{'&'.join(pairs)}"
    else:
        with_secret = f"{scheme}://{user}:{written}@{hostport}{path}" + (f"?{plain_query}" if plain_query else "")
    without = f"{scheme}://{user}@{hostport}{path}" + (f"?{plain_query}" if plain_query else "")
    return with_secret, without, password


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(store_urls())
def test_redacted_removes_the_secret_and_nothing_else(case: tuple[str, str, str]) -> None:
    with_secret, without, password = case
    assert redacted(with_secret) == without
    clean, found = split_secret(with_secret)
    assert clean == without and found is not None and found.reveal() == password
    assert redacted(without) == without
    assert credential_name(with_secret) == credential_name(without)
    name = credential_name(with_secret)
    assert "?" not in name and ":" + password + "@" not in name


@given(store_urls())
def test_credential_names_do_not_depend_on_the_driver_the_default_port_or_a_trailing_slash(case) -> None:
    _, without, _ = case
    assert credential_name(without) == credential_name(without.replace("+psycopg", "").replace("+pymysql", ""))


def test_credential_names_of_the_urls_other_engineers_build_on() -> None:
    assert credential_name("postgresql+psycopg://bob:pw@DB.Example/agents?sslmode=require") == NAME
    assert credential_name("postgresql://bob@db.example:5432/agents") == NAME
    assert credential_name("http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    assert credential_name("https://chroma.example:443") == "https://chroma.example"
    assert credential_name("embeddings:https://api.openai.com/v1/") == "embeddings:https://api.openai.com/v1"
    assert credential_name("embeddings:https://key:sk-abc@api.openai.com/v1") == "embeddings:https://key@api.openai.com/v1"
    assert redacted("embeddings:https://key:sk-abc@api.openai.com/v1") == "embeddings:https://key@api.openai.com/v1"
    assert redacted("sqlite:///tmp/memory.db") == "sqlite:///tmp/memory.db"
    assert redacted("/home/bob/workspace") == "/home/bob/workspace"
    assert redacted("http://bob:pw@host:notaport/x") == "http://bob@host:notaport/x"  # unparsable: still redacted


def test_a_locked_keyring_is_not_usable_and_the_secret_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Its own daemon: a collection locked here cannot be unlocked without a person at a prompt."""
    import secretstorage
    from helpers.keyring_daemon import (
        DaemonUnavailable,
        start_daemons,
        stop_daemons,
        use_backend_from_environment,
        within,
    )
    from jeepney.io.blocking import open_dbus_connection

    try:
        daemon, started = start_daemons(tmp_path / "locked-keyring")
    except DaemonUnavailable as exc:
        pytest.skip(f"no Secret Service keyring could be started here: {exc}")
    try:
        monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", daemon.bus_address)
        monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))
        use_backend_from_environment()
        remember(NAME, "kept")
        with open_dbus_connection(bus=daemon.bus_address) as connection:
            secretstorage.get_default_collection(connection).lock()
        usable, why = within(30, keyring_status)
        assert not usable and "SecretService" in why and "KeyringLocked" in why
        asked: list[Request] = []
        run = Credentials(lambda request: asked.append(request) or Answer(Secret("typed")))
        assert within(30, lambda: run.get(NAME)).reveal() == "typed"
        assert not asked[0].can_remember and "KeyringLocked" in asked[0].why_not
    finally:
        stop_daemons(started)
        monkeypatch.undo()
        use_backend_from_environment()
