"""retention: what each store's owner will expire, archive or clean up, and when, by its own rule
(SynthOrg's retention and expiry, LangGraph TTLs, mem0 expiration dates, ...). It only previews:
not a byte of the store changes."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone
from typing import Any

from mnemoscope.storage.retention import due_text, duration_text, parse_duration, summary_lines
from mnemoscope.storage.timeutil import parse_time, utcnow

from .. import output
from ..arguments import STORE_HELP, store_argument
from ..command_runtime import emit, open_store_of
from . import CommandParsers

ORDER = 25
DEFAULT_WITHIN = "30d"


def duration_argument(text: str) -> timedelta:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(commands: CommandParsers) -> None:
    p = commands.add("retention", "what each store's owner will expire, archive or clean up within --within, and "
                     "when, by its own rule (overdue first)", cmd_retention, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--within", type=duration_argument, default=parse_duration(DEFAULT_WITHIN), metavar="DURATION",
                   help=f"how far ahead to look: 12h, 7d, 30d, 2w (default {DEFAULT_WITHIN})")


def cmd_retention(args: argparse.Namespace) -> int:
    now = datetime.now(timezone.utc)
    with open_store_of(args) as store:
        upcoming = store.retention(args.within, now)
        kept = store.retention_kept()
    data = {
        "path": store.location,
        "now": now.isoformat(),
        "within": duration_text(args.within),
        "until": (now + args.within).isoformat(),
        "upcoming": [u.to_dict() for u in upcoming],
        "owners": [{"format": label, "keeps_rule": keeps} for label, keeps in kept.items()],
        "summary": summary_lines(now, upcoming, kept, args.within),
    }
    return emit(args, data, human)


def human(data: dict[str, Any]) -> str:
    now = parse_time(data["now"], utcnow())
    lines = []
    if data["upcoming"]:
        rows = [
            [f"{u['when'][:16].replace('T', ' ')} ({due_text(parse_time(u['when'], now), now)})", u["action"],
             u["id"], u["rule"].split("; ")[0], output._clip(u["preview"], 40)]
            for u in data["upcoming"]
        ]
        lines += [output._table(rows, ["WHEN (UTC)", "ACTION", "ID", "RULE", "PREVIEW"]), ""]
    lines += data["summary"]
    # Each rule's text past its first clause is the same for many rows: said once, under the table.
    notes = dict.fromkeys(f"  {u['owner']}: {rest}" for u in data["upcoming"]
                          for rest in [u["rule"].partition("; ")[2]] if rest)
    return "\n".join(lines + list(notes))
