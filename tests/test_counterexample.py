from grader.judge.counterexample import extract


def with_notes(*notes):
    e = AssertionError("x")
    for n in notes:
        e.add_note(n)
    return e


def test_extracts_every_spelling_and_drops_the_fixture():
    for prefix in ("Failing test case", "Falsifying example", "Failing explicit example"):
        note = f"{prefix}: test_x(\n    sandbox=<CheckSandbox>,\n    n=4,\n)"
        assert extract(with_notes("other", note)) == f"{prefix}: test_x(\n    n=4,\n)"


def test_looks_inside_exception_groups_and_tolerates_none():
    group = ExceptionGroup("many", [with_notes("Failing test case: test_y(k=1)")])
    assert extract(group) == "Failing test case: test_y(k=1)"
    assert extract(None) is None and extract(AssertionError("plain")) is None
