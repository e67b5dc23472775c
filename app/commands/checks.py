"""Checking a store: check (every copy of every memory agrees), scan (findings: secrets, prompt
injection, hidden text, PII) and redact (a finding's span, in every copy). Like a linter, check
and scan exit 1 when they find something."""

from __future__ import annotations

import argparse
from typing import Any

from mnemoscope.storage import StoreError

from .. import output
from ..arguments import STORE_HELP, store_argument
from ..command_runtime import EXIT_INPUT, UsageError, curator_of, emit, emit_outcome, open_store_of, say
from . import CommandParsers

ORDER = 40


class CheckFailed(StoreError):
    """The check itself could not run (exit 2, not 1: nothing was found inconsistent)."""

    exit_code = EXIT_INPUT


def register(commands: CommandParsers) -> None:
    p = commands.add("check", "compare every copy of every memory (rows, vectors, markdown bullets, the full-text "
                     "index, other tools' indexes); exit 1 when an inconsistency is found", cmd_check)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    fix = p.add_mutually_exclusive_group()
    fix.add_argument("--repair", nargs="+", metavar="KIND",
                     help="repair the findings of these kinds (one undoable step), then check again")
    fix.add_argument("--repair-all", action="store_true",
                     help="repair every kind found that has a safe repair (one undoable step), then check again")

    p = commands.add("scan", "findings: secrets, prompt injection, hidden text and PII in a store's memories, "
                     "grouped by severity; exit 1 when there is a new one at or above --severity (like a linter)",
                     cmd_scan)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--all", action="store_true", help="also list the findings accepted into the store's baseline")
    p.add_argument("--severity", default="low", choices=["high", "medium", "low"],
                   help="list (and fail on) findings at or above this severity (default low)")
    p.add_argument("--rules", action="store_true", help="list the rules and their version instead")
    p.add_argument("--accept", nargs="+", metavar="FINGERPRINT",
                   help="accept these findings into the store's baseline (one undoable step)")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="save HOST (and its subdomains) in the store's link allow-list; repeat for several")

    p = commands.add("redact", "replace a finding's span (or --span START:END) of a memory's content with "
                     "[REDACTED], in every copy (one undoable step)", cmd_redact)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id")
    which_span = p.add_mutually_exclusive_group(required=True)
    which_span.add_argument("--finding", metavar="FINGERPRINT", help="the finding whose span to redact (see scan)")
    which_span.add_argument("--span", metavar="START:END", help="character offsets into the memory's content")


def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0 clean, 1 inconsistent (after a repair: what is left), 2 when the check itself failed."""
    from mnemoscope.storage import NothingToDoError
    from mnemoscope.storage.consistency import check

    from ..progress import Progress

    repairing = bool(args.repair or args.repair_all)
    try:
        with open_store_of(args, read_only=not repairing, unfinished_ok=True) as store:
            report = check(store, progress=Progress("check"))
            data: dict[str, Any] = {"found": report.to_dict(), "repair": None}
            if repairing and not report.clean:
                try:
                    outcome = curator_of(store).repair(report, args.repair or None)
                except NothingToDoError as exc:  # none of those kinds was found: the report stands
                    say(str(exc))
                else:
                    report = check(store)
                    data["repair"] = outcome.to_dict()
            data.update(report.to_dict())
    except StoreError as exc:
        raise CheckFailed(str(exc)) from exc
    emit(args, data, output.consistency)
    return 0 if report.clean else 1


def cmd_scan(args: argparse.Namespace) -> int:
    from mnemoscope.storage import findings

    if args.rules:
        return emit(args, findings.default_rules().to_dict(), output.finding_rules)
    with open_store_of(args, read_only=not (args.accept or args.allow_host)) as store:
        if args.allow_host:
            store.require_writable()
            findings.save_allowed_hosts(store, (*findings.allowed_hosts(store), *args.allow_host))
        if args.accept:
            return emit_outcome(args, curator_of(store).accept_findings(args.accept))
        report = findings.scan_store(store)
        emit(args, report.to_dict(include_accepted=args.all, severity=args.severity), output.findings)
        return 1 if report.shown(severity=args.severity) else 0


def cmd_redact(args: argparse.Namespace) -> int:
    from mnemoscope.storage import findings

    with open_store_of(args) as store:
        if args.finding:
            found = findings.find_findings(store, [args.finding], memory_ids=[args.id])[0]
            start, end = found.start, found.end
        else:
            try:
                start, end = (int(x) for x in args.span.split(":"))
            except ValueError:
                raise UsageError(f"--span takes START:END character offsets, not {args.span!r}.") from None
        return emit_outcome(args, curator_of(store).redact(args.id, start, end, finding=args.finding or ""))
