"""Where a store lives: a file or folder, or a server named by a URL.

    parse_location("~/agents/demo")                                   # a path, as always
    parse_location("sqlite:////srv/agents/memory.db")                 # SQLAlchemy's spelling of a path
    parse_location("postgresql+psycopg://bob@db.example/agents")      # the native store on PostgreSQL
    parse_location("http://127.0.0.1:8000/?collection=memories")      # a Chroma server
    parse_location("redis://:secret@cache.example:6379/0")            # AgentX's working memory in Redis

A location's ``text`` never holds a secret: it is what a person is shown, what the recent list
keeps and what a credential is named from. A password written into the URL is split off into
``secret``, to be handed to the driver and nowhere else.

A server has no folder of its own for what Mnemoscope keeps about it (a journal for a store
with no database of its own, a table mapping): ``server_folder`` gives one in Mnemoscope's data
folder, named by a hash of the location's text.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ..credentials import Secret, split_secret
from ..data_folder import data_folder

POSTGRESQL, CHROMA_SERVER, REDIS, PATH = "postgresql", "chroma-server", "redis", "path"
POSTGRESQL_SCHEMES = {"postgresql", "postgres", "postgresql+psycopg"}
CHROMA_SCHEMES = {"http", "https"}
REDIS_SCHEMES = {"redis", "rediss", "unix"}  # unix:///path/to/redis.sock
NEO4J_SCHEMES = {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}
NEO4J_REFUSAL = (
    "Neo4j cannot be read here: {url} names a Neo4j server (AgentX keeps its graph there: entities, facts, "
    "turns, goals, strategies), and Mnemoscope has no Neo4j reader. Open AgentX's PostgreSQL database "
    "(postgresql+psycopg://USER@HOST/DATABASE) for its memories and audit log, and its Redis "
    "(redis://HOST:6379/0) for its working memory."
)


class LocationError(ValueError):
    """Text that names no store Mnemoscope can open (an unknown scheme, a URL with no host)."""


@dataclass(frozen=True)
class Location:
    kind: str  # PATH, POSTGRESQL, CHROMA_SERVER or REDIS
    text: str  # shown, saved and named by: a path, or a URL without its secret
    path: Path | None = None
    secret: Secret | None = None

    @property
    def is_server(self) -> bool:
        return self.kind != PATH

    def driver_url(self, secret: Secret | None = None) -> str:
        """The URL to hand the database driver: SQLAlchemy's psycopg dialect, the password in."""
        from sqlalchemy.engine import make_url

        url = make_url(self.text).set(drivername="postgresql+psycopg")
        given = secret or self.secret
        if given:
            url = url.set(password=given.reveal())
        return url.render_as_string(hide_password=False)


def looks_like_url(text: str | os.PathLike[str]) -> bool:
    return isinstance(text, str) and "://" in text and text.partition("://")[0].replace("+", "").isalnum()


def parse_location(text: str | os.PathLike[str]) -> Location:
    if not looks_like_url(text):
        path = Path(text).expanduser()
        return Location(PATH, str(path), path)
    assert isinstance(text, str)
    scheme = text.partition("://")[0].lower()
    if scheme == "sqlite":  # sqlite:///relative/path, sqlite:////absolute/path
        rest = text.partition("://")[2]
        if not rest.startswith("/") or len(rest) == 1:
            raise LocationError(f"{text} names no file: write sqlite:///relative/path or sqlite:////absolute/path.")
        path = Path(rest[1:].partition("?")[0]).expanduser()
        return Location(PATH, str(path), path)
    clean, secret = split_secret(text)
    if scheme in NEO4J_SCHEMES:
        raise LocationError(NEO4J_REFUSAL.format(url=clean))
    if scheme in POSTGRESQL_SCHEMES:
        kind = POSTGRESQL
    elif scheme in CHROMA_SCHEMES:
        kind = CHROMA_SERVER
    elif scheme in REDIS_SCHEMES:
        kind = REDIS
    else:
        raise LocationError(
            f"Mnemoscope does not open {scheme}:// stores: give a path, sqlite:///PATH, "
            "postgresql+psycopg://USER@HOST/DATABASE, http(s)://HOST:PORT (a Chroma server) or "
            "redis://HOST:PORT/DB (AgentX's working memory)."
        )
    if scheme == "unix":
        if not clean.partition("://")[2].partition("?")[0].startswith("/"):
            raise LocationError(f"{clean} names no socket: write unix:///path/to/redis.sock.")
        return Location(kind, clean, None, secret)
    host = clean.partition("://")[2].split("/", 1)[0].rpartition("@")[2]
    if not host:
        raise LocationError(f"{clean} names no server: write its host, as in {scheme}://HOST/...")
    if kind == POSTGRESQL and not clean.partition("://")[2].partition("/")[2].partition("?")[0]:
        raise LocationError(f"{clean} names no database: write it after the host, as in {scheme}://USER@HOST/DATABASE.")
    return Location(kind, clean, None, secret)


def server_folder(location: Location) -> Path:
    """Mnemoscope's own folder for what it keeps about a server store (made when first written)."""
    return data_folder() / "servers" / hashlib.sha256(location.text.encode()).hexdigest()[:16]
