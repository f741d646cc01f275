"""Find submissions to the same exercise whose normalised code is nearly identical.

A shared answer rarely arrives verbatim: names get changed, constants nudged,
comments added. So code is compared as a token sequence in which identifiers,
numbers and strings are abstracted and layout, comments and docstrings are gone
(:func:`normalise`). Every candidate starts from the same stub, which would make
two honest answers look alike, so long runs shared with the stub are removed
first (:func:`distinctive`). The score is difflib's ``ratio()``: a reason for a
person to look, never proof.
"""

from __future__ import annotations

import difflib
import io
import keyword
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from itertools import groupby

from markupsafe import Markup, escape

from grader.reports import templating

ID, LIT = "ID", "LIT"
_LAYOUT = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
# Python 3.12+ splits f-strings (3.14: t-strings) into parts; each whole string is one literal.
_STR_START = {getattr(tokenize, n) for n in ("FSTRING_START", "TSTRING_START") if hasattr(tokenize, n)}
_STR_END = {getattr(tokenize, n) for n in ("FSTRING_END", "TSTRING_END") if hasattr(tokenize, n)}


def _name(word: str) -> str:
    return word if keyword.iskeyword(word) else ID


def _tokenize(source: str) -> list[str]:
    out: list[str] = []
    pending: list[str] = []  # strings opening a statement: a docstring if nothing else follows
    at_start, depth = True, 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = tok.type
        if kind in _STR_START or depth:
            depth += (kind in _STR_START) - (kind in _STR_END)
            if depth:
                continue
            kind = tokenize.STRING
        if kind in _LAYOUT or (kind == tokenize.ERRORTOKEN and not tok.string.strip()):
            continue
        if kind == tokenize.NEWLINE:
            pending, at_start = [], True  # a statement of strings alone is a docstring/comment: dropped
            continue
        if kind == tokenize.STRING and at_start:
            pending.append(LIT)
            continue
        out += pending
        pending, at_start = [], False
        if kind in (tokenize.NUMBER, tokenize.STRING):
            out.append(LIT)
        else:
            out.append(_name(tok.string) if kind == tokenize.NAME else tok.string)
    return out + pending


_FALLBACK = re.compile(
    r"""(?P<comment>\#[^\n]*)
    | (?P<doc>^[ \t]*[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?(?:\"\"\"|\Z)|'''[\s\S]*?(?:'''|\Z))[ \t]*$)
    | (?P<lit>[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?(?:\"\"\"|\Z)|'''[\s\S]*?(?:'''|\Z)|"[^"\n]*"?|'[^'\n]*'?)
        | 0[xXoObB][\w]+ | (?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)
    | (?P<name>[^\W\d]\w*)
    | (?P<op>\*\*=|//=|>>=|<<=|->|:=|\.\.\.|[-+*/%&|^@<>=!]=|\*\*|//|<<|>>|\S)""",
    re.VERBOSE | re.MULTILINE,
)


def _fallback_tokens(source: str) -> list[str]:
    """Best effort for text ``tokenize`` rejects: the same abstraction, found by a regex."""
    out = []
    for m in _FALLBACK.finditer(source):
        kind = m.lastgroup
        if kind == "lit":
            out.append(LIT)
        elif kind == "name":
            out.append(_name(m.group()))
        elif kind == "op":
            out.append(m.group())
    return out


def normalise(source: str) -> list[str]:
    """Tokens with identifiers as ``ID``, numbers and strings as ``LIT``; comments, layout, docstrings dropped.

    Keywords and operators stay, so the shape of the code is what is compared.
    Never raises: text that does not tokenize goes through a regex instead.
    """
    try:
        return _tokenize(source)
    except Exception:  # TokenError, IndentationError, SyntaxError (3.12+), ...: the file is still compared
        return _fallback_tokens(source)


def distinctive(tokens: list[str], stub_tokens: list[str], min_block: int = 8) -> list[str]:
    """``tokens`` less every run of ``min_block`` or more tokens matched, in order, with the stub."""
    if not stub_tokens:
        return list(tokens)
    keep = [True] * len(tokens)
    matcher = difflib.SequenceMatcher(None, tokens, stub_tokens, autojunk=False)
    for i, _, size in matcher.get_matching_blocks():
        if size >= min_block:
            keep[i:i + size] = [False] * size
    return [t for t, k in zip(tokens, keep) if k]


@dataclass(frozen=True)
class Submission:
    candidate: str
    exercise: str
    source: str
    score: float | None


@dataclass(frozen=True)
class Pair:
    exercise: str
    a: Submission  # a.candidate sorts before b.candidate
    b: Submission
    similarity: float  # 0..1, rounded to 3 decimals


def _positions(tokens: list[str]) -> dict[str, int]:
    """token -> bit set of where it occurs, for :func:`_lcs_ratio`."""
    bits: dict[str, int] = defaultdict(int)
    for j, t in enumerate(tokens):
        bits[t] |= 1 << j
    return bits


def _lcs_ratio(a: list[str], b_positions: dict[str, int], b_len: int) -> float:
    """``2·LCS/(len(a)+len(b))``: a bound on ``ratio()``, whose matching blocks are a common subsequence.

    Bit-parallel LCS length (Hyyrö 2004) with Python ints as bit vectors: one pass
    over ``a``. With few distinct tokens (most are ``ID``) honest answers pass
    ``quick_ratio()`` but not this, and this costs a fraction of ``ratio()``.
    """
    total = len(a) + b_len
    if not total:
        return 1.0  # as difflib rates two empty sequences
    full = v = (1 << b_len) - 1
    for t in a:
        u = v & b_positions.get(t, 0)
        v = ((v + u) | (v - u)) & full
    return 2.0 * (b_len - v.bit_count()) / total


def similar_pairs(
    submissions: list[Submission], stubs: dict[str, str], *, threshold: float = 0.9, min_tokens: int = 30
) -> list[Pair]:
    """Pairs within one exercise whose distinctive tokens have ``ratio() >= threshold``, most similar first.

    A side with fewer than ``min_tokens`` distinctive tokens (the stub, a near-empty
    file) never flags. ``real_quick_ratio()`` (lengths), ``quick_ratio()`` (token
    counts) and :func:`_lcs_ratio` are upper bounds on ``ratio()``, cheapest first,
    so they skip pairs without changing the result.
    """
    stub_tokens = {name: normalise(text) for name, text in stubs.items()}
    pairs = []
    ordered = sorted(submissions, key=lambda s: (s.exercise, s.candidate))
    for exercise, group in groupby(ordered, key=lambda s: s.exercise):
        stub = stub_tokens.get(exercise, [])
        subs = [(s, distinctive(normalise(s.source), stub)) for s in group]
        subs = [(s, toks, _positions(toks)) for s, toks in subs if len(toks) >= min_tokens]
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        for j, (b, b_toks, b_positions) in enumerate(subs):
            matcher.set_seq2(b_toks)  # difflib caches its index of seq2: set it once per b
            for a, a_toks, _ in subs[:j]:
                matcher.set_seq1(a_toks)
                if (matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold
                        or _lcs_ratio(a_toks, b_positions, len(b_toks)) < threshold):
                    continue
                ratio = matcher.ratio()
                if ratio >= threshold:
                    pairs.append(Pair(exercise, a, b, round(ratio, 3)))
    pairs.sort(key=lambda p: (-p.similarity, p.exercise, p.a.candidate, p.b.candidate))
    return pairs


def pairs_by_candidate(pairs: list[Pair]) -> dict[tuple[str, str], list[Pair]]:
    """``(candidate, exercise) -> pairs`` it is in, so the panel can flag that row."""
    out: dict[tuple[str, str], list[Pair]] = defaultdict(list)
    for p in pairs:
        out[(p.a.candidate, p.exercise)].append(p)
        out[(p.b.candidate, p.exercise)].append(p)
    return dict(out)


def pair_anchors(pairs: list[Pair]) -> dict[Pair, str]:
    """The ``id`` each pair has in :func:`render_similarity_html` (``pair-1``, ...), for links."""
    return {p: f"pair-{i}" for i, p in enumerate(pairs, 1)}


_env = templating.environment("grader.batch")
# HtmlDiff marks changes with \0 and \1 and then swaps them for <span> tags: keep them out of its input.
_MARKERS = str.maketrans({"\0": "\ufffd", "\1": "\ufffd"})


def _side_by_side(a: Submission, b: Submission) -> Markup:
    """difflib's side-by-side table of the two original sources.

    ``HtmlDiff`` escapes ``&``, ``<`` and ``>`` in every line it shows (its
    ``_format_line``; tests/test_similarity.py checks), but not the column headings,
    so those are escaped here before the table is marked safe.
    """
    table = difflib.HtmlDiff(tabsize=4, wrapcolumn=72).make_table(
        a.source.translate(_MARKERS).splitlines(),
        b.source.translate(_MARKERS).splitlines(),
        fromdesc=str(escape(a.candidate.translate(_MARKERS))),
        todesc=str(escape(b.candidate.translate(_MARKERS))),
    )
    return Markup(table)


def _fmt_score(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}".rstrip("0").rstrip(".")


def render_similarity_html(pairs: list[Pair], *, title: str = "Similar submissions") -> str:
    """A self-contained page (inline CSS, no scripts, no remote assets), one section per pair."""
    anchors = pair_anchors(pairs)
    rows = [
        dict(anchor=anchors[p], pair=p, percent=f"{100 * p.similarity:.1f}",
             score_a=_fmt_score(p.a.score), score_b=_fmt_score(p.b.score), table=_side_by_side(p.a, p.b))
        for p in pairs
    ]
    return _env.get_template("similarity.html.j2").render(title=title, rows=rows)
