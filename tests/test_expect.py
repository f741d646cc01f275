"""The assertions checks use on sandbox data."""

import re

import pytest
import torch

from grader.judge import CandidateError, Opaque, candidate_raises, expect_each_raises, expect_raised, expect_tensor


def error(type_name, qualnames, message="boom"):
    return CandidateError("probe", {"type": type_name, "qualnames": qualnames, "builtin": True,
                                    "message": message})


def test_expect_tensor_names_each_problem():
    t = torch.ones(2, 3)
    assert expect_tensor(t, shape=(2, 3), dtype=torch.float32) is t
    with pytest.raises(AssertionError, match="out: expected a torch.Tensor, got AlwaysEqual"):
        expect_tensor(Opaque("AlwaysEqual", "x"), name="out")
    with pytest.raises(AssertionError, match=r"expected shape \(3, 2\), got \(2, 3\)"):
        expect_tensor(t, shape=(3, 2))
    with pytest.raises(AssertionError, match="expected dtype torch.float64"):
        expect_tensor(t, dtype=torch.float64)
    with pytest.raises(AssertionError, match="1 of 6 values are not finite \\(NaN\\)"):
        expect_tensor(torch.tensor([[1.0, float("nan"), 0], [0, 0, 0]]))
    assert expect_tensor(torch.tensor([float("inf")]), finite=False).isinf().all()


def test_candidate_raises_accepts_subclasses_by_name():
    with candidate_raises("ValueError", match="n_heads"):
        raise error("MyError", ["MyError", "ValueError", "Exception"], "n_heads must be >= 1")


@pytest.mark.parametrize("raised, expected, message", [
    (error("TypeError", ["TypeError"]), "ValueError", "expected ValueError, but the code raised TypeError"),
    (error("ValueError", ["ValueError"], "bad"), "ValueError", "does not match"),
    (error("NotImplementedError", ["NotImplementedError", "RuntimeError"]), "RuntimeError", "not implemented yet"),
])
def test_candidate_raises_refuses_the_wrong_error(raised, expected, message):
    with pytest.raises(AssertionError, match=message):
        with candidate_raises(expected, match="n_heads" if message == "does not match" else None):
            raise raised


def test_candidate_raises_requires_a_raise():
    with pytest.raises(AssertionError, match="nothing was raised"):
        with candidate_raises("ValueError"):
            pass


def test_candidate_raises_starts_its_message_with_what_was_tried():
    with pytest.raises(AssertionError, match=r"^f\(0\): expected ValueError to be raised, but nothing was raised$"):
        with candidate_raises("ValueError", what="f(0)"):
            pass
    with pytest.raises(AssertionError, match=r"^f\(1\): expected ValueError, but the code raised TypeError: boom$"):
        with candidate_raises("ValueError", what="f(1)"):
            raise error("TypeError", ["TypeError"])


def test_what_the_code_did_instead_tells_two_mistakes_that_both_raise_nothing_apart():
    """A label without weight weighed 0 and weighed 1 both raise nothing; what each did instead is the evidence."""
    for drawn in (0, 97):
        with pytest.raises(AssertionError, match=rf"nothing was raised \(instead: drawn {drawn} times\)$"):
            with candidate_raises("ValueError", what="f()", otherwise=lambda drawn=drawn: f"drawn {drawn} times"):
                pass
    with pytest.raises(AssertionError, match=r"nothing was raised$"):  # nothing to add
        with candidate_raises("ValueError", otherwise=lambda: None):
            pass
    with candidate_raises("ValueError", otherwise=lambda: pytest.fail("asked although the code raised")):
        raise error("ValueError", ["ValueError", "Exception"])


def test_every_call_is_tried_so_refusing_nothing_and_missing_one_case_say_different_things():
    def refuses(*bad):
        return lambda n: (_ for _ in ()).throw(error("ValueError", ["ValueError"], f"bad n={n}")) if n in bad else None
    calls = lambda code: [(f"f({n})", "n=", lambda n=n: code(n)) for n in (0, -1, -2)]  # noqa: E731
    expect_each_raises("ValueError", calls(refuses(0, -1, -2)))  # every case refused: passes
    with pytest.raises(AssertionError, match=r"^f\(0\): expected ValueError to be raised, but nothing was raised$"):
        expect_each_raises("ValueError", calls(refuses(-1, -2)))
    with pytest.raises(AssertionError, match=r"^3 of 3 calls did not raise ValueError as they should:\nf\(0\): .*\n"
                                             r"f\(-1\): .*\nf\(-2\): expected ValueError to be raised"):
        expect_each_raises("ValueError", calls(refuses()))


def raised(type_name, qualnames, message="boom"):
    return {"type": type_name, "qualnames": qualnames, "message": message}


def test_expect_raised_holds_a_caught_exception_to_candidate_raises_rules():
    expect_raised(raised("KeyError", ["KeyError", "LookupError"], "no 'x'"), "LookupError", what="w", match="'x'")
    cases = [
        (None, "restore: expected RuntimeError to be raised, but nothing was raised"),
        (raised("TypeError", ["TypeError"]), "restore: expected RuntimeError, but the code raised TypeError: boom"),
        (raised("NotImplementedError", ["NotImplementedError", "RuntimeError"]),
         "restore: expected RuntimeError, but the code is not implemented yet"),
    ]
    for record, message in cases:
        with pytest.raises(AssertionError, match=re.escape(message)):
            expect_raised(record, "RuntimeError", what="restore")
    with pytest.raises(AssertionError, match="does not match"):
        expect_raised(raised("ValueError", ["ValueError"], "bad"), "ValueError", what="w", match="decoder")
