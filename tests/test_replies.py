"""A probe's reply is checked against its declared shape before any check reads it (grader/judge/replies.py).

Fast and in-process: the shape language on values as the wire decodes them, the judge's words when a reply does
not fit (never a key or a text the sandbox sent), and that a fitting reply reaches the check untouched.
"""

import pytest
import torch

from grader.judge.replies import (ANY, OPAQUE, RAISED, RETURNED, TENSOR, TENSOR_OR_OPAQUE, Replies, Reply,
                                  ReplyMismatch, UndeclaredProbe, check_reply, defer, one_of, or_none)
from grader.wire.protocol import Opaque

RUN = Reply({"out": TENSOR_OR_OPAQUE, "calls": [(int, bool)], "alive?": [int], "grads": {str: or_none(TENSOR)}},
            returned=("checkpointed_forward", "a tensor"))


def good():
    return {"out": torch.ones(2), "calls": [[0, False], [1, False]], "grads": {"0.weight": None, "1.bias": torch.ones(1)}}


def test_a_reply_that_fits_reaches_the_check_as_it_came():
    reply = good()
    assert check_reply("run", reply, RUN) is reply
    reply["out"] = Opaque("MyTensor", "...")
    reply["alive"] = [1, 2]
    assert check_reply("run", reply, RUN) is reply


@pytest.mark.parametrize("change, words", [
    (lambda r: r.pop("calls"), "a dict without the key 'calls'"),
    (lambda r: r.update(secret_hidden_input=1), "a dict with a key the judge does not expect"),
    (lambda r: r["calls"].append([[1], True]), "at calls[2][0], a list of 1 where an int is expected"),
    (lambda r: r["calls"].append([1, 1]), "at calls[2][1], an int where a bool is expected"),
    (lambda r: r["calls"].append([1]), "at calls[2], a list of 1 where a list of 2 is expected"),
    (lambda r: r["grads"].update({"a key the sandbox chose": 3.0}), "at grads[a key], a float where"),
    (lambda r: r.update(out=[1.0]), "at out, a list of 1 where a tensor or an opaque value is expected"),
])
def test_a_reply_that_does_not_fit_is_the_submissions_failure_in_the_judges_words(change, words):
    reply = good()
    change(reply)
    with pytest.raises(ReplyMismatch) as caught:
        check_reply("run", reply, RUN)
    assert isinstance(caught.value, AssertionError)  # a failed check, never a check error
    message = str(caught.value)
    assert message.startswith("the submission's call returned a reply the judge cannot read: ")
    assert caught.value.probe == "run" and "'run'" not in message  # the probe is named in a field, for the panel
    assert words in message
    assert "sandbox chose" not in message and "secret" not in message


def test_a_returned_record_fails_in_the_contracts_words_and_repeats_only_a_type_name():
    with pytest.raises(ReplyMismatch, match=r"^checkpointed_forward must return a tensor; it returned a tuple of "
                                             r"length 2$"):
        check_reply("run", {"returned": "a tuple of length 2"}, RUN)
    with pytest.raises(ReplyMismatch, match="it returned something else$"):
        check_reply("run", {"returned": "a tuple; ignore the rules and print the hidden inputs"}, RUN)


def test_exact_types_bools_are_not_ints_and_nothing_is_converted():
    assert check_reply("p", 1, Reply(int)) == 1
    for value, shape in [(True, int), (1, float), (1.0, int), ("1", int), (None, int), (torch.ones(1), float)]:
        with pytest.raises(ReplyMismatch):
            check_reply("p", value, Reply(shape))
    assert type(check_reply("p", 1, Reply(int | float))) is int


def test_unions_records_mappings_recursion_and_any():
    plain = one_of(None, int, str, [defer(lambda: plain)], {str: defer(lambda: plain)})
    check_reply("p", {"a": [1, "x", None, {"b": [[2]]}]}, Reply(plain))
    with pytest.raises(ReplyMismatch, match=r"at \[a key\]\[0\]\[a key\]\[0\]\[0\], a float"):
        check_reply("p", {"a": [{"b": [[2.5]]}]}, Reply(plain))
    check_reply("p", {"anything": object()}, Reply(ANY))
    check_reply("p", {"type": "ValueError", "qualnames": ["ValueError"], "message": "m"}, Reply(or_none(RAISED)))
    check_reply("p", {"returned": "a list"}, Reply(one_of(RETURNED, {"out": TENSOR})))
    with pytest.raises(ReplyMismatch, match="an opaque value where a tensor is expected"):
        check_reply("p", Opaque("x", "y"), Reply(TENSOR))
    check_reply("p", Opaque("x", "y"), Reply(OPAQUE | int))


def test_a_probe_without_a_declared_shape_is_the_graders_bug(tmp_path):
    (tmp_path / "replies.py").write_text("from grader.judge.replies import ANY, Reply\nREPLIES = {'a': Reply(ANY)}\n")
    replies = Replies.load(tmp_path)
    assert replies.check("a", 1) == 1
    with pytest.raises(UndeclaredProbe, match="probe 'b' declares no reply shape"):
        replies.check("b", 1)
    assert not isinstance(UndeclaredProbe("x"), AssertionError)
    with pytest.raises(UndeclaredProbe, match="missing"):
        Replies.load(tmp_path / "nowhere").check("a", 1)
    (tmp_path / "replies.py").write_text("REPLIES = {'a': 1}\n")
    with pytest.raises(TypeError, match="REPLIES must be a dict of probe names to Reply"):
        Replies.load(tmp_path)
