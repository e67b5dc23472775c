"""A real OS keyring for tests: GNOME Keyring's Secret Service on a private D-Bus session bus.

``keyring_daemon`` (module scope) starts ``dbus-daemon --session`` and ``gnome-keyring-daemon
--components=secrets``, its login keyring created and unlocked with a known password, in a temp
HOME/XDG of its own; it skips the test, saying why, only when the daemons cannot start (not
installed: apt-get install gnome-keyring dbus). ``secret_service`` (per test) points this
process's keyring at it, with MNEMOSCOPE_HOME in tmp_path; ``no_keyring`` selects keyring's
``fail`` backend, what a headless machine without an OS keyring has.

Test modules import the fixtures by name: ``from helpers.keyring_daemon import keyring_daemon``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

UNLOCK_PASSWORD = "mnemoscope-test-unlock"
START_TIMEOUT_S = 20.0
FAIL_BACKEND = "keyring.backends.fail.Keyring"
# What a process needs to reach the daemon (and nothing of the calling process's keyring setup).
KEYRING_ENV = ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND")


def isolated_env(tmp_path: Path, daemon: KeyringDaemon | None) -> dict[str, str]:
    """A process environment whose every writable place is under tmp_path (HOME, the XDG dirs,
    MNEMOSCOPE_HOME), using the daemon's keyring, or keyring's fail backend when daemon is None."""
    home = tmp_path / "home"
    env = {
        "PATH": os.environ["PATH"], "LANG": "C.UTF-8", "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state"),
        "MNEMOSCOPE_HOME": str(tmp_path / "mnemoscope-home"), "MNEMOSCOPE_DEBUG": "1",
    }
    env.update(daemon.env() if daemon else {"PYTHON_KEYRING_BACKEND": FAIL_BACKEND})
    return env


def run_mnemoscope(env: dict[str, str], *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The installed mnemoscope command, as its own process."""
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    assert exe is not None, "mnemoscope is not installed in this venv"
    return subprocess.run([exe, *map(str, argv)], input=stdin, capture_output=True, text=True, env=env,
                          timeout=180, stdin=None if stdin is not None else subprocess.DEVNULL)


@dataclass
class KeyringDaemon:
    bus_address: str
    root: Path  # the daemon's own HOME: its encrypted keyring file lives under it

    def env(self) -> dict[str, str]:
        """Environment entries for a process that should use this keyring."""
        return {"DBUS_SESSION_BUS_ADDRESS": self.bus_address}

    def items(self, service: str = "mnemoscope") -> dict[str, str]:
        """What the keyring holds for service, read with secretstorage: {name: secret}."""
        import secretstorage
        from jeepney.io.blocking import open_dbus_connection

        with open_dbus_connection(bus=self.bus_address) as connection:
            collection = secretstorage.get_default_collection(connection)
            return {item.get_attributes()["username"]: item.get_secret().decode("utf-8")
                    for item in collection.search_items({"service": service})}

    def clear(self, service: str = "mnemoscope") -> None:
        import secretstorage
        from jeepney.io.blocking import open_dbus_connection

        with open_dbus_connection(bus=self.bus_address) as connection:
            for item in secretstorage.get_default_collection(connection).search_items({"service": service}):
                item.delete()


# A session bus that starts no service on demand: the standard one would activate a second
# gnome-keyring-daemon (locked, waiting for a person at a prompt) when a client asks for the
# Secret Service before ours has registered, and that one would outlive the test.
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


class DaemonUnavailable(Exception):
    pass


def start_daemons(root: Path) -> tuple[KeyringDaemon, list[subprocess.Popen]]:
    for program in ("dbus-daemon", "gnome-keyring-daemon"):
        if shutil.which(program) is None:
            raise DaemonUnavailable(f"{program} is not installed (apt-get install gnome-keyring dbus)")
    home, runtime = root / "home", root / "run"
    home.mkdir(parents=True)
    runtime.mkdir(mode=0o700)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime),
        "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"), "LANG": "C.UTF-8",
    }
    started: list[subprocess.Popen] = []
    try:
        config = root / "bus.conf"
        config.write_text(BUS_CONFIG.format(socket=runtime / "bus"), encoding="utf-8")
        bus = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--nosyslog", "--print-address=1"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        started.append(bus)
        assert bus.stdout is not None
        address = bus.stdout.readline().strip()
        if not address:
            raise DaemonUnavailable(f"dbus-daemon did not start: {bus.communicate(timeout=5)[1].strip()}")
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        secrets = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        started.append(secrets)
        assert secrets.stdin is not None
        secrets.stdin.write(UNLOCK_PASSWORD)
        secrets.stdin.close()
        _wait_for_unlocked_collection(address, secrets)
        return KeyringDaemon(address, root), started
    except BaseException:
        stop_daemons(started)
        raise


def _wait_for_unlocked_collection(address: str, daemon: subprocess.Popen) -> None:
    import secretstorage
    from jeepney.io.blocking import open_dbus_connection

    deadline = time.monotonic() + START_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            why = daemon.stderr.read().strip() if daemon.stderr else ""
            raise DaemonUnavailable(f"gnome-keyring-daemon exited ({daemon.returncode}): {why}")
        try:
            with open_dbus_connection(bus=address) as connection:
                if secretstorage.check_service_availability(connection):
                    if not secretstorage.get_default_collection(connection).is_locked():
                        return
                    last = "the default collection is locked"
        except Exception as exc:  # the service is still registering on the bus
            last = f"{type(exc).__name__}: {exc}"
        time.sleep(0.1)
    raise DaemonUnavailable(f"the Secret Service did not come up within {START_TIMEOUT_S:.0f} s ({last})")


def within(seconds: float, call: Callable[[], T]) -> T:
    """call()'s result, failing the test (instead of hanging the run) if it waits on a prompt
    no one will answer: a locked keyring asks a person to unlock it."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(call())
        except BaseException as exc:  # re-raised in the test's thread
            failed.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"the keyring call did not return within {seconds:.0f} s (waiting for an unlock prompt?)")
    if failed:
        raise failed[0]
    return done[0]


def stop_daemons(started: list[subprocess.Popen]) -> None:
    for process in reversed(started):
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def use_backend_from_environment() -> None:
    """keyring finds the viable backends and picks one once per process: do both again after the
    environment changed, as a new process would."""
    import keyring.backend
    import keyring.core

    vars(keyring.backend.get_all_keyring).pop("saved_result", None)
    keyring.core.init_backend()


@pytest.fixture(scope="module")
def keyring_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyringDaemon]:
    try:
        daemon, started = start_daemons(tmp_path_factory.mktemp("keyring-daemon"))
    except DaemonUnavailable as exc:
        pytest.skip(f"no Secret Service keyring could be started here: {exc}")
    try:
        yield daemon
    finally:
        stop_daemons(started)


@pytest.fixture
def secret_service(
    keyring_daemon: KeyringDaemon, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[KeyringDaemon]:
    """This process's keyring is the daemon's Secret Service, emptied of Mnemoscope's secrets;
    Mnemoscope's data folder is in tmp_path."""
    keyring_daemon.clear()
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", keyring_daemon.bus_address)
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))
    use_backend_from_environment()
    yield keyring_daemon
    monkeypatch.undo()
    use_backend_from_environment()


@pytest.fixture
def no_keyring(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """keyring's fail backend: no OS keyring, as on a headless machine."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", FAIL_BACKEND)
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))
    use_backend_from_environment()
    yield
    monkeypatch.undo()
    use_backend_from_environment()
