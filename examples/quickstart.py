"""chronomem in one screen: two clocks, supersession, correction, replay.

Runs offline on the embedded SQLite default: ``python examples/quickstart.py``.
The clock is injected so the output is the same on every run (the test suite
checks it)."""

from __future__ import annotations

from datetime import datetime, timezone

from chronomem import Memory


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=timezone.utc)


class Clock:
    """The store's transaction clock, moved by hand for a reproducible demo."""

    def __init__(self) -> None:
        self.now = day(2026, 1, 10)

    def __call__(self) -> datetime:
        return self.now


def main() -> None:
    clock = Clock()
    memory = Memory(clock=clock)  # in-memory SQLite; Memory("memory.db") for a file

    # January: Alice tells us she lives in Paris and works at Acme.
    memory.remember("Alice", "lives_in", "Paris", valid_from=day(2025, 9, 1))
    # Each write's receipt says when the store believed it (transaction time).
    believed_in_january = memory.remember("Alice", "works_at", "Acme Corp.").recorded_at

    # June: she moved to Berlin (the world changed: Paris ends, history keeps it).
    clock.now = day(2026, 6, 20)
    moved = memory.remember("alice", "resides_in", "Berlin", valid_from=day(2026, 6, 1))
    print(f"move: added {len(moved.added)}, superseded {moved.superseded_count}")

    # Same fact again (a retry, another path): nothing written.
    again = memory.remember("ALICE", "lives_in", "berlin")
    print(f"retry: unchanged={len(again.unchanged)} added={len(again.added)}")

    # July: we misheard the employer. A correction retracts, it does not "end".
    clock.now = day(2026, 7, 2)
    acme = memory.facts(subject="alice", predicate="works_at")[0]
    memory.correct(acme.id, "Apex Corp")

    print("\nnow:")
    for f in memory.facts(subject="alice"):
        print(f"  {f}")
    print("\nhistory of lives_in:")
    for f in memory.history("alice", "lives_in"):
        print(f"  {f}")
    print("\nwhat we believed in January (exact replay):")
    for f in memory.facts(subject="alice", as_of=believed_in_january):
        print(f"  {f}")
    print("\nretracted (the audit view):")
    for f in memory.facts(subject="alice", states=["retracted"]):
        print(f"  {f}")

    print("\nsearch 'where does alice live':")
    for hit in memory.search("where does alice live", k=2):
        print(f"  {hit.score:.4f}  {hit.text}")
    print()
    print(memory.recall("where does alice live", include_history=True))
    memory.close()


if __name__ == "__main__":
    main()
