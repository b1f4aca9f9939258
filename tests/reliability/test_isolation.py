"""Isolation: nothing of one tenant, user, agent or session is reachable from
another through any core method — including names made of LIKE and glob
wildcards and path characters (``%``, ``_``, ``*``, ``.``, ``/``), the class of
bug behind LangGraph's namespace-prefix CVE — and a scope that names nothing
matches nothing (fails closed)."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from chronomem import ChronomemError, InvalidInput, Memory, NotFound, Scope, State

from ._support import check_invariants, raw

ALL = [s.value for s in State]

# (victim name, attacker name): the attacker's name "matches" the victim's under
# some pattern language (LIKE, glob, path prefix, case folding), never by equality.
PAIRS = [
    ("a%", "ab"),
    ("%", "x"),
    ("a_c", "abc"),
    ("_", "a"),
    ("*", "anything"),
    ("a.b", "a/b"),
    ("a/b", "a"),
    ("..", "."),
    ("alice", "Alice"),
    ("o'brien", "o''brien"),
    ("\\", "\\\\"),
]

LEVELS = ["tenant", "user", "agent", "session"]


def scope_at(level: str, name: str) -> dict[str, str]:
    """A scope whose ``level`` is ``name`` and whose other levels are fixed."""
    base = {"tenant": "iso", "user": "u", "agent": None, "session": None}
    if level == "tenant":
        return {"tenant": name}
    base[level] = name
    return {k: v for k, v in base.items() if v is not None}


@pytest.fixture
def store(durable_url: str) -> Iterator[Memory]:
    with Memory(durable_url) as m:
        yield m


def _plant(m: Memory, marker: str) -> dict[str, Any]:
    """A victim's data: a ONE fact shared in name with the attacker's, a private
    fact, an episode cited by a fact."""
    ep = m.add_episode(f"my secret is {marker}", role="user")
    shared = m.remember("shared", "lives_in", f"victim city {marker}")
    private = m.remember(f"victim {marker}", "likes", f"{marker} tea", source=ep)
    return {
        "ep": ep,
        "shared": shared.fact_ids[0],
        "private": private.fact_ids[0],
        "facts": _everything(m),
    }


def _everything(m: Memory) -> Any:
    return (
        sorted(
            (f.version_id, f.subject, f.object, f.state.value, f.valid_to)
            for f in m.facts(states=ALL)
        ),
        [(e.id, e.text) for e in m.episodes()],
    )


def _leaks(marker: str, *values: Any) -> list[str]:
    return [repr(v)[:200] for v in values if marker in repr(v)]


@pytest.mark.parametrize("level", LEVELS)
def test_no_read_or_write_crosses_a_scope(store: Memory, level: str) -> None:
    for victim_name, attacker_name in PAIRS:
        marker = f"zq{secrets.token_hex(4)}"
        victim = store.scoped(**scope_at(level, victim_name))
        attacker = store.scoped(**scope_at(level, attacker_name))
        planted = _plant(victim, marker)
        vf, pf, ep = planted["shared"], planted["private"], planted["ep"]

        # Reads: nothing of the victim's, by any path, with any filter.
        reads: list[Any] = [
            attacker.facts(states=ALL),
            attacker.facts(subject="shared", states=ALL),
            attacker.facts(subject=f"victim {marker}", states=ALL),
            attacker.facts(subject_prefix="", states=ALL),
            attacker.facts(subject_prefix="v", states=ALL),
            attacker.facts(subject_prefix="%", states=ALL),
            attacker.history("shared", include_retracted=True),
            attacker.get(vf),
            attacker.get(pf),
            attacker.episodes(),
        ]
        assert attacker.stats().facts == 0 and attacker.stats().episodes == 0
        if hasattr(attacker, "search"):
            reads.append(
                attacker.search(f"victim {marker} shared city tea secret", k=50, states=ALL)
            )
            reads.append(attacker.search(marker, include_episodes=True))
        if hasattr(attacker, "recall"):
            reads.append(attacker.recall(marker, include_history=True, include_episodes=True))
        assert not _leaks(marker, *reads), (
            level,
            victim_name,
            attacker_name,
            _leaks(marker, *reads),
        )
        assert attacker.get(vf) == [] and attacker.get(pf) == []
        for method, args in (
            (attacker.why, (pf,)),
            (attacker.get_episode, (ep.id,)),
            (attacker.retract, (pf,)),
            (attacker.correct, (vf, "attacker city")),
            (attacker.erase, (pf,)),
        ):
            with pytest.raises(NotFound):
                method(*args)

        # Writes with the same names never touch the victim's versions.
        attacker.remember("shared", "lives_in", "attacker city")
        attacker.end("shared", "lives_in")
        attacker.remember(f"victim {marker}", "likes", f"{marker} tea")
        attacker.end(f"victim {marker}", "likes")
        attacker.purge()
        assert _everything(victim) == planted["facts"], (level, victim_name, attacker_name)
        assert victim.why(pf).episodes == [ep]
        victim.purge()
    check_invariants(store.url)


@pytest.mark.parametrize("level", ["user", "agent", "session"])
def test_cannot_cite_or_delete_another_scopes_episode(store: Memory, level: str) -> None:
    """An episode id of another user (agent, session) of the same tenant is not in
    this scope: citing it must be NotFound — otherwise erasing the citing fact
    deletes the other user's episode (the orphan sweep of ``erase`` runs
    tenant-wide)."""
    victim = store.scoped(**scope_at(level, "victim"))
    attacker = store.scoped(**scope_at(level, "attacker"))
    ep = victim.add_episode("victim's private diary")
    try:
        r = attacker.remember("x", "likes", "y", source=ep.id)
    except NotFound:
        return
    attacker.erase(r.fact_ids[0])
    survived = [e.id for e in victim.episodes()]
    assert survived == [ep.id], "erasing the attacker's fact deleted the victim's episode"
    pytest.fail("a fact cited an episode outside its scope")


def test_sessions_see_their_user_never_a_sibling(store: Memory) -> None:
    user = store.scoped(tenant="t", user="u")
    s1 = user.scoped(session="s1")
    s2 = user.scoped(session="s2")
    other = store.scoped(tenant="t", user="v", session="s1")
    user.remember("u", "likes", "durable")
    s1.remember("u", "likes", "only-s1")
    s1.add_episode("said in s1")
    assert {f.object for f in s1.facts()} == {"durable", "only-s1"}
    assert {f.object for f in s2.facts()} == {"durable"}
    assert s2.episodes() == []
    assert other.facts() == [] and other.episodes() == []
    # An agent under the user sees the user's memory and its own, not a sibling agent's.
    a1, a2 = user.scoped(agent="a1"), user.scoped(agent="a2")
    a1.remember("u", "likes", "a1-only")
    assert {f.object for f in a2.facts()} == {"durable"}
    # The tenant level sees only tenant-level rows: never every user's (fails closed).
    assert store.scoped(tenant="t").facts(states=ALL) == []
    assert store.scoped(tenant="t").episodes() == []


@pytest.mark.parametrize(
    "kw",
    [
        {"tenant": ""},
        {"user": ""},
        {"agent": " "},
        {"session": "s "},
        {"user": " u"},
        {"user": "u\x00"},
        {"tenant": "\t"},
    ],
)
def test_empty_or_padded_scope_names_are_refused(store: Memory, kw: dict[str, str]) -> None:
    with pytest.raises(InvalidInput):
        store.scoped(**kw)
    with pytest.raises(InvalidInput):
        Scope(**kw)


def test_partial_scope_reads_fail_closed(store: Memory) -> None:
    """A scope that skips a level (a session with no user) names nothing that
    exists: it must not match every user's session of that name."""
    for user in ("alice", "bob"):
        store.scoped(tenant="t", user=user, session="s1").remember(user, "likes", "tea")
        store.scoped(tenant="t", user=user, agent="bot").remember(user, "likes", "coffee")
    assert store.scoped(tenant="t", session="s1").facts(states=ALL) == []
    assert store.scoped(tenant="t", agent="bot").facts(states=ALL) == []


def test_partial_scope_purge_stays_in_its_scope(store: Memory) -> None:
    """The mem0 class of bug: purging a scope that skips a level (a session id with
    no user, an agent with no user) must not delete every user's session or agent
    of that name. Reads of such a scope see nothing; its purge must delete nothing
    of theirs either."""
    alice = store.scoped(tenant="t", user="alice", session="s1")
    bob_agent = store.scoped(tenant="t", user="bob", agent="bot")
    alice.remember("alice", "likes", "tea")
    bob_agent.remember("bob", "likes", "coffee")
    store.scoped(tenant="t", session="s1").purge()
    store.scoped(tenant="t", agent="bot").purge()
    assert [f.object for f in alice.facts()] == ["tea"]
    assert [f.object for f in bob_agent.facts()] == ["coffee"]


def test_scope_key_is_unambiguous(store: Memory) -> None:
    """The slot key joins the levels with \\x1f, so names holding it would let user
    'a\\x1fb' + agent 'c' and user 'a' + agent 'b\\x1fc' share slots. Scope names
    with control characters are refused, so such a pair cannot exist."""
    with pytest.raises(ChronomemError):
        store.scoped(tenant="t", user="a\x1fb", agent="c")
    with pytest.raises(ChronomemError):
        store.scoped(tenant="t", user="a", agent="b\x1fc")
    # the same names without the separator stay apart
    victim = store.scoped(tenant="t", user="ab", agent="c")
    attacker = store.scoped(tenant="t", user="a", agent="bc")
    victim.remember("ann", "lives_in", "oslo")
    attacker.remember("ann", "lives_in", "mallory")
    assert [(f.object, f.valid_to) for f in victim.facts(subject="ann")] == [("oslo", None)]


def test_subject_prefix_is_not_a_pattern(store: Memory) -> None:
    """Adapters map namespaces to subject prefixes: a prefix is compared character
    for character, so '%' and '_' and '*' are never wildcards."""
    m = store.scoped(tenant="prefix")
    subjects = ["ns%x", "nsAx", "ns_x", "nsbx", "ns*x", "ns.x", "ns/x", "n"]
    m.apply([m.assertion(s, "likes", "tea", exact=True) for s in subjects])
    for prefix, want in [
        ("ns%", {"ns%x"}),
        ("ns_", {"ns_x"}),
        ("ns*", {"ns*x"}),
        ("ns.", {"ns.x"}),
        ("ns/", {"ns/x"}),
        ("%", set()),
        ("_", set()),
        ("ns", set(subjects) - {"n"}),
    ]:
        got = {f.subject for f in m.facts(subject_prefix=prefix, exact=True)}
        assert got == want, prefix
        if hasattr(m, "search"):
            hits = m.search("tea", k=50, subject_prefix=prefix, exact=True)
            assert {h.fact.subject for h in hits if h.fact is not None} <= want, prefix


def test_no_table_row_without_a_tenant(durable_url: str) -> None:
    """Every table carries the tenant; every row of every scope-bearing table has one."""
    with Memory(durable_url) as m:
        m.scoped(tenant="t1", user="u").remember("a", "likes", "b")
        m.scoped(tenant="t1", user="u").add_episode("x")
    with raw(durable_url) as conn:
        for table in ("cm_versions", "cm_episodes", "cm_sources", "cm_vectors", "cm_txclock"):
            n = conn.exec_driver_sql(
                f"SELECT count(*) FROM {table} WHERE tenant IS NULL OR tenant = ''"
            ).scalar()
            assert n == 0, table


def test_narrower_scope_cannot_rewrite_shared_memory(store: Memory) -> None:
    """A user sees the tenant's shared facts, and a session its user's durable ones
    (read-through). Writing through that visibility is another matter: if any user
    can correct, retract or erase a tenant-wide fact by its id (or by subject), one
    user rewrites what every other user reads."""
    shared = store.scoped(tenant="t")
    alice = store.scoped(tenant="t", user="alice")
    bob = store.scoped(tenant="t", user="bob")
    fid = shared.remember("acme", "hq_in", "paris").fact_ids[0]
    for attempt in (
        lambda: bob.correct(fid, "mallory-town"),
        lambda: bob.retract(fid),
        lambda: bob.erase(fid),
        lambda: bob.erase_subject("acme"),
    ):
        with contextlib.suppress(ChronomemError):
            attempt()
        assert [f.object for f in alice.facts(subject="acme")] == ["paris"]
