"""Storage errors, split the way a user needs them.

``StoreError`` and its subclasses are the environment's or the input's fault
(a locked database, a corrupt file, a foreign format, a conflicting writer):
they carry one readable sentence for the user. Anything else raised from
``storage`` is our bug.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base for every error a user should see as one clear message."""

    exit_code = 1


class UnreadableStoreError(StoreError):
    """The path holds nothing we can read: garbage, truncated, foreign, unknown."""

    exit_code = 2


class WrapsStoresError(UnreadableStoreError):
    """The folder is no store itself but holds some (a home folder, a crew's data folder):
    inside lists them, to offer instead."""

    def __init__(self, message: str, folder: str, inside: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.folder = folder
        self.inside = inside  # (path, tool)


class UnmappedTableError(UnreadableStoreError):
    """A SQLite file no format recognises and no remembered mapping opens: path is the file,
    to offer the mapping of one of its tables instead (mnemoscope map)."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class SecretRefusedError(UnreadableStoreError):
    """A server asked for a password (or token) and none was given, or it refused the one given."""


class StoreFileError(StoreError):
    """A store's file cannot be used as it is now: not readable or writable here (permissions,
    a read-only file system, something else in its place), or refused by its database engine."""

    exit_code = 2


class LockedError(StoreFileError):
    """Another program held the database locked for longer than the busy timeout."""


class UnfinishedStepError(StoreFileError):
    """A read-only open found a step a killed process left half-applied; a writable open undoes it."""


class NotFoundError(StoreError):
    """No memory (or session, entity...) with that id."""


class ConflictError(StoreError):
    """The target changed since it was read: refuse rather than overwrite."""


class ReadOnlyError(StoreError):
    """The store or the field cannot be written safely."""


class UnsupportedError(StoreError):
    """The store kind cannot do this operation at all."""


class NothingToDoError(StoreError):
    """Undo with an empty journal, redo with nothing undone, and the like."""


class BelowThresholdError(UnsupportedError):
    """A promotion asked for memories that do not meet the store's promotion thresholds;
    unmet names, per memory id, each threshold missed as "name value < threshold"."""

    def __init__(self, message: str, unmet: dict[str, list[str]]) -> None:
        super().__init__(message)
        self.unmet = unmet
