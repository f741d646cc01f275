"""A probe's answer: a dict, and the candidate returning the right kind of value."""

import pytest

from grader.judge import call, expect_returned


class FakeSandbox:
    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def call(self, probe, *args, **kwargs):
        self.calls.append((probe, args, kwargs))
        return self.answer


def test_call_passes_every_argument_and_returns_the_dict():
    box = FakeSandbox({"out": 1})
    assert call(box, "sdpa", 1, 2, mask=None, probe_option=3) == {"out": 1}
    assert box.calls == [("sdpa", (1, 2), {"mask": None, "probe_option": 3})]


def test_call_fails_the_check_on_an_answer_that_is_not_a_dict_without_repeating_it():
    with pytest.raises(AssertionError, match=r"^a probe returned list, expected a dict$") as caught:
        call(FakeSandbox(["hush-5551212"]), "sdpa")
    assert caught.value.probe == "sdpa"  # named in a field, for the panel: the message never names a probe


def test_a_probe_cannot_put_its_own_words_on_the_scorecard_as_a_forbidden_call():
    """Forbidden APIs are absent in the sandbox and named by the judge; a probe's "forbidden" is plain data."""
    answer = {"out": 1, "forbidden": ["hush-5551212 " * 1000]}
    assert call(FakeSandbox(answer), "sdpa") == answer


def test_expect_returned_names_the_function_and_the_contract():
    assert expect_returned({"out": 1}, function="f", returns="a pair") == {"out": 1}
    with pytest.raises(AssertionError, match=r"^collate_fn must return a tuple \(a, b\); it returned a list of 2$"):
        expect_returned({"returned": "a list of 2"}, function="collate_fn", returns="a tuple (a, b)")
