"""A LlamaIndex turn costs the same whatever the session's length (issue #32):
``put`` appends by the store's cursor without reading the transcript, ``get``
reads the tail its token window needs. Counted in statements and episode rows
at 50 and 400 stored messages, on every backend."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage

from chronomem import Memory
from llama_index.memory.chronomem import ChronomemMemory

from ..statements import Cost, counting


def _seeded(memory: Memory, session: str, n: int) -> ChronomemMemory:
    store = memory.scoped(user=session)  # facts of one session never meet the other's
    seed = ChronomemMemory(store, session_id=session, extract=False)
    seed.put_messages(
        [
            ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"message {i} " * 8)
            for i in range(n)
        ]
    )
    return ChronomemMemory(store, session_id=session, token_limit=400)


def _turn(memory: ChronomemMemory) -> tuple[Cost, list[ChatMessage]]:
    memory.put(ChatMessage(role="user", content="I live in Paris and I like tea."))
    memory.put(ChatMessage(role="assistant", content="Noted."))
    memory.get()  # the store's first facts, the search mirror loaded
    with counting(memory.memory) as cost:
        memory.put(ChatMessage(role="user", content="I live in Paris and I like tea."))
        got = memory.get()
        memory.put(ChatMessage(role="assistant", content="Noted."))
    return cost, got


def test_a_turn_costs_the_same_at_50_and_400_messages(memory: Memory) -> None:
    short, got_short = _turn(_seeded(memory, "short", 50))
    long, got_long = _turn(_seeded(memory, "long", 400))
    assert short.shape == long.shape, (short.shape, long.shape)
    assert long.episode_rows < 100  # the tail, not the session
    # the same window either way: as many of the newest messages as fit
    assert len(got_short) == len(got_long)
    assert [m.content for m in got_short[-3:]] == [m.content for m in got_long[-3:]]
    assert got_long[-1].content == "I live in Paris and I like tea."


def test_get_reads_the_same_window_as_the_whole_transcript(store: Memory) -> None:
    memory = _seeded(store, "s", 120)
    whole = memory.get_all()
    window = memory.get()
    body = [m for m in window if m.role != "system"]
    assert body == whole[-len(body) :]
    assert 1 < len(body) < len(whole)


def test_a_window_of_answers_only_reaches_back_to_its_user_message(memory: Memory) -> None:
    """``fit`` keeps a turn whole from its user message when only assistant or
    tool messages fit: the tail read reaches that message, as the whole
    transcript would."""
    chat = ChronomemMemory(memory.scoped(user="u"), session_id="s", token_limit=60, extract=False)
    chat.put_messages(
        [ChatMessage(role="user", content=f"old {i}") for i in range(80)]
        + [ChatMessage(role="user", content="Tell me everything.")]
        + [ChatMessage(role="assistant", content=f"part {i} " * 10) for i in range(40)]
    )
    got = chat.get("anything")
    body = [m for m in got if m.role != "system"]
    assert body[0].content == "Tell me everything." and len(body) == 41
    assert body == chat.get_all()[-41:]


def _resend(memory: ChronomemMemory) -> Cost:
    history = memory.get_all()[-10:]
    with counting(memory.memory) as cost:
        memory.set([*history, ChatMessage(role="user", content="And one more thing.")])
    return cost


def test_set_with_a_re_sent_window_costs_the_same_at_100_and_400(memory: Memory) -> None:
    """``set`` compares the given messages with the transcript's tail only (the
    pages ``recent`` reads to hold 11 + 32 messages: the same at either length)."""
    short, long = _seeded(memory, "short", 100), _seeded(memory, "long", 400)
    a, b = _resend(short), _resend(long)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert b.episode_rows < 100
    whole = long.get_all()
    assert len(whole) == 401 and whole[-1].content == "And one more thing."


def _get_after_a_put(memory: ChronomemMemory) -> Cost:
    memory.put(ChatMessage(role="user", content="And I like coffee."))
    with counting(memory.memory) as cost:
        memory.get()
    return cost


def test_a_turn_reads_the_same_rows_at_1k_and_10k_messages(memory: Memory) -> None:
    """The whole turn runs the same statements and decodes the same episode rows
    at 1k and 10k messages. Its read, recall included, examines the same rows: after
    a write the search mirror reads only the episodes recorded since its last
    sync (schema v10's ``cm_episodes_recorded``), never the session's messages, and
    ``get`` reads the transcript's tail. On SQLite the virtual machine runs about as
    many instructions for that ``get`` (a scan of the 9,000 extra episodes would run
    tens of thousands more; the writes are left out of that count: FTS5's
    occasional segment merges vary them)."""
    # a tenant each: the mirror is a tenant's, so the 10k session is the bigger store
    short_memory = _seeded(memory.scoped(tenant="short"), "short", 1000)
    long_memory = _seeded(memory.scoped(tenant="long"), "long", 10_000)
    short, _ = _turn(short_memory)
    long, got = _turn(long_memory)
    assert short.shape == long.shape, (short.shape, long.shape)
    assert long.episode_rows < 100
    assert got[-1].content == "I live in Paris and I like tea."
    read_short, read_long = _get_after_a_put(short_memory), _get_after_a_put(long_memory)
    assert read_short.shape == read_long.shape, (read_short.shape, read_long.shape)
    if memory.backend.engine.dialect.name == "sqlite":
        steps = (read_short.vm_steps, read_long.vm_steps)
        assert abs(steps[0] - steps[1]) <= 300, steps


def _tail_pages(memory: ChronomemMemory, monkeypatch: Any) -> tuple[int, int, list[ChatMessage]]:
    """How many pages (``latest_episodes`` calls) and episode rows a ``get`` reads."""
    pages: list[int] = []
    read = Memory.latest_episodes

    def counted(self: Memory, limit: int, **kw: Any) -> Any:
        found = read(self, limit, **kw)
        pages.append(len(found))
        return found

    monkeypatch.setattr(Memory, "latest_episodes", counted)
    try:
        got = memory.get()
    finally:
        monkeypatch.setattr(Memory, "latest_episodes", read)
    return len(pages), sum(pages), got


def test_a_get_reads_its_window_in_one_page_at_1k_and_10k(memory: Memory, monkeypatch: Any) -> None:
    """The first ``get`` pages back from 32 rows, doubling (32 + 64 for a window of
    about 90 messages); the next reads its last window's length (and slack, in whole
    pages) in one statement: the same rows, the same window, fewer statements."""
    for n, tenant in ((1000, "short"), (10_000, "long")):
        chat = _seeded(memory.scoped(tenant=tenant), tenant, n)
        chat.token_limit = 3000
        first, rows, got = _tail_pages(chat, monkeypatch)
        assert first >= 2 and rows == sum(32 * 2**i for i in range(first)), (first, rows)
        again, rows_again, same = _tail_pages(chat, monkeypatch)
        assert again == 1 and rows_again <= rows, (again, rows_again)
        assert same == got and len(got) > 50
        chat.put(ChatMessage(role="user", content="short"))
        after, _, grown = _tail_pages(chat, monkeypatch)
        body = [m for m in grown if m.role != "system"]
        assert after == 1 and body[-1].content == "short"
        assert body == chat.get_all()[-len(body) :]
