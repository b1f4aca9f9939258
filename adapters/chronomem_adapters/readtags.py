"""The served-read log's caller tag, as each framework adapter fills it (issue #16).

``Memory(read_log=True)`` logs every ``facts``/``search``/``recall`` with the
caller tag in effect (``chronomem.readlog``). An adapter knows who is reading
(a LangChain run, a LlamaIndex session, a CrewAI task), so it tags the reads it
makes on the framework's behalf with :func:`tagged`; ``read_log=True`` on an
adapter turns the store's log on (:func:`switch_on`).

Precedence: an enclosing ``memory.read_tag(...)`` wins. The adapter fills only
the keys the caller left unset, so an application that tags a whole agent
turn (``with memory.read_tag(run="incident-42"): agent.invoke(...)``) keeps its
own ``run`` on every read the adapters make inside it. Empty values are left
out. With the log off the tag is never computed (one attribute check)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from chronomem import InvalidType, Memory
from chronomem.readlog import current_tag

Tag = Mapping[str, object | None]


def switch_on(memory: Memory, read_log: object) -> None:
    """``read_log=True``: log the store's reads (every view of it shares the switch);
    ``False`` leaves the ``Memory`` as it was opened (``Memory(read_log=True)`` is honoured)."""
    if not isinstance(read_log, bool):
        raise InvalidType(f"read_log must be a bool, not {type(read_log).__name__}")
    if read_log:
        memory.read_log = True


def fill(tag: Tag) -> dict[str, str]:
    """The keys of ``tag`` to add to the tag in effect: set, non-empty, not already set."""
    have = current_tag()
    out: dict[str, str] = {}
    for key, value in tag.items():
        if value is None or key in have:
            continue
        text = str(value)
        if text:
            out[key] = text
    return out


@contextmanager
def tagged(memory: Memory, make: Callable[[], Tag]) -> Iterator[None]:
    """Tag the reads made inside the block with ``make()`` (see the module docstring)."""
    if not memory.read_log:
        yield
        return
    extra = fill(make())
    if not extra:
        yield
        return
    with memory.read_tag(**extra):
        yield
