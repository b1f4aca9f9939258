"""The phrasings issue #18 named, read by the rule extractor: exact objects,
ops, validity (scheduled facts) and subjects. REF is Wednesday 2024-06-12."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chronomem.extraction import Extracted, RuleExtractor

from .conftest import REF


def read(text: str) -> list[Extracted]:
    return RuleExtractor().extract_text(text, occurred_at=REF)


def triples(text: str) -> set[tuple[str, str | None, str]]:
    return {(f.predicate, f.obj, f.op) for f in read(text) if f.subject == "user"}


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm allergic to cats, by the way.", {("allergic_to", "cats", "assert")}),
        ("I'm allergic to peanuts, just so you know.", {("allergic_to", "peanuts", "assert")}),
        ("I love hiking, by the way.", {("likes", "hiking", "assert")}),
        ("I like jazz, to be honest.", {("likes", "jazz", "assert")}),
        ("I'm a lawyer, by the way.", {("job_title", "lawyer", "assert")}),
        ("I'm allergic to pollen, unfortunately.", {("allergic_to", "pollen", "assert")}),
    ],
)
def test_discourse_markers_never_become_objects(text: str, expected: set):
    assert triples(text) == expected


def test_negation_and_no_longer_bind_to_their_own_clause():
    assert triples("I no longer like coffee, but I still love tea.") == {
        ("likes", "coffee", "end"),
        ("likes", "tea", "assert"),
    }
    assert triples("I don't live in Oslo, but I work in Oslo at Equinor.") == {
        ("lives_in", "Oslo", "end"),
        ("works_at", "Equinor", "assert"),
    }


@pytest.mark.parametrize(
    "text",
    [
        "My brother lives in Dubai.",
        "She lives in Vancouver with her kids.",
        "My sister is allergic to peanuts.",
        "He's a software engineer at Google.",
        "My husband's email is tom@example.com.",
        "My brother's phone number is 555-201-3344.",
    ],
)
def test_third_persons_are_never_facts_about_the_user(text: str):
    assert triples(text) == set()


def test_a_future_move_is_scheduled_from_its_date():
    (f,) = read("I'll be moving to Berlin next month.")
    assert (f.predicate, f.obj, f.op) == ("lives_in", "Berlin", "assert")
    assert f.valid_from == day(2024, 7, 1)


def test_a_future_job_start_is_scheduled():
    (f,) = read("I'm starting at Stripe next Monday.")
    assert (f.predicate, f.obj, f.valid_from) == ("works_at", "Stripe", day(2024, 6, 17))


def test_without_a_date_a_move_is_a_plan():
    assert triples("I'm moving to Glasgow.") == {("plans", "move to Glasgow", "assert")}


@pytest.mark.parametrize(
    ("text", "predicate", "obj"),
    [
        ("I quit my job at Deloitte last month.", "works_at", "Deloitte"),
        ("I used to work at Microsoft.", "works_at", "Microsoft"),
        ("I resigned from Accenture last week.", "works_at", "Accenture"),
        ("I used to live in Madrid.", "lives_in", "Madrid"),
        ("I moved out of London two years ago.", "lives_in", "London"),
    ],
)
def test_leaving_is_a_held_end(text: str, predicate: str, obj: str):
    (f,) = read(text)
    assert (f.predicate, f.obj, f.op, f.held) == (predicate, obj, "end", True)


def test_a_plain_denial_is_an_end_that_was_not_held():
    (f,) = read("I don't speak German.")
    assert (f.predicate, f.obj, f.op, f.held) == ("speaks", "German", "end", False)


def test_a_denied_departure_is_nothing():
    assert triples("I didn't quit my job at Deloitte.") == set()
    assert triples("I never left Paris.") == set()


def test_used_to_then_now():
    assert triples("I used to live in Madrid, now I'm in Rome.") == {
        ("lives_in", "Madrid", "end"),
        ("lives_in", "Rome", "assert"),
    }


@pytest.mark.parametrize(
    "text",
    [
        "I'm in Paris for the weekend, any tips?",
        "I'm in Rome this week for a conference.",
        "I'm in a meeting now.",
        "I'm in Accounting now.",
    ],
)
def test_being_somewhere_is_not_living_there(text: str):
    assert triples(text) == set()


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("I'm a software engineer.", "software engineer"),
        ("I'm a high school teacher.", "high school teacher"),
        ("I've been a dentist for fifteen years.", "dentist"),
        ("Im a plumber", "plumber"),
    ],
)
def test_job_titles(text: str, title: str):
    assert triples(text) == {("job_title", title, "assert")}


@pytest.mark.parametrize(
    "text",
    ["I'm a big believer in unit tests.", "I'm a morning person.", "I'm a bit confused."],
)
def test_not_job_titles(text: str):
    assert triples(text) == set()


def test_phone_and_email():
    assert triples("My phone number is 555-867-5309.") == {("phone", "555-867-5309", "assert")}
    assert triples("You can reach me at +44 20 7946 0958.") == {
        ("phone", "+44 20 7946 0958", "assert")
    }
    assert triples("My new email address is lena@kowalski.dev.") == {
        ("email", "lena@kowalski.dev", "assert")
    }
    assert triples("My order number is 555-123-4567.") == set()


def test_plans_and_projects():
    assert triples("I'm planning a trip to Peru in August.") == {
        ("plans", "trip to Peru in August", "assert")
    }
    assert triples("I'm currently working on a mobile app for my gym.") == {
        ("working_on", "mobile app for my gym", "assert")
    }
    assert triples("I'm working on it, give me a sec.") == set()
    assert triples("I was going to move to Seattle but it fell through.") == set()


def test_family_members_and_pets_with_names():
    assert triples("My daughter Lily turns 7 next week.") == {
        ("has", "daughter named Lily", "assert")
    }
    assert triples("Our dog Biscuit loves the beach.") == {("has", "dog named Biscuit", "assert")}
    assert triples("My cat Oscar passed away last month.") == {("has", "cat named Oscar", "end")}


def test_a_named_childs_birthday_is_a_fact_about_the_child():
    facts = read("My daughter Lily turns 7 on Friday.")
    lily = {(f.predicate, f.obj) for f in facts if f.subject == "Lily"}
    assert lily == {("birthday", "June 14"), ("age", "7")}
    (age,) = [f for f in facts if f.subject == "Lily" and f.predicate == "age"]
    assert age.valid_from == day(2024, 6, 14)


def test_turning_next_week_is_a_scheduled_age_without_a_birthday():
    (f,) = read("I turn 40 next week!")
    assert (f.predicate, f.obj, f.valid_from) == ("age", "40", day(2024, 6, 17))


def test_ages_are_dated_when_said_with_a_time():
    (f,) = read("I'm 30 next month.")
    assert (f.predicate, f.obj, f.valid_from) == ("age", "30", day(2024, 7, 1))
    (f,) = read("I turned 21 yesterday!")
    assert (f.predicate, f.obj, f.valid_from) == ("age", "21", day(2024, 6, 11))
    assert triples("I'm 55 this year.") == set()  # when in the year is unknown


def test_objects_are_not_forms_of_address_or_jokes():
    assert triples("Please call me Dr. Patel.") == set()
    assert triples("I'm Melbourne-based.") == set()
    assert triples("I'm allergic to work lol.") == set()
    assert triples("We got married last summer.") == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a hope is a plan when it names a life change and a future date
        ("I'm hoping to buy a house next year.", {("plans", "buy a house next year", "assert")}),
        ("I'm hoping to buy a house someday.", set()),
        ("I'm hoping to start the migration next week.", set()),
        ("I hope to visit you next week.", set()),
        # a subjectless tail of an opening "I'm ..." describes the speaker
        (
            "I'm a photographer, mostly weddings, based in Bath.",
            {("job_title", "photographer", "assert"), ("lives_in", "Bath", "assert")},
        ),
        ("I'm 30, living in Leeds.", {("age", "30", "assert"), ("lives_in", "Leeds", "assert")}),
        ("My brother is a chef, based in Leeds.", set()),
        ("I'm in London, living in a hotel for now.", set()),
        # breeds are pets, with their names
        (
            "We've got a golden retriever called Sunny.",
            {("has", "golden retriever named Sunny", "assert")},
        ),
        ("I have a husky voice today.", set()),
        ("I'm Irish, born and raised.", {("nationality", "Irish", "assert")}),
        # the simple past of a state is an end ("I've lived ..." still holds)
        ("I lived in Madrid for five years.", {("lives_in", "Madrid", "end")}),
        ("I worked at Google for 5 years.", {("works_at", "Google", "end")}),
        ("I've lived in Auckland my whole life.", {("lives_in", "Auckland", "assert")}),
        ("If I lived in Paris I'd eat croissants every day.", set()),
        ("I worked at home yesterday.", set()),
        # a greeting before a name is not a sign of all-lowercase typing
        ("Hi! I'm Fatou.", {("name", "Fatou", "assert")}),
        ("I'm divorced now.", {("married_to", None, "end")}),
        ("Spanish is my first language.", {("speaks", "Spanish", "assert")}),
        ("Python is my first language.", set()),
        # round 15
        ("I'm a retired firefighter.", {("job_title", "firefighter", "end")}),
        ("I'm a former nurse.", {("job_title", "nurse", "end")}),
        ("I plan to call you tomorrow.", set()),
        ("I love my new apartment in Queens.", set()),
        ("I'm no longer at Accenture.", {("works_at", "Accenture", "end")}),
        ("I'm at Google.", set()),
        ("I'm no longer at the gym.", set()),
        ("Name's Vic.", {("name", "Vic", "assert")}),
        ("Name is Harriet.", set()),
        ("Best number to reach me is 0151 496 0732.", {("phone", "0151 496 0732", "assert")}),
        ("I live on my own in a flat in Glasgow.", {("lives_in", "Glasgow", "assert")}),
        (
            "I moved to Berlin in 2019 for a job at Zalando and never left.",
            {("lives_in", "Berlin", "assert"), ("works_at", "Zalando", "assert")},
        ),
        ("I came to London for a job interview at Google.", set()),
        ("Someone told me I look like I work at Apple.", set()),
        # round 16
        ("I love living in Montreal.", {("lives_in", "Montreal", "assert")}),
        ("I'd love living in Paris.", set()),
        (
            "I'm a professor of history at Yale.",
            {("job_title", "professor of history", "assert"), ("works_at", "Yale", "assert")},
        ),
        ("I was at McKinsey for six years.", {("works_at", "McKinsey", "end")}),
        ("I was at the gym for two hours.", set()),
        ("I was at Tesco yesterday.", set()),
        ("I resigned last Friday.", {("works_at", None, "end")}),
        ("I'm 73 and still working.", {("age", "73", "assert")}),
        ("I'm 2 and a half hours away.", set()),
        # a season is a taste's object, and a time cut from an object's start leaves no taste
        ("I'm not a fan of winter.", {("dislikes", "winter", "assert")}),
        ("I love summer.", {("likes", "summer", "assert")}),
        ("I hate winter weather.", {("dislikes", "winter", "assert")}),
        ("I love summer in Paris.", set()),
        ("My sister loves summer.", set()),
        # round 17
        ("I live in constant frustration with this printer.", set()),
        ("i live in leeds", {("lives_in", "leeds", "assert")}),
        (
            "I used to live in Oslo but moved to Bergen last year.",
            {("lives_in", "Oslo", "end"), ("lives_in", "Bergen", "assert")},
        ),
        ("They told me I'm allergic to cats.", set()),
        ("i quit my job today lol", {("works_at", None, "end")}),
        ("I'm a massive Arsenal fan.", {("likes", "Arsenal", "assert")}),
        ("I'm a big fan.", set()),
        (
            "I speak three languages: English, French and Arabic.",
            {
                ("speaks", "English", "assert"),
                ("speaks", "French", "assert"),
                ("speaks", "Arabic", "assert"),
            },
        ),
        ("I'll be 35 next week.", {("age", "35", "assert")}),
        ("I'll be 5 minutes late.", set()),
        ("I'll be 100% there tomorrow.", set()),
        ("I'm married with two kids.", {("has", "two kids", "assert")}),
        ("I'm on a plane with two kids, help.", set()),
        # round 18
        ("I'm on the design team at Canva.", {("works_at", "Canva", "assert")}),
        (
            "I'm working on a side project, a budgeting app.",
            {("working_on", "side project", "assert")},
        ),
    ],
)
def test_round_13_and_14_phrasings(text: str, expected: set):
    assert triples(text) == expected
