"""Stores on servers: the native store on PostgreSQL, its vectors on a Chroma server, or both as
one workspace (open_store sends every URL here).

A password or token comes from the URL itself, else the keyring, else (only once the server asks
for one) the person, through the Credentials the caller passes; a refused one is asked for again,
up to three times. What the person asked to remember is stored in the keyring once the server
took it. No secret is kept anywhere else: the store's location is its URL without one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .credentials import Credentials, Secret, credential_name, scrubbed
from .embedders.base import Embedder
from .errors import SecretRefusedError, UnreadableStoreError
from .journal.log import Journal
from .settings import SETTINGS_KEY, StoreSettings
from .source import StoreParts
from .store_url import CHROMA_SERVER, PATH, POSTGRESQL, Location, LocationError, parse_location, server_folder

T = TypeVar("T")
ATTEMPTS = 3


def open_location(
    target: str | Path, vectors: str | None, *, read_only: bool, credentials: Credentials | None,
    create_with: Embedder | None = None,
) -> StoreParts:
    """The parts of the store target names (with vectors: the Chroma server holding its vectors),
    for opening.built. create_with: make the store where it is missing (the schema in an empty
    database, the native collection on a Chroma server), recording that embedder."""
    try:
        location = parse_location(target)
        vector_location = parse_location(vectors) if vectors else None
    except LocationError as exc:
        raise UnreadableStoreError(str(exc)) from None
    credentials = credentials or Credentials()
    if vector_location is not None and vector_location.kind != CHROMA_SERVER:
        raise UnreadableStoreError(
            f"--vectors takes a Chroma server's URL (http(s)://HOST:PORT), not {vector_location.text}."
        )
    if location.kind == PATH:
        raise UnreadableStoreError(
            f"{location.text} is a path: a Chroma server's vectors go with a PostgreSQL store "
            "(postgresql+psycopg://USER@HOST/DATABASE), or open the server alone by its URL."
        )
    if location.kind == CHROMA_SERVER:
        if vector_location is not None:
            raise UnreadableStoreError(f"{location.text} is a Chroma server already: give --vectors with a PostgreSQL store.")
        vector_location = location
    vector_source = None
    if vector_location is not None:
        held = vector_location
        vector_source = _with_secret(held, credentials, lambda token: _open_chroma(held, token, read_only, create_with))
    try:
        if location.kind == POSTGRESQL:
            shown = location.text + (f" + {vector_location.text}" if vector_location else "")
            parts = _with_secret(location, credentials, lambda password: _open_postgresql(
                location, password, read_only=read_only, vectors=vector_source, shown=shown,
                create=create_with is not None))
        else:
            parts = _chroma_store(location, vector_source, read_only=read_only)
    except BaseException:
        if vector_source is not None:
            vector_source.close()
        raise
    parts.opened_as = (location.text, vector_location.text if vector_location and vector_location != location else None)
    recorded = _recorded_vectors(parts) if location.kind == POSTGRESQL and vector_location is None else None
    if recorded:  # the store names its Chroma server: open the two as one workspace
        parts.close()
        return open_location(target, recorded, read_only=read_only, credentials=credentials)
    return parts


def _recorded_vectors(parts: StoreParts) -> str | None:
    """The Chroma server a store's settings name for its vectors."""
    try:
        return StoreSettings.from_dict(parts.journal.read_setting(SETTINGS_KEY)).vectors_url
    except BaseException:
        parts.close()
        raise


def _with_secret(location: Location, credentials: Credentials, open_with: Callable[[Secret | None], T]) -> T:
    """open_with(secret): the URL's secret, else the keyring's, else none at all until the server
    asks for one; then the person is asked (again after a refusal)."""
    name = credential_name(location.text)
    given = location.secret or credentials.stored(name)
    for _ in range(ATTEMPTS):
        try:
            opened = open_with(given)
        except SecretRefusedError as exc:
            if location.secret:  # written into the URL: asking would not change it
                raise SecretRefusedError(scrubbed(str(exc), given)) from None
            if given is not None:
                credentials.refused(name)
            asked_for = "Token" if location.kind == CHROMA_SERVER else "Password"
            given = credentials.get(name, f"{asked_for} for {location.text}")
            if given is None:
                raise SecretRefusedError(
                    f"{scrubbed(str(exc))} Store the secret with 'mnemoscope credentials set {name}', "
                    "or give it when asked (--password-stdin reads it from stdin)."
                ) from None
            continue
        if given is not None:
            credentials.accepted(name)
        return opened
    raise SecretRefusedError(f"{location.text} refused the secret {ATTEMPTS} times; nothing was opened.")


def _open_postgresql(
    location: Location, password: Secret | None, *, read_only: bool, vectors: Any, shown: str, create: bool
) -> StoreParts:
    try:
        from .native.db.postgres_source import open_postgres_store
    except ImportError as exc:
        raise UnreadableStoreError(
            f"Opening {location.text} needs the PostgreSQL driver: pip install 'mnemoscope[postgres]' ({exc})."
        ) from None
    try:
        return open_postgres_store(
            location.driver_url(password), root=server_folder(location), location=shown, read_only=read_only,
            vectors=vectors, create=create,
        )
    except SecretRefusedError:
        raise
    except UnreadableStoreError:  # no Mnemoscope store there: AgentX's tables (seed 002), if it holds them
        from .formats.agentx_postgres import open_agentx_store

        agentx = None if create else open_agentx_store(
            location.driver_url(password), root=server_folder(location), location=location.text,
            read_only=read_only, vectors=vectors,
        )
        if agentx is None:
            raise
        return agentx


def _open_chroma(location: Location, token: Secret | None, read_only: bool, create_with: Embedder | None) -> Any:
    from .native.chroma.server import ChromaServerSource

    if create_with is not None:
        return ChromaServerSource.create(location.text, create_with, token=token)
    return ChromaServerSource.open(location.text, token=token, read_only=read_only)


def _chroma_store(location: Location, vectors: Any, *, read_only: bool) -> StoreParts:
    """A Chroma server alone: its collections, with a journal in Mnemoscope's folder for it."""
    from .native.workspace import NativeWorkspace

    root = server_folder(location)
    return StoreParts(
        root, [NativeWorkspace(root, None, vectors, None)], Journal.sidecar(root, read_only=read_only),
        read_only=read_only, location=location.text,
    )
