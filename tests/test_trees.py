"""Exact equality of nested data, naming the first place it breaks."""

import pytest
import torch

from grader.judge import Opaque, expect_equal, first_difference


def state():
    return {"model": {"w": torch.arange(6.0).reshape(2, 3), "steps": [1, 2]}, "epoch": 3, 0: (0.5, "adam")}


def test_equal_trees_pass_lists_and_tuples_alike():
    got = state()
    got[0] = [0.5, "adam"]
    assert first_difference(got, state()) is None
    expect_equal(got, state(), name="checkpoint")


@pytest.mark.parametrize("change, where, detail", [
    (lambda s: s["model"]["w"].__setitem__((1, 2), 9.0), "['model']['w']",
     "1 of 6 values differ, first at index (1, 2): got 9.0, expected 5.0"),
    (lambda s: s["model"]["steps"].append(3), "['model']['steps']", "expected 2 items, got a list of 3"),
    (lambda s: s.__setitem__("epoch", 4), "['epoch']", "got 4, expected 3"),
    (lambda s: s["model"].pop("steps"), "['model']", "expected the keys ['steps', 'w'], got ['w']"),
    (lambda s: s["model"].__setitem__("w", s["model"]["w"].double()), "['model']['w']",
     "expected (2, 3) torch.float32, got (2, 3) torch.float64"),
    (lambda s: s["model"].__setitem__("w", Opaque("FakeTensor", "x")), "['model']['w']",
     "expected a tensor, got a FakeTensor"),
])
def test_the_first_difference_is_named_with_its_place(change, where, detail):
    got = state()
    change(got)
    assert first_difference(got, state()) == f"{where}: {detail}"
    with pytest.raises(AssertionError) as e:
        expect_equal(got, state(), name="the state after loading", note="save, then load")
    assert str(e.value) == f"the state after loading, at {where}: {detail} (save, then load)"


def test_nan_never_equals_anything():
    want = torch.tensor([1.0, float("nan")])
    assert first_difference(want.clone(), want) == "1 of 2 values differ, first at index (1,): got nan, expected nan"
    assert first_difference([float("nan")], [float("nan")]) == "[0]: got nan, expected nan"


def test_a_tensor_never_equals_a_number():
    assert first_difference(torch.tensor(3), 3) == "got tensor(3), expected 3"
    with pytest.raises(AssertionError, match="^speed: got 2, expected 3$"):
        expect_equal(2, 3, name="speed")
