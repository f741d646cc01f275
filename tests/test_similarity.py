"""grader.batch.similarity: normalised-token similarity between submissions, and its HTML report."""

from __future__ import annotations

import builtins
import difflib
import keyword
import re
import string
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.batch.similarity import (
    K,
    THRESHOLD,
    W,
    Pair,
    Submission,
    compare,
    distinctive,
    kgram_hashes,
    normalise,
    pairs_by_candidate,
    similar_pairs,
    winnow,
)
from grader.batch.similarity_page import pair_anchors, render_similarity_html

STUB = '''"""Attention: implement scaled_dot_product_attention. See README.md."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention.

    Returns (out, weights): weights is the softmax over keys of q·kᵀ/√E with blocked
    positions exactly 0 (a fully blocked row gets all-zero weights); out = weights @ v.
    """
    raise NotImplementedError("scaled_dot_product_attention")
'''
HEAD, _, _ = STUB.partition('    raise NotImplementedError')

MATMUL = HEAD + '''\
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    out = torch.matmul(weights, v)
    return out, weights
'''

# MATMUL with every local renamed, literals changed, comments, a string-comment and blank lines added.
MATMUL_DISGUISED = HEAD + '''\
    # temperature: 1/sqrt(head size)
    temp = 1 / math.sqrt(q.shape[-1])

    logits = torch.matmul(q, k.transpose(-1, -2)) * temp  # (..., L, S)
    if mask is not None:
        """Blocked keys get -inf so softmax gives them nothing."""
        logits = logits.masked_fill(~mask, float("-1e30"))
    attn = torch.softmax(logits, dim=-1)
    attn = torch.nan_to_num(attn, nan=0)   # fully blocked rows -> 0

    if mask is not None:
        attn = attn.masked_fill(~mask, 0)
    result = torch.matmul(attn, v)
    return result, attn
'''

EINSUM = HEAD + '''\
    d = q.size(-1)
    logits = torch.einsum("...le,...se->...ls", q, k) / math.sqrt(d)
    if mask is None:
        keep = torch.ones_like(logits, dtype=torch.bool)
    else:
        keep = mask.expand_as(logits)
    logits = logits.masked_fill(~keep, 0.0)
    top = logits.amax(dim=-1, keepdim=True).detach()
    e = torch.exp(logits - top) * keep
    total = e.sum(dim=-1, keepdim=True)
    weights = e / total.clamp_min(torch.finfo(e.dtype).tiny)
    return torch.einsum("...ls,...se->...le", weights, v), weights
'''

STUBS = {"attention": STUB}


def sub(candidate: str, source: str, exercise: str = "attention", score: float | None = 7.0) -> Submission:
    return Submission(candidate=candidate, exercise=exercise, source=source, score=score)


def test_normalise_abstracts_names_and_literals_and_drops_comments_layout_docstrings():
    src = 'def f(x):\n    """Doc."""\n\n    # comment\n    return x + 1 if x else f"{x}!"  # trailing\n'
    assert normalise(src) == ["def", "ID", "(", "ID", ")", ":", "return", "ID", "+", "LIT", "if", "ID", "else", "LIT"]


def test_distinctive_removes_long_runs_shared_with_the_stub():
    stub = normalise(STUB)
    mine = normalise(MATMUL)
    left = distinctive(mine, stub)
    assert left == normalise(textwrap.dedent(MATMUL.removeprefix(HEAD)))  # imports, signature gone; body kept
    assert distinctive(mine, []) == mine


@settings(deadline=None, max_examples=200)
@given(st.lists(st.sampled_from("ab(.=:"), max_size=40), st.lists(st.sampled_from("ab(.=:"), max_size=40),
       st.lists(st.sampled_from("ab(.=:"), min_size=K + W - 1, max_size=30))
def test_winnowing_guarantee_a_shared_run_of_k_plus_w_minus_1_tokens_shares_a_fingerprint(a, b, shared):
    """The guarantee that makes fingerprints a fair summary (Schleimer et al. 2003): no shared run that long is missed."""
    left, right = a + shared + b, b + shared + a
    assert winnow(kgram_hashes(left)) & winnow(kgram_hashes(right))


@settings(deadline=None, max_examples=100)
@given(st.lists(st.sampled_from("ab(.=:"), max_size=60))
def test_winnowing_is_one_min_per_window(tokens):
    hashes = kgram_hashes(tokens)
    expected = {min(hashes[i:i + W]) for i in range(len(hashes) - W + 1)} if len(hashes) >= W else (
        {min(hashes)} if hashes else set())
    assert winnow(hashes) == expected
    assert kgram_hashes(tokens) == hashes  # deterministic: scores never depend on the process's hash seed


# (a) a disguised copy is found.
def test_renamed_relabelled_commented_copy_is_reported():
    pairs = similar_pairs([sub("alice", MATMUL, score=9), sub("bob", MATMUL_DISGUISED, score=8.5)], STUBS)
    assert len(pairs) == 1
    (p,) = pairs
    assert (p.a.candidate, p.b.candidate, p.exercise) == ("alice", "bob", "attention")
    assert p.similarity >= 0.95


# (b) two honest answers from the same stub are not.
def test_different_correct_solutions_are_not_reported():
    subs = [sub("alice", MATMUL), sub("carol", EINSUM)]
    assert similar_pairs(subs, STUBS) == []
    # Not for want of tokens: both sides are long enough, the similarity is simply low.
    stub = normalise(STUB)
    assert min(len(distinctive(normalise(s.source), stub)) for s in subs) >= 30
    (p,) = similar_pairs(subs, STUBS, threshold=0.0)
    assert p.similarity < THRESHOLD - 0.3  # far from it, not just under


# (c) the stub and near-stub files never flag.
def test_stub_and_near_stub_files_are_never_reported():
    near = [
        sub("s1", STUB),
        sub("s2", STUB.replace('raise NotImplementedError("scaled_dot_product_attention")', "pass")),
        sub("s3", STUB + "    # todo\n    return q, q\n"),
        sub("s4", STUB.replace("q: Tensor", "query: Tensor")),
    ]
    assert similar_pairs(near, STUBS) == []
    assert similar_pairs(near, {}) != []  # without the stub subtracted they would all look alike


def test_short_identical_answers_do_not_flag_below_min_tokens():
    short = HEAD + "    return torch.softmax(q @ k.mT, -1) @ v, None\n"
    subs = [sub("x", short), sub("y", short)]
    assert similar_pairs(subs, STUBS) == []
    assert [p.similarity for p in similar_pairs(subs, STUBS, min_tokens=5)] == [1.0]


# (d) only pairs within one exercise.
def test_pairs_across_exercises_are_never_reported():
    subs = [sub("alice", MATMUL), sub("bob", MATMUL, exercise="attention_v2"), sub("dan", MATMUL, exercise="other")]
    assert similar_pairs(subs, STUBS) == []
    subs.append(sub("erin", MATMUL_DISGUISED, exercise="attention_v2"))
    assert [(p.exercise, p.a.candidate, p.b.candidate) for p in similar_pairs(subs, STUBS)] == [
        ("attention_v2", "bob", "erin")
    ]


def test_pairs_sorted_by_similarity_then_names_and_grouped_by_candidate():
    edited = MATMUL.replace("    out = torch.matmul(weights, v)\n", "    out = weights @ v\n    out = out.contiguous()\n")
    subs = [sub("zoe", MATMUL), sub("bob", edited), sub("amy", MATMUL_DISGUISED), sub("carol", EINSUM)]
    pairs = similar_pairs(subs, STUBS)
    assert [(p.a.candidate, p.b.candidate) for p in pairs] == [("amy", "zoe"), ("amy", "bob"), ("bob", "zoe")]
    assert pairs[0].similarity == 1.0 > pairs[1].similarity >= 0.9
    grouped = pairs_by_candidate(pairs)
    assert set(grouped) == {("amy", "attention"), ("bob", "attention"), ("zoe", "attention")}
    assert grouped[("zoe", "attention")] == [pairs[0], pairs[2]]
    assert pair_anchors(pairs)[pairs[1]] == "pair-2"


# (e) text that does not tokenize is still compared.
BROKEN = [
    "",
    "\x00\x01 $ ? `",
    'def f(:\n    x = 1  # c\n  y = "a\n',
    "if x:\n        a = 1\n    b = 2\n",  # dedent to no known level
    "x = (1,\n",  # EOF inside brackets
    "s = '''never closed\n",
    "\tif x:\n        pass\n\t  y\n",
]


def test_unparsable_sources_do_not_crash():
    for text in BROKEN:
        assert all(isinstance(t, str) for t in normalise(text))
    assert normalise('def f(:\n    x = 1  # c\n    """doc"""\n  y = \'a\n') == [
        "def", "ID", "(", ":", "ID", "=", "LIT", "ID", "=", "LIT"
    ]
    assert render_similarity_html(similar_pairs([sub(str(i), t) for i, t in enumerate(BROKEN)], STUBS, min_tokens=0))


def test_broken_copies_are_still_found():
    tail = "    extra = torch.cat([out,\n"  # never closed: tokenize gives up, the regex fallback runs
    pairs = similar_pairs([sub("a", MATMUL + tail), sub("b", MATMUL_DISGUISED + tail.replace("extra", "more"))], STUBS)
    assert [p.similarity >= 0.95 for p in pairs] == [True]


@settings(deadline=None, max_examples=100)
@given(st.text())
def test_normalise_never_raises(text):
    assert all(isinstance(t, str) for t in normalise(text))


# (f) the page escapes candidate text and gives each pair an anchor.
def test_htmldiff_escapes_line_text_itself():
    table = difflib.HtmlDiff().make_table(["a < b && c > d"], ["x"])
    assert "a&nbsp;&lt;&nbsp;b&nbsp;&amp;&amp;&nbsp;c&nbsp;&gt;&nbsp;d" in table


def test_html_escapes_sources_and_names_and_has_anchors():
    evil = MATMUL + '    s = "</table><script>alert(1)</script>"\n    # \x00+<b>\x01\n'
    pairs = similar_pairs([sub("<img src=x onerror=alert(2)>", evil, score=None), sub("bob", evil), sub("amy", MATMUL)], STUBS)
    assert len(pairs) == 3
    page = render_similarity_html(pairs, title="Batch <1>")
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    # difflib marks changes with \0 and \1 in its input: shown as escapes, on every side that has the line (2 + 1 + 1).
    assert page.count("#&nbsp;\\x00+&lt;b&gt;\\x01") == 4 and "\x00" not in page and "\x01" not in page
    assert "&lt;/table&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "<title>Batch &lt;1&gt;</title>" in page
    assert [f"pair-{i}" for i in (1, 2, 3)] == re.findall(r'<section id="(pair-\d+)"', page)
    assert page.count("<table") == 3 and page.count("</table>") == 3
    assert '<meta name="viewport"' in page and 'class="scroll"' in page and "overflow-x: auto" in page
    assert "http://" not in page and "https://" not in page
    assert "reason to look, not proof" in page
    assert "100.0% similar" in page and "score —" in page and "score 7" in page


def test_the_side_by_side_view_shows_bidi_and_control_characters_escaped():
    """Trojan Source in a submission: the view shows the override, it does not reorder the line."""
    evil = MATMUL + '    s = "\u202e;)(tixe"  # \x1b[2J\n'
    pairs = similar_pairs([sub("ann\u2066", evil), sub("bob", evil)], STUBS)
    page = render_similarity_html(pairs)
    assert "\u202e" not in page and "\u2066" not in page and "\x1b" not in page
    assert "\\u202e;)(tixe" in page and "ann\\u2066" in page and "\\x1b[2J" in page


def test_html_with_no_pairs_says_so():
    assert "No pairs reached the similarity threshold." in render_similarity_html([])


# (g) renaming identifiers consistently never changes the tokens.
TEMPLATE = '''
import {0}

class {1}({0}.Base):
    """A docstring that mentions {2}."""

    def {2}(self, {3}, {4}=0.5, *{5}):
        {6} = {3}.{2}({4}) + {1}.{6}  # {5}
        for {5} in range(3):
            {6} += {5} ** 2 if {5} else -{4}
        return [{6}, lambda {3}: {3}[{4}:]]
'''
_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
identifiers = st.text(alphabet=string.ascii_letters + string.digits + "_éπß", min_size=1, max_size=10).filter(
    lambda s: s.isidentifier() and s not in _RESERVED
)


@settings(deadline=None, max_examples=50)
@given(st.lists(identifiers, min_size=7, max_size=7, unique=True))
def test_normalise_is_invariant_under_consistent_renaming(names):
    base = [f"n{i}" for i in range(7)]
    assert normalise(TEMPLATE.format(*names)) == normalise(TEMPLATE.format(*base))


def test_pair_is_frozen_data():
    p = Pair("attention", sub("a", "x"), sub("b", "y"), 0.95)
    assert p == Pair("attention", sub("a", "x"), sub("b", "y"), 0.95) and hash(p) == hash(Pair(**vars(p)))


# (h) the pass has a time budget: what it did not reach is listed, never guessed.
def test_pairs_past_the_time_budget_are_listed_as_not_compared():
    ticks = iter([0.0] * 5 + [100.0] * 50)  # the deadline and 4 files' fingerprints in time, then out of time
    subs = [sub("alice", MATMUL), sub("bob", MATMUL_DISGUISED), sub("carol", EINSUM), sub("s", STUB)]
    found = compare(subs, STUBS, budget_s=60, clock=lambda: next(ticks))
    assert found.pairs == [] and found.unchecked_count == 3  # the stub is too short to pair, whatever the time
    assert [(u.a, u.b) for u in found.unchecked] == [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]
    page = render_similarity_html(found)
    assert "3 pairs not compared" in " ".join(page.split()) and 'id="unchecked"' in page
    assert "alice ↔ bob" in page
    everything = compare(subs, STUBS, budget_s=None)
    assert [(p.a.candidate, p.b.candidate) for p in everything.pairs] == [("alice", "bob")]
    assert everything.unchecked_count == 0 and "not compared" not in render_similarity_html(everything)
    nothing = compare(subs, STUBS, budget_s=0)  # no time at all: every pair is listed, none is guessed
    assert nothing.pairs == [] and nothing.unchecked_count == 6


def test_the_side_by_side_view_is_cut_to_its_limits():
    long_line = "    x = " + "1 + " * 200 + "1\n"
    body = MATMUL + long_line * 1500
    (p,) = similar_pairs([sub("a", body), sub("b", body)], STUBS)
    page = render_similarity_html([p])
    assert "the first 1000 lines of each file, each cut at 300 characters" in page
    assert page.count("…") >= 1000
    assert page.count("1&nbsp;+&nbsp;") <= 2 * 1000 * (300 // 4)  # 2 sides, 1000 lines, 4 characters a term
