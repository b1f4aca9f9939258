"""Where ``ChronomemMemory()`` keeps a crew's memory when given no store.

CrewAI's own ``Memory`` persists by default: its LanceDB store lives in
``$CREWAI_STORAGE_DIR/memory`` when that variable is set, otherwise in
``crewai_core.paths.db_storage_path()/memory`` (the platform's data folder
for the project). A chronomem memory given no store persists beside it, in
the same storage folder, so a crew's memory outlives the process exactly
as CrewAI's would; an in-memory store is chosen explicitly
(``ChronomemMemory(memory=chronomem.Memory())``)."""

from __future__ import annotations

import os
from pathlib import Path

FILE_NAME = "chronomem.db"


def storage_dir() -> Path:
    """CrewAI's storage folder, resolved as CrewAI resolves it for its memory."""
    env = os.environ.get("CREWAI_STORAGE_DIR")
    if env:
        return Path(env)
    try:
        from crewai_core.paths import db_storage_path
    except ImportError:  # CrewAI releases before crewai-core was split out
        from crewai.utilities.paths import db_storage_path
    return Path(db_storage_path())


def default_path() -> Path:
    """The SQLite file of a ``ChronomemMemory()`` made without a store (folder created)."""
    folder = storage_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder / FILE_NAME


def path_for_storage(storage: object) -> str | None:
    """The store a CrewAI ``storage=`` string names, as CrewAI's ``Memory`` reads it:
    a folder path keeps the memory in that folder (``chronomem.db`` where LanceDB
    would put its tables), ``"chronomem:<url>"`` is that store; ``"lancedb"``,
    ``"qdrant-edge"`` and anything not a string name no place (``None``: the default)."""
    if not isinstance(storage, str) or storage in ("", "lancedb", "qdrant-edge"):
        return None
    if storage.startswith("chronomem:"):
        return storage.removeprefix("chronomem:")
    folder = Path(storage)
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / FILE_NAME)
