"""``chronomem items``: LangGraph items by namespace and key, from the shell.

Registered with the ``chronomem`` command through the ``chronomem.cli`` entry
point (core knows no framework; this package adds the command when installed)::

    chronomem items                      # every namespace holding items
    chronomem items users.ada            # the items under ("users", "ada")
    chronomem items users.ada profile    # one item's value, as JSON
    chronomem items users.ada profile --history

A namespace is written with dots between its labels (LangGraph labels never
contain a dot). Reads go through ``ChronomemStore``, so what is printed is
exactly what ``store.get``/``store.search`` return (``--as-of`` reads the past)."""

from __future__ import annotations

import json
from typing import Any

import click

from chronomem.cli import shown
from chronomem.cli.instant import INSTANT


def _namespace(text: str) -> tuple[str, ...]:
    return tuple(label for label in text.split(".") if label) if text else ()


@click.command()
@click.argument("namespace", required=False, default="")
@click.argument("key", required=False)
@click.option("--as-of", type=INSTANT, help="read as of this instant (both clocks)")
@click.option("--history", "show_history", is_flag=True, help="every value each field had")
@click.option("--limit", type=int, default=100, show_default=True)
@click.pass_obj
def items(s: Any, namespace: str, key: str | None, as_of: Any, show_history: bool,
          limit: int) -> None:  # fmt: skip
    """LangGraph items: namespaces, the items under NAMESPACE (users.ada), or one item."""
    from .store import ChronomemStore

    store = ChronomemStore(s.memory())
    view = store.as_of(as_of) if as_of is not None else store
    ns = _namespace(namespace)
    if key is not None and show_history:
        versions = store.history(ns, key)
        rows = [[v.field, json.dumps(v.value, ensure_ascii=False), v.state.value,
                 v.valid_from.isoformat(), v.valid_to.isoformat() if v.valid_to else "…"]
                for v in versions]  # fmt: skip
        lines = [shown("  ".join(r)) for r in rows] or ["(no history)"]
        s.out.emit([dict(zip(("field", "value", "state", "valid_from", "valid_to"), r,
                             strict=True)) for r in rows], lines,
                   columns=("field", "value", "state", "valid from", "valid to"),
                   rows=rows)  # fmt: skip
        return
    if key is not None:
        item = view.get(ns, key)
        if item is None:
            raise click.ClickException(f"no item {key!r} in namespace {namespace!r}")
        payload = {"namespace": list(item.namespace), "key": item.key, "value": item.value,
                   "created_at": item.created_at, "updated_at": item.updated_at}  # fmt: skip
        text = json.dumps(item.value, ensure_ascii=False, indent=2)
        s.out.emit(payload, [shown(line) for line in text.splitlines()])
        return
    if not ns:
        spaces = view.list_namespaces(limit=limit)
        lines = [shown(".".join(n)) for n in spaces] or ["(no items)"]
        s.out.emit([list(n) for n in spaces], lines, columns=("namespace",),
                   rows=[[".".join(n)] for n in spaces])  # fmt: skip
        return
    found = view.search(ns, limit=limit)
    rows = [[".".join(i.namespace), i.key, json.dumps(i.value, ensure_ascii=False),
             i.updated_at.isoformat()] for i in found]  # fmt: skip
    lines = [shown(f"{r[0]}  {r[1]}  {r[2]}") for r in rows] or ["(no items)"]
    s.out.emit([dict(zip(("namespace", "key", "value", "updated_at"), r, strict=True))
                for r in rows], lines, columns=("namespace", "key", "value", "updated"),
               rows=rows)  # fmt: skip
