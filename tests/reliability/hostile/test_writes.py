"""Hostile input to the single-fact writes: ``remember``, ``end``, ``retract``,
``correct``, ``erase`` and ``why`` by id, ``import_fact`` and ``register_predicate``
(fuzzed), and the deterministic cases of their known bugs (stale corrections,
metadata JSON would change, ``aliases`` given as one string, falsy or future
``import_fact`` times)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronomem import (
    ChronomemError,
    Episode,
    InvalidInput,
    InvalidInterval,
    InvalidType,
    Memory,
    NotFound,
    State,
)
from chronomem.identity import fold

from ._inputs import (
    ALL_STATES,
    AVOID,
    FUZZ,
    UTC,
    WRONG,
    Harness,
    aware_datetimes,
    id_texts,
    is_aware,
    is_text,
    is_valid_metadata,
    maybe,
    metadatas,
    name_texts,
    or_wrong,
    refused_or_round_trips,
    texts,
)


@FUZZ
@given(data=st.data())
def test_remember_round_trips_or_refuses(h: Harness, data: st.DataObject) -> None:
    b = h.backend
    s = data.draw(or_wrong(texts(b)), "subject")
    p = data.draw(or_wrong(name_texts(b, 255)), "predicate")
    o = data.draw(or_wrong(texts(b)), "obj")
    vf = data.draw(maybe(or_wrong(aware_datetimes())), "valid_from")
    vt = data.draw(maybe(or_wrong(aware_datetimes())), "valid_to")
    md = data.draw(metadatas(b), "metadata")
    ex = data.draw(maybe(or_wrong(name_texts(b, 255))), "extractor")
    m = h.fresh()
    real = m.add_episode("the source")
    src = data.draw(
        st.one_of(
            st.none(),
            st.just(real),
            st.just([real.id, real]),
            id_texts(b),  # an id that does not exist: NotFound, raised after the inserts
            st.lists(st.one_of(st.just(real.id), id_texts(b)), min_size=1, max_size=3),
        ),
        "source",
    )
    r, err = h.attempt(
        "remember",
        lambda: m.remember(
            s, p, o, valid_from=vf, valid_to=vt, metadata=md, extractor=ex, source=src
        ),
    )
    srcs = [] if src is None else [src] if isinstance(src, str | Episode) else list(src)
    src_ok = all(x is real or x == real.id for x in srcs)
    valid = (
        is_text(s)
        and is_text(p)
        and is_text(o)
        and (vf is None or is_aware(vf))
        and (vt is None or is_aware(vt))
        and is_valid_metadata(md)
        and (ex is None or is_text(ex))
    )
    if err is not None:
        if valid and not src_ok and isinstance(err, NotFound | InvalidInput | InvalidType):
            return
        if valid and isinstance(err, InvalidInterval):
            assert vt is not None and vt <= (vf or m.now())
            return
        assert not valid, f"valid input refused: {err!r}"
        return
    assert valid and src_ok, "an invalid input was accepted"
    assert r is not None and r.added and len(r.fact_ids) == 1
    fid = r.fact_ids[0]
    (f,) = m.get(fid)
    assert f.source_episode_ids == ((real.id,) if srcs else ())
    assert (f.subject, f.object) == (s, o)
    assert f.predicate == m.predicate(p).name
    assert f.metadata == (md or {})
    assert f.extractor == ex
    assert f.valid_from == (vf if vf is not None else r.recorded_at)
    assert f.valid_to == vt
    assert f.scope == {"tenant": m.scope.tenant}
    # Every read path finds it by its own hostile values, and only it.
    found, _ = h.read_only(
        "facts",
        lambda: m.facts(subject=s, predicate=p, obj=o, states=ALL_STATES, valid_at=f.valid_from),
    )
    assert [x.version_id for x in found or []] == [f.version_id]
    hist, _ = h.read_only("history", lambda: m.history(s, p))
    assert [x.version_id for x in hist or []] == [f.version_id]
    prov, _ = h.read_only("why", lambda: m.why(fid))
    assert prov is not None and [v.version_id for v in prov.versions] == [f.version_id]
    exact, _ = h.read_only(
        "facts(exact)",
        lambda: m.facts(subject=s, obj=o, exact=True, states=ALL_STATES, valid_at=f.valid_from),
    )
    # exact keys: the fact was stored under folded keys, so only an already-folded name finds it
    want = [f.version_id] if (fold(s), fold(o)) == (s, o) else []
    assert [x.version_id for x in exact or []] == want
    if hasattr(m, "search"):
        res, err = h.read_only("search", lambda: m.search(s, k=5, states=ALL_STATES))
        assert err is None and res is not None
        assert not getattr(res, "degraded", False), res.failed_legs


@FUZZ
@given(data=st.data())
def test_end_retract_correct_erase_refuse_or_apply(h: Harness, data: st.DataObject) -> None:
    b = h.backend
    m = h.fresh()
    base = m.remember("ann", "lives_in", "oslo", valid_from=datetime(2020, 1, 1, tzinfo=UTC))
    fid = base.fact_ids[0]
    s = data.draw(st.one_of(st.just("ann"), or_wrong(texts(b))), "subject")
    p = data.draw(st.one_of(st.just("lives_in"), or_wrong(name_texts(b, 255))), "predicate")
    o = data.draw(maybe(st.one_of(st.just("oslo"), or_wrong(texts(b)))), "obj")
    at = data.draw(maybe(or_wrong(aware_datetimes())), "at")
    r, err = h.attempt("end", lambda: m.end(s, p, o, at=at))
    name_ok = is_text(p) and len(p) <= 255  # predicate names: at most 255 characters
    valid = is_text(s) and name_ok and (o is None or is_text(o)) and (at is None or is_aware(at))
    assert (err is None) == valid, f"end: valid={valid} err={err!r}"
    if r is not None and r.ended:
        for vid in r.ended:
            (f,) = [x for x in m.get(fid) if x.version_id == vid]
            if at is not None:
                assert f.valid_to == at
            else:  # the clock's now when end() was called
                assert f.valid_to is not None and r.recorded_at is not None
                assert f.valid_to <= r.recorded_at

    bad_id = data.draw(or_wrong(id_texts(b)), "fact_id")
    for name, call in (
        ("retract", lambda: m.retract(bad_id)),
        ("correct", lambda: m.correct(bad_id, "x")),
        ("erase", lambda: m.erase(bad_id)),
        ("why", lambda: m.why(bad_id)),
    ):
        out, err = h.attempt(name, call)
        assert isinstance(err, NotFound | InvalidType | InvalidInput), (
            f"{name}({bad_id!r}) -> {out!r}"
        )
    got, err = h.read_only("get", lambda: m.get(bad_id))
    assert err is not None or got == []

    new = data.draw(or_wrong(texts(b)), "new object")
    r, err = h.attempt("correct", lambda: m.correct(fid, new))
    if not is_text(new):
        assert isinstance(err, InvalidType | InvalidInput)
        return
    assert err is None, err
    assert r is not None and r.retracted
    current = [
        f
        for f in m.facts(subject="ann", predicate="lives_in", states=["live", "ended", "scheduled"])
    ]
    assert current and {f.object for f in current} == {new}
    assert m.get(fid) == [] or all(f.state is State.RETRACTED for f in m.get(fid))
    gone, err = h.attempt("erase", lambda: m.erase(current[0].id))
    assert err is None and gone is not None and gone["versions"] >= 1
    assert current[0].id not in {f.id for f in m.facts(subject="ann", states=ALL_STATES)}


@FUZZ
@given(data=st.data())
def test_import_fact_round_trips_or_refuses(h: Harness, data: st.DataObject) -> None:
    b = h.backend
    m = h.fresh()
    s = data.draw(or_wrong(texts(b)), "subject")
    o = data.draw(or_wrong(texts(b)), "obj")
    rec = data.draw(or_wrong(aware_datetimes().filter(lambda d: d.year < 2026)), "recorded_at")
    vf = data.draw(maybe(or_wrong(aware_datetimes())), "valid_from")
    if AVOID["import_falsy"] and vf is not None and not vf:
        vf = None
    r, err = h.attempt(
        "import_fact", lambda: m.import_fact(s, "lives_in", o, recorded_at=rec, valid_from=vf)
    )
    valid = is_text(s) and is_text(o) and is_aware(rec) and (vf is None or is_aware(vf))
    if err is not None:
        assert not valid, f"refused: {err!r}"
        return
    assert valid and r is not None
    (f,) = m.get(r.fact_ids[0])
    assert (f.subject, f.object, f.recorded_at) == (s, o, rec)
    assert f.valid_from == (vf if vf is not None else rec)
    # A second import into the same slot at the same belief time goes back in time.
    again, err = h.attempt(
        "import_fact", lambda: m.import_fact(s, "lives_in", "other", recorded_at=rec)
    )
    assert err is not None and again is None


@FUZZ
@given(data=st.data())
def test_register_predicate_round_trips_or_refuses(h: Harness, data: st.DataObject) -> None:
    b = h.backend
    m = h.fresh()
    name = data.draw(or_wrong(name_texts(b, 255)), "name")
    card = data.draw(
        st.one_of(st.sampled_from(["one", "many", "ONE", "", "bogus"]), WRONG), "cardinality"
    )
    vol = data.draw(
        st.one_of(st.sampled_from(["stable", "slow", "fast", "x"]), WRONG), "volatility"
    )
    iterables = WRONG.filter(lambda x: isinstance(x, list | dict | bytes))
    aliases = data.draw(
        st.one_of(
            st.lists(or_wrong(name_texts(b, 255)), max_size=3),
            st.just(()),
            iterables if AVOID["non_iterables"] else WRONG,
        ),
        "aliases",
    )
    spec, err = h.attempt(
        "register_predicate",
        lambda: m.register_predicate(name, cardinality=card, volatility=vol, aliases=aliases),
    )
    valid = (
        is_text(name)
        and card in ("one", "many")
        and vol in ("stable", "slow", "fast")
        and isinstance(aliases, list | tuple | dict)  # any non-str iterable of names
        and all(is_text(a) for a in aliases)
    )
    if err is not None:
        return  # an alias may legitimately collide with a built-in name
    assert valid, f"accepted {name!r} {card!r} {vol!r} {aliases!r}"
    assert spec is not None
    assert m.predicate(name).name == spec.name
    for a in aliases:
        assert m.predicate(a).name == spec.name, a
    if spec.cardinality.value == "one":
        m.remember("ann", name, "first")
        m.remember("ann", aliases[0] if aliases else name, "second")
        assert [f.object for f in m.facts(subject="ann", predicate=name)] == ["second"]


def test_correct_of_a_retracted_fact(store: Memory) -> None:
    """Two agents correct (or one retracts while another corrects) the same fact:
    the loser must get a documented error, not a bare KeyError('')."""
    fid = store.remember("ann", "lives_in", "oslo").fact_ids[0]
    store.correct(fid, "rome")  # a correct retracts the fact
    before = store.stats()
    with pytest.raises(ChronomemError):
        store.correct(fid, "lima")
    assert store.stats() == before


@pytest.mark.parametrize(
    "md", [{1: "a"}, {True: "x"}, {None: 1}], ids=["int-key", "bool-key", "none-key"]
)
def test_metadata_that_json_would_change(store: Memory, md: dict[Any, Any]) -> None:
    """JSON keys are strings: {1: 'a'} would come back as {'1': 'a'}, and {True: 1}
    as {'true': 1}. Refuse such metadata, or return it as given; never change it
    silently. (Tuples coming back as lists is ordinary JSON and not tested.)"""

    def same(r: Any) -> None:
        assert store.get(r.fact_ids[0])[0].metadata == md

    refused_or_round_trips(lambda: store.remember("ann", "likes", "tea", metadata=md), same)


def test_aliases_given_as_one_string(store: Memory) -> None:
    """``aliases="home"`` is a str, which is a Sequence[str] of characters: it must
    not register 'h', 'o', 'm', 'e' as aliases."""
    try:
        spec = store.register_predicate("home_town", cardinality="one", aliases="home")  # type: ignore[arg-type]
    except ChronomemError:
        return
    assert store.predicate("h").name != spec.name


def test_import_fact_refuses_a_falsy_valid_from(store: Memory) -> None:
    before = store.stats()
    for bad in (0, False, "", []):
        with pytest.raises(InvalidType):
            store.import_fact(
                "ann", "likes", "tea", recorded_at=datetime(2000, 1, 1, tzinfo=UTC), valid_from=bad
            )
    assert store.stats() == before


def test_import_from_the_future_is_refused(store: Memory) -> None:
    """An import stamped after the store's clock would drag the tenant's transaction
    clock into the future: every later ordinary write would be recorded then."""
    now = store.now()
    with pytest.raises(ChronomemError):
        store.import_fact("ann", "likes", "tea", recorded_at=datetime(9999, 1, 1, tzinfo=UTC))
    r = store.remember("ann", "likes", "coffee")
    assert r.recorded_at is not None and r.recorded_at < now + timedelta(days=1)
