"""The commands that read: facts, history, why, stats, search, recall, episodes,
timeline, doctor. None of them creates a database."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import click

from ..model import Fact
from ..reserved import for_people, is_internal
from .instant import INSTANT
from .output import FACT_COLUMNS, fact_cells, fact_row, parse_instant, shown

STATES = ["live", "ended", "scheduled", "retracted"]


def with_time(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--valid-at``, ``--known-at``, ``--as-of`` on a command."""
    for opt in reversed(
        [
            click.option("--valid-at", type=INSTANT, help="valid instant (ISO 8601; default now)"),
            click.option(
                "--known-at", type=INSTANT, help="belief instant (ISO 8601; default: latest)"
            ),
            click.option("--as-of", type=INSTANT, help="both clocks at once"),
        ]
    ):
        f = opt(f)
    return f


def times(valid_at: str | None, known_at: str | None, as_of: str | None) -> dict[str, Any]:
    return {
        "valid_at": parse_instant(valid_at),
        "known_at": parse_instant(known_at),
        "as_of": parse_instant(as_of),
    }


def visible(found: list[Fact], show_all: bool) -> list[Fact]:
    """Facts for people: adapters' internal rows (``chronomem.reserved``) left out."""
    return found if show_all else [f for f in found if not is_internal(f.predicate)]


def hint_other_scopes(s: Any) -> None:
    """On stderr, when this scope sees nothing but others hold data: which, and how
    to select one (an adapter writes under a user, a session, a tenant)."""
    mem = s.memory()
    st = mem.stats()
    if st.facts or st.episodes:
        return
    others = [c for c in mem.scopes() if c.scope != mem.scope and (c.facts or c.episodes)]
    if not others:
        return
    best = max(others, key=lambda c: (c.facts, c.episodes))
    click.echo(
        f"note: this scope ({shown(mem.scope.as_dict())}) is empty, but {len(others)} other "
        f"scope(s) hold data: `chronomem scopes` lists them; select one with its options, "
        f"e.g. `chronomem {shown(best.options())} facts`",
        err=True,
    )


def _explain(explain: dict[str, Any]) -> str:
    legs = explain.get("legs") or {}
    parts = []
    for leg, info in sorted(legs.items()):
        rank = info.get("rank") if isinstance(info, dict) else info
        parts.append(leg if rank is None else f"{leg}#{rank}")  # a lift or boost has no rank
    return " ".join(parts) or "-"


def register(cli: Any) -> None:
    @cli.command()
    @click.option("--subject", help="as stored or as printed (lg:users.ada..profile)")
    @click.option("--predicate")
    @click.option("--state", "states", multiple=True, type=click.Choice(STATES))
    @click.option("--all", "show_all", is_flag=True, help="also adapters' internal rows (@…)")
    @with_time
    @click.pass_obj
    def facts(s: Any, subject: str | None, predicate: str | None, states: tuple[str, ...],
              show_all: bool, valid_at: str | None, known_at: str | None,
              as_of: str | None) -> None:  # fmt: skip
        """Facts at a valid instant as believed at a belief instant."""
        args = dict(subject=subject, predicate=predicate, states=states or None,
                    **times(valid_at, known_at, as_of))  # fmt: skip
        found = s.memory().facts(**args)
        if not found and subject is not None:  # a subject an adapter wrote exactly
            found = s.memory().facts(exact=True, **args)
        found = visible(found, show_all)
        s.out.emit(found, [fact_row(f) for f in found] or ["(no facts)"],
                   columns=FACT_COLUMNS, rows=[fact_cells(f) for f in found])  # fmt: skip
        if not found:
            hint_other_scopes(s)

    @cli.command()
    @click.argument("subject")
    @click.argument("predicate", required=False)
    @click.option("--known-at", type=INSTANT, help="belief instant (ISO 8601; default: latest)")
    @click.option("--include-retracted", is_flag=True, help="also the values retracted as wrong")
    @click.pass_obj
    def history(s: Any, subject: str, predicate: str | None, known_at: str | None,
                include_retracted: bool) -> None:  # fmt: skip
        """Every value a subject's predicate had, in valid-time order."""
        args = dict(known_at=parse_instant(known_at), include_retracted=include_retracted)
        found = s.memory().history(subject, predicate, **args)
        if not found:  # a subject an adapter wrote exactly (as `facts` prints it)
            states = STATES if include_retracted else STATES[:-1]
            found = sorted(
                s.memory().facts(subject=subject, predicate=predicate, states=states,
                                 known_at=args["known_at"], exact=True),
                key=lambda f: (f.predicate, f.valid_from, f.recorded_at, f.version_id),
            )  # fmt: skip
        found = visible(found, False)
        s.out.emit(found, [fact_row(f) for f in found] or ["(no history)"],
                   columns=FACT_COLUMNS, rows=[fact_cells(f) for f in found])  # fmt: skip

    @cli.command()
    @click.argument("fact_id")
    @click.pass_obj
    def why(s: Any, fact_id: str) -> None:
        """Where a fact came from: versions, source episodes, extractors, what it replaced."""
        p = s.memory().why(fact_id)
        lines = ["versions:", *(f"  {fact_row(f)}" for f in p.versions)]
        lines += [
            "episodes:",
            *(
                f"  [{e.occurred_at.isoformat()}] {shown(e.role or '-')}: {shown(e.text)}"
                for e in p.episodes
            ),
        ]
        lines += [f"extractors: {', '.join(shown(x) for x in p.extractors) or '-'}"]
        lines += ["superseded:", *(f"  {fact_row(f)}" for f in p.superseded)]
        s.out.emit(p, lines)

    @cli.command()
    @click.pass_obj
    def stats(s: Any) -> None:
        """Counts of facts, versions and episodes in this scope."""
        st = s.memory().stats()
        s.out.emit(st, [f"{k}: {shown(v)}" for k, v in dataclasses.asdict(st).items()])
        if not (st.facts or st.episodes):
            hint_other_scopes(s)

    @cli.command()
    @click.pass_obj
    def scopes(s: Any) -> None:
        """Every scope in the database with its own counts, and the options selecting it."""
        found = s.memory().scopes()
        rows = [
            [c.options() or "(no options: the default scope)", str(c.facts), str(c.live_facts),
             str(c.episodes)]
            for c in found
        ]  # fmt: skip
        lines = [f"{shown(r[0])}  facts {r[1]} (live {r[2]}), episodes {r[3]}" for r in rows] or [
            "(no scopes: the database is empty)"
        ]
        payload = [{"scope": c.scope.as_dict(), "options": c.options(), "facts": c.facts,
                    "live_facts": c.live_facts, "episodes": c.episodes} for c in found]  # fmt: skip
        s.out.emit(payload, lines, columns=("select with", "facts", "live", "episodes"),
                   rows=rows)  # fmt: skip

    @cli.command()
    @click.argument("query")
    @click.option("-k", "k", default=10, show_default=True, help="how many hits")
    @click.option("--state", "states", multiple=True, type=click.Choice(STATES))
    @click.option("--episodes", "include_episodes", is_flag=True, help="search episodes too")
    @click.option("--subject", help="only facts about this subject")
    @click.option("--explain", is_flag=True, help="show each hit's rank in every search leg")
    @with_time
    @click.pass_obj
    def search(s: Any, query: str, k: int, states: tuple[str, ...], include_episodes: bool,
               subject: str | None, explain: bool, valid_at: str | None, known_at: str | None,
               as_of: str | None) -> None:  # fmt: skip
        """Hybrid search (text, vectors, entity graph), fused by rank."""
        found = s.memory().search(query, k=k, states=states or None, subject=subject,
                                  include_episodes=include_episodes,
                                  **times(valid_at, known_at, as_of))  # fmt: skip
        hits = for_people(
            found,
            lambda subj: s.memory().facts(subject=subj, exact=True,
                                          **times(valid_at, known_at, as_of)),
        )  # fmt: skip
        payload = {
            "hits": [
                {"score": h.score, "fact": h.fact, "episode": h.episode,
                 **({"explain": h.explain} if explain else {})}
                for h in hits
            ],
            "failed_legs": found.failed_legs,
        }  # fmt: skip
        lines, rows = [], []
        for i, h in enumerate(hits, 1):
            what = (
                fact_row(h.fact)
                if h.fact is not None
                else f"episode {shown(h.episode.id if h.episode else '')}: {shown(h.text)}"
            )
            extra = f"  legs: {_explain(h.explain)}" if explain else ""
            lines.append(f"{i:>2}. {h.score:.4f}  {what}{extra}")
            if h.fact is not None:
                cells = [f"{h.score:.4f}", *fact_cells(h.fact)]
            else:
                cells = [f"{h.score:.4f}", h.episode.id if h.episode else "", "(episode)", "",
                         h.text, "", "", ""]  # fmt: skip
            rows.append(cells + ([_explain(h.explain)] if explain else []))
        for leg, why in found.failed_legs.items():
            lines.append(f"warning: search leg {shown(leg)} failed: {shown(why)}")
        cols = ("score", *FACT_COLUMNS, *(("legs (rank)",) if explain else ()))
        s.out.emit(payload, lines or ["(no hits)"], columns=cols, rows=rows,
                   title=f"search: {query}")  # fmt: skip
        if not hits:
            hint_other_scopes(s)

    @cli.command()
    @click.argument("query")
    @click.option("-k", "k", default=8, show_default=True)
    @click.option("--history", "include_history", is_flag=True, help="add the ended values")
    @click.option("--episodes", "include_episodes", is_flag=True)
    @with_time
    @click.pass_obj
    def recall(s: Any, query: str, k: int, include_history: bool, include_episodes: bool,
               valid_at: str | None, known_at: str | None, as_of: str | None) -> None:  # fmt: skip
        """The prompt-ready block an agent would get for QUERY."""
        block = s.memory().recall(query, k=k, include_history=include_history,
                                  include_episodes=include_episodes,
                                  **times(valid_at, known_at, as_of))  # fmt: skip
        s.out.emit({"query": query, "block": block},
                   [shown(line) for line in block.split("\n")])  # fmt: skip

    @cli.command()
    @click.option("--limit", type=int, help="the latest N")
    @click.option("--since", type=INSTANT, help="occurred at or after (ISO 8601)")
    @click.option("--until", type=INSTANT, help="occurred before (ISO 8601)")
    @click.option("--known-at", type=INSTANT, help="recorded by (ISO 8601)")
    @click.option("--role")
    @click.pass_obj
    def episodes(s: Any, limit: int | None, since: str | None, until: str | None,
                 known_at: str | None, role: str | None) -> None:  # fmt: skip
        """Raw records (messages, documents), in the order they occurred."""
        found = s.memory().episodes(limit=limit, since=parse_instant(since),
                                    until=parse_instant(until), known_at=parse_instant(known_at),
                                    role=role)  # fmt: skip
        lines = [
            f"{shown(e.id)}  [{e.occurred_at.isoformat()}] {shown(e.role or '-')}: {shown(e.text)}"
            for e in found
        ]
        rows = [[e.id, f"{e.occurred_at:%Y-%m-%d %H:%M:%S}", e.role or "-", e.text] for e in found]
        s.out.emit(found, lines or ["(no episodes)"], columns=("id", "occurred", "role", "text"),
                   rows=rows)  # fmt: skip

    @cli.command()
    @click.argument("subject")
    @click.argument("predicate", required=False)
    @click.option("--out", "out_path", help="write the picture here (.png, .svg, .pdf)")
    @click.option("--exact", is_flag=True, help="subject and predicate as stored (no folding)")
    @click.pass_obj
    def timeline(s: Any, subject: str, predicate: str | None, out_path: str | None,
                 exact: bool) -> None:  # fmt: skip
        """Every version of SUBJECT's facts on both clocks: text, or a picture with --out."""
        tl = s.memory().timeline(subject, predicate, exact=exact)
        if out_path:
            if not tl.versions:
                raise click.ClickException(f"no versions of {subject!r} to draw")
            tl.save(out_path)
        lines = [] if s.out.as_json else tl.text(escape=shown).split("\n")
        if out_path:
            lines.append(f"wrote {shown(out_path)} ({len(tl.versions)} versions)")
        s.out.emit({"subject": subject, "predicate": predicate, "versions": tl.rows(),
                    **({"out": out_path} if out_path else {})}, lines)  # fmt: skip

    @cli.command()
    @click.option("--repair", is_flag=True,
                  help="rebuild damaged text indexes and delete orphan links/vectors")  # fmt: skip
    @click.pass_context
    def doctor(ctx: Any, repair: bool) -> None:
        """Check the whole database for damage (text indexes, invariant I1, orphans);
        exit status 1 when a problem remains."""
        s = ctx.obj
        report = s.memory().check(repair=repair)
        s.out.emit({**dataclasses.asdict(report), "ok": report.ok}, report.lines())
        if not report.ok:
            ctx.exit(1)
