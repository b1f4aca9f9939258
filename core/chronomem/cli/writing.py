"""The commands that write: remember, end, retract, correct, and the irreversible
erase and purge (which ask first; ``--yes`` for scripts)."""

from __future__ import annotations

import json
from typing import Any

import click

from ..errors import InvalidInput
from ..model import Receipt
from .instant import INSTANT
from .output import parse_instant, shown


def _receipt(s: Any, r: Receipt, verb: str) -> None:
    lines = [f"{verb}: fact {shown(fid)}" for fid in r.fact_ids] or [f"{verb}: nothing changed"]
    if r.ended:
        lines.append(f"  ended {len(r.ended)} version(s)")
    if r.retracted:
        lines.append(f"  retracted {len(r.retracted)} version(s)")
    if r.superseded_count:
        lines.append(f"  replaced {r.superseded_count} earlier version(s)")
    if r.recorded_at is not None:
        lines.append(f"  recorded at {r.recorded_at.isoformat()}")
    s.out.emit(r, lines)


def _confirm(yes: bool, question: str) -> None:
    if not yes:
        click.confirm(question, abort=True, err=True)


def register(cli: Any) -> None:
    @cli.command()
    @click.argument("subject")
    @click.argument("predicate")
    @click.argument("value")
    @click.option("--valid-from", type=INSTANT, help="when it became true (ISO 8601; default now)")
    @click.option(
        "--valid-to", type=INSTANT, help="when it stops being true (default: the next change)"
    )
    @click.option("--source", "sources", multiple=True, help="id of an episode it came from")
    @click.option("--extractor", help="who read it (a model, a rule set, a person)")
    @click.option("--metadata", help="a JSON object kept with the fact")
    @click.pass_obj
    def remember(s: Any, subject: str, predicate: str, value: str, valid_from: str | None,
                 valid_to: str | None, sources: tuple[str, ...], extractor: str | None,
                 metadata: str | None) -> None:  # fmt: skip
        """Assert SUBJECT PREDICATE VALUE (creates the database if needed)."""
        meta = None
        if metadata is not None:
            try:
                meta = json.loads(metadata)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"--metadata is not JSON: {exc.msg}") from None
        r = s.memory(create=True).remember(
            subject, predicate, value, valid_from=parse_instant(valid_from),
            valid_to=parse_instant(valid_to), source=list(sources) or None,
            extractor=extractor, metadata=meta,
        )  # fmt: skip
        _receipt(s, r, "remembered" if r.added else "unchanged")

    @cli.command()
    @click.argument("subject")
    @click.argument("predicate")
    @click.argument("value", required=False)
    @click.option("--at", type=INSTANT, help="when it stopped being true (ISO 8601; default now)")
    @click.pass_obj
    def end(s: Any, subject: str, predicate: str, value: str | None, at: str | None) -> None:
        """The world changed with no successor: the value stops holding at --at."""
        r = s.memory().end(subject, predicate, value, at=parse_instant(at))
        _receipt(s, r, "ended")

    @cli.command()
    @click.argument("fact_id")
    @click.pass_obj
    def retract(s: Any, fact_id: str) -> None:
        """The record was wrong: close the fact as retracted (history keeps it)."""
        _receipt(s, s.memory().retract(fact_id), "retracted")

    @cli.command()
    @click.argument("fact_id")
    @click.argument("value")
    @click.pass_obj
    def correct(s: Any, fact_id: str, value: str) -> None:
        """Retract FACT_ID and assert VALUE over the same valid time, in one write."""
        _receipt(s, s.memory().correct(fact_id, value), "corrected")

    @cli.command()
    @click.argument("fact_id", required=False)
    @click.option("--subject", help="erase every fact about this subject instead")
    @click.option("--yes", is_flag=True, help="do not ask (scripts)")
    @click.pass_obj
    def erase(s: Any, fact_id: str | None, subject: str | None, yes: bool) -> None:
        """Physically delete a fact (or every fact about --subject). Irreversible."""
        if (fact_id is None) == (subject is None):
            raise click.UsageError("give a FACT_ID or --subject, not both")
        mem = s.memory()
        what = f"fact {fact_id}" if fact_id else f"every fact about {subject}"
        _confirm(yes, f"Erase {shown(what)} for good (no history is kept)?")
        counts = mem.erase(fact_id) if fact_id else mem.erase_subject(subject)
        s.out.emit(counts, [f"erased {shown(what)}: " + ", ".join(
            f"{n} {k}" for k, n in counts.items())])  # fmt: skip

    @cli.command()
    @click.option("--yes", is_flag=True, help="do not ask (scripts)")
    @click.pass_obj
    def purge(s: Any, yes: bool) -> None:
        """Physically delete everything in this scope and the scopes under it."""
        mem = s.memory()
        st = mem.stats()
        where = ", ".join(f"{k}={v}" for k, v in mem.scope.columns().items() if v) or "the store"
        _confirm(yes, f"Purge {shown(where)}: {st.versions} versions and {st.episodes} "
                      "episodes, for good?")  # fmt: skip
        counts = mem.purge()
        s.out.emit(counts, ["purged: " + ", ".join(f"{n} {k}" for k, n in counts.items())])
