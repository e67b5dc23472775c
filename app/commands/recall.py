"""recall: what the agent that owns a store would be given for a question, by its own retrieval
rules (mnemoscope.storage.recall), and --explain ID: why one memory ranks where it does."""

from __future__ import annotations

import argparse

from .. import output
from ..arguments import STORE_HELP, store_argument
from ..command_runtime import UsageError, emit, note, open_store_of
from . import CommandParsers

ORDER = 21


def register(commands: CommandParsers) -> None:
    p = commands.add("recall", "what the agent would recall for a question, by its own system's retrieval rules: "
                     "each hit's signals and weights, what was dropped, the near misses", cmd_recall, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("question")
    p.add_argument("--as", dest="as_agent", metavar="AGENT",
                   help="who asks: a SynthOrg agent, a mem0 scope (user:ID, agent:ID, run:ID)")
    p.add_argument("--channel", help="the active channel (AgentX's model: merged with _global)")
    p.add_argument("--session", help="the session asking, where the system scopes by it")
    p.add_argument("--k", type=int, help="how many the agent is given (default: the system's own)")
    p.add_argument("--explain", metavar="ID", help="why ID ranks where it does (or what dropped it)")


def cmd_recall(args: argparse.Namespace) -> int:
    from mnemoscope.storage.errors import UnsupportedError
    from mnemoscope.storage.recall import recall

    if not args.question.strip():
        raise UsageError("Give a QUESTION.")
    if args.k is not None and args.k < 1:
        raise UsageError("--k must be 1 or more.")
    with open_store_of(args) as store:
        try:
            result = recall(store, args.question, as_agent=args.as_agent, channel=args.channel,
                            session=args.session, k=args.k)
        except UnsupportedError as exc:
            raise UsageError(str(exc)) from None
        for notice in result.notices:
            note(args, notice)
        if args.explain:
            memory_id = store.canonical_id(args.explain)
            store.get(memory_id)  # NotFoundError for an id the store does not hold
            return emit(args, {"system": result.system, **result.explain(memory_id)}, output.recall_explained)
        return emit(args, result.to_dict(), output.recall_results)
