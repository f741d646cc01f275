"""A probe's answer: a dict, with no forbidden calls, and the candidate returning the right kind of value."""

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


@pytest.mark.parametrize("answer, message", [
    ([1, 2], r"probe 'sdpa' returned \[1, 2\], expected a dict"),
    ({"out": 1, "forbidden": ["torch.nn.MultiheadAttention"]},
     "calls torch.nn.MultiheadAttention, which this exercise forbids"),
])
def test_call_fails_the_check_on_a_bad_answer(answer, message):
    with pytest.raises(AssertionError, match=message):
        call(FakeSandbox(answer), "sdpa")


def test_an_empty_forbidden_list_is_no_problem():
    assert call(FakeSandbox({"forbidden": []}), "sdpa") == {"forbidden": []}


def test_expect_returned_names_the_function_and_the_contract():
    assert expect_returned({"out": 1}, function="f", returns="a pair") == {"out": 1}
    with pytest.raises(AssertionError, match=r"^collate_fn must return a tuple \(a, b\); it returned a list of 2$"):
        expect_returned({"returned": "a list of 2"}, function="collate_fn", returns="a tuple (a, b)")
