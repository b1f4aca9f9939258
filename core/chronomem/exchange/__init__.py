"""Moving memory in and out: a JSON Lines dump that round-trips exactly, plain
facts written by hand, and an importer from mem0's history database.

**The dump** (``export_jsonl`` / ``import_jsonl``) holds a tenant's rows as they
are stored: every version with its fact id, version id, both clocks
(``valid_from``/``valid_to``, ``recorded_at``/``superseded_at``), what closed it
and what superseded it, its extractor, metadata and index text; every episode;
every fact-episode source link; the tenant's predicate registry. One JSON object
per line, the first a header::

    {"type": "chronomem", "format": 1, "tenant": "…", "counts": {…}, …}
    {"type": "predicate", "name": "lives_in", "canonical": "lives_in", …}
    {"type": "episode", "id": "…", "text": "…", "occurred_at": "2026-…", …}
    {"type": "version", "id": "…", "fact_id": "…", "valid_from": "…", …}
    {"type": "source", "fact_id": "…", "episode_id": "…", …}

Instants are ISO 8601 UTC strings to the microsecond (an instant outside years
1-9999, which only a "never ends" validity can hold, is its integer microsecond
count). Importing writes the rows back unchanged — not through the state
machine, which would stamp new transaction times and new ids — so every read at
every past ``known_at`` answers exactly as it did in the exported store. That is
only sound into a tenant that holds nothing yet: ``import_jsonl`` refuses a
non-empty one. Search vectors are not dumped; the importing store's embedder
computes them.

**mem0** (``import_mem0_history``): mem0 keeps every ADD/UPDATE/DELETE of a
memory in a SQLite ``history`` table. Each memory becomes a single-valued slot
(subject: the mem0 memory id, predicate ``mem0_memory``) whose values are
written at the event's own time, on both clocks: an UPDATE ends the old text
where the new one starts, a DELETE ends the memory.

One module per format: ``dump_export`` and ``dump_import`` (the dump),
``facts`` (hand-written facts), ``mem0`` (mem0's history database); ``common``
holds the instants and progress bars they share, ``history`` the one-transaction
writer every importer of history uses (``write_history``)."""

from .dump_export import export_jsonl, export_records
from .dump_import import import_jsonl, import_records, is_dump, read_jsonl
from .facts import import_facts
from .history import write_history
from .mem0 import MEM0_PREDICATE, import_mem0_history, mem0_events

__all__ = [
    "MEM0_PREDICATE",
    "export_jsonl",
    "export_records",
    "import_facts",
    "import_jsonl",
    "import_mem0_history",
    "import_records",
    "is_dump",
    "mem0_events",
    "read_jsonl",
    "write_history",
]
