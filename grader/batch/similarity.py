"""Find submissions to the same exercise whose normalised code is nearly identical.

A shared answer rarely arrives verbatim: names get changed, constants nudged,
comments added, every expression wrapped in parentheses. So code is parsed and written
back first (:func:`canonical`: formatting gone), then compared as a token sequence in
which identifiers, numbers and strings are abstracted and layout, comments and
docstrings are gone (:func:`normalise`). Every candidate starts from the same stub, which would make
two honest answers look alike, so long runs shared with the stub are removed
first (:func:`distinctive`). What remains is reduced to winnowed k-gram
fingerprints, as MOSS does (:func:`winnow`), and two submissions are as similar
as the share of the smaller one's fingerprints the other also has
(:func:`resemblance`): a reason for a person to look, never proof. Each
submission is also compared with its exercise's published answers (reference,
variants, mutants: ``grader.batch.published``), which a candidate could copy
from the repository; its best match at the threshold is a flag naming the file.

Every step is linear in a file's size (two identical 1 MB files take seconds;
the difflib ratio used before was quadratic and never finished on them), and
the pass as a whole has a time budget: pairs it did not reach are listed as not
compared, and the batch publishes anyway.
"""

from __future__ import annotations

import ast
import hashlib
import io
import keyword
import re
import time
import tokenize
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby

from grader.batch.published import Published

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


def canonical(source: str) -> str:
    """``source`` parsed and written back (``ast.unparse``): redundant parentheses, layout, comments and the
    spelling of literals are gone, so formatting cannot hide a copy. A file that does not parse, as it is."""
    try:
        return ast.unparse(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source


def normalise(source: str) -> list[str]:
    """Tokens with identifiers as ``ID``, numbers and strings as ``LIT``; comments, layout, docstrings dropped,
    of the file as :func:`canonical` writes it.

    Keywords and operators stay, so the shape of the code is what is compared.
    Never raises: text that does not tokenize goes through a regex instead.
    """
    text = canonical(source)
    try:
        return _tokenize(text)
    except Exception:  # TokenError, IndentationError, SyntaxError (3.12+), ...: the file is still compared
        return _fallback_tokens(text)


def distinctive(tokens: list[str], stub_tokens: list[str], min_block: int = 8) -> list[str]:
    """``tokens`` less every run of ``min_block`` or more tokens that also occurs in the stub.

    A token is dropped when a ``min_block``-gram holding it occurs anywhere in the stub:
    one pass with a set of the stub's k-grams, so the cost is linear in the submission.
    """
    if not stub_tokens:
        return list(tokens)
    stub = {tuple(stub_tokens[i:i + min_block]) for i in range(len(stub_tokens) - min_block + 1)}
    keep = [True] * len(tokens)
    for i in range(len(tokens) - min_block + 1):
        if tuple(tokens[i:i + min_block]) in stub:
            keep[i:i + min_block] = [False] * min_block
    return [t for t, k in zip(tokens, keep) if k]


#: k-gram length: shorter shared runs are noise (``ID = ID . ID (`` is in every answer).
K = 5
#: Winnowing window: any run of ``K + W - 1`` = 8 tokens two files share yields a shared fingerprint,
#: while about 2/(W+1) of the k-grams are kept.
W = 4
_MOD, _BASE = (1 << 61) - 1, 1_000_003


def _token_id(token: str, cache: dict[str, int]) -> int:
    """A stable number per token (not ``hash()``, which changes per process: scores must not)."""
    if token not in cache:
        cache[token] = int.from_bytes(hashlib.blake2b(token.encode("utf-8", "replace"), digest_size=7).digest(), "big")
    return cache[token]


def kgram_hashes(tokens: list[str], k: int = K) -> list[int]:
    """A rolling (Karp-Rabin) hash of every ``k``-gram, in order: linear in ``len(tokens)``."""
    if len(tokens) < k:
        return []
    cache: dict[str, int] = {}
    ids = [_token_id(t, cache) for t in tokens]
    top = pow(_BASE, k - 1, _MOD)
    h = 0
    for x in ids[:k]:
        h = (h * _BASE + x) % _MOD
    out = [h]
    for i in range(k, len(ids)):
        h = ((h - ids[i - k] * top) * _BASE + ids[i]) % _MOD
        out.append(h)
    return out


def winnow(hashes: list[int], w: int = W) -> set[int]:
    """The fingerprints: the smallest hash of every window of ``w`` (the rightmost on ties).

    Schleimer, Wilkerson and Aiken, "Winnowing" (SIGMOD 2003), as MOSS uses it: two
    sequences sharing ``w`` consecutive hashes share a fingerprint. One pass, with a
    queue of the window's candidate minima.
    """
    w = min(w, len(hashes))
    chosen: set[int] = set()
    window: deque[int] = deque()  # indices whose hashes increase from left to right
    for i, h in enumerate(hashes):
        while window and hashes[window[-1]] >= h:
            window.pop()
        window.append(i)
        if window[0] <= i - w:
            window.popleft()
        if i >= w - 1:
            chosen.add(hashes[window[0]])
    return chosen


def fingerprints(source: str, stub_tokens: list[str]) -> tuple[int, frozenset[int]]:
    """(distinctive tokens, fingerprints) of ``source`` once what it shares with the stub is gone."""
    tokens = distinctive(normalise(source), stub_tokens)
    return len(tokens), frozenset(winnow(kgram_hashes(tokens)))


def resemblance(a: frozenset[int], b: frozenset[int]) -> float:
    """Shared fingerprints over the smaller side's: 1.0 when one's distinctive code is all in the other.

    Over the smaller side, not the union (Jaccard): a copied answer padded with extra code
    is still a copy, and a local edit costs about ``(edit + K - 1)/length``, not twice that.
    """
    smaller = min(len(a), len(b))
    return len(a & b) / smaller if smaller else 0.0


@dataclass(frozen=True)
class Submission:
    candidate: str
    exercise: str
    source: str
    score: float | None


@dataclass(frozen=True)
class PublishedMatch:
    """A submission whose code is nearly that of a published file of its exercise (its best such match), and
    how close the exercise's honest solutions come to one another: the evidence a panel weighs it against."""

    submission: Submission
    file: Published
    similarity: float  # 0..1, rounded to 3 decimals
    honest: float | None = None  # the closest two honest solutions of the exercise come (None: fewer than two)
    strong: bool = True  # well above what honest solutions reach: shown in red

    @property
    def anchor(self) -> str:
        """Its ``id`` on similarity.html: from the row, not its place in a list, so any page can link to it
        (and a hash, since a candidate's name is no fit for a URL fragment)."""
        row = f"{self.submission.candidate}\0{self.submission.exercise}".encode("utf-8", "surrogateescape")
        return "published-" + hashlib.sha256(row).hexdigest()[:12]

    @property
    def line(self) -> str:
        """The flag's words, as evidence: "resembles the published solutions/x/x.py: 0.97; honest solutions of
        this exercise reach 0.59"."""
        honest = ("no two honest solutions of this exercise to compare with" if self.honest is None else
                  f"honest solutions of this exercise reach {self.honest:.2f}")
        return f"resembles {self.file.phrase}: {self.similarity:.2f}; {honest}"


@dataclass(frozen=True)
class Pair:
    exercise: str
    a: Submission  # a.candidate sorts before b.candidate
    b: Submission
    similarity: float  # 0..1, rounded to 3 decimals


@dataclass(frozen=True)
class Unchecked:
    """A pair the time budget left out: neither similar nor not, just not compared."""

    exercise: str
    a: str
    b: str


@dataclass
class Similarity:
    pairs: list[Pair]  # most similar first
    unchecked: list[Unchecked] = field(default_factory=list)  # the first MAX_LISTED of them
    unchecked_count: int = 0
    budget_s: float | None = None
    published: list[PublishedMatch] = field(default_factory=list)  # most similar first, one per submission at most
    published_files: dict[str, int] = field(default_factory=dict)  # exercise -> published files compared with

    def published_by_row(self) -> dict[tuple[str, str], PublishedMatch]:
        """``(candidate, exercise) -> its published match``, for the panel's flags and the exports."""
        return {(m.submission.candidate, m.submission.exercise): m for m in self.published}


#: How an uncompared check against an exercise's published files is listed (as the other side of a pair).
PUBLISHED_SIDE = "the published solutions"


#: A pair at or above this is listed. Fingerprints cost an edit about ``K - 1`` tokens more than
#: difflib's ratio did (0.9 there): at 0.8 every pair the old pass flagged among the solutions,
#: variants and mutants of all exercises is still flagged, while two different correct solutions
#: (a reference and its variants) score at most 0.73 (evaluate's).
THRESHOLD = 0.8
#: A published match is listed at ``max(THRESHOLD, honest + MARGIN)``, where ``honest`` is how close the
#: exercise's honest solutions (reference and variants) come to one another, and shown in red only from
#: ``max(RED_FLOOR, honest + RED_MARGIN)``: well above what honest answers reach (a plain or reformatted
#: copy is about 1.0). Why: docs/decisions/published-threshold.md.
MARGIN, RED_FLOOR, RED_MARGIN = 0.05, 0.95, 0.2
#: Seconds the whole pass may take in a batch; what is left is listed on similarity.html as not compared.
BUDGET_S = 60.0
#: Pairs not compared that similarity.html names one by one; the rest are counted.
MAX_LISTED = 200


def compare(submissions: list[Submission], stubs: dict[str, str], *, threshold: float = THRESHOLD,
            min_tokens: int = 30, budget_s: float | None = BUDGET_S,
            clock: Callable[[], float] = time.monotonic,
            published: dict[str, list[Published]] | None = None) -> Similarity:
    """Pairs within one exercise whose fingerprints :func:`resemblance` reaches ``threshold``, and each
    submission's best match among its exercise's ``published`` files that reaches it too.

    A side with fewer than ``min_tokens`` distinctive tokens (the stub, a near-empty
    file) never flags. Work stops when ``budget_s`` has passed, between one file's
    fingerprints or one comparison and the next (each bounded by the size cap
    on a submission); what it did not reach is reported, not guessed. The published
    files are compared first: a copied reference is the likelier thing to find.
    """
    deadline = None if budget_s is None else clock() + budget_s
    over = lambda: deadline is not None and clock() >= deadline  # noqa: E731
    stub_tokens = {name: normalise(text) for name, text in stubs.items()}
    result = Similarity([], budget_s=budget_s)
    ordered = sorted(submissions, key=lambda s: (s.exercise, s.candidate))
    for exercise, group in groupby(ordered, key=lambda s: s.exercise):
        group = list(group)
        stub = stub_tokens.get(exercise, [])
        prints = [_LATE if over() else _flaggable(s.source, stub, min_tokens) for s in group]
        files = (published or {}).get(exercise, [])
        result.published_files[exercise] = len(files)
        refs = [(p, _LATE if over() else _flaggable(p.source, stub, min_tokens)) for p in files]
        honest = honest_reach([f for p, f in refs if p.honest])
        listed_at = max(threshold, (honest or 0.0) + MARGIN)
        for sub, mine in zip(group, prints) if files else ():
            if mine is None:
                continue
            if mine is _LATE or any(f is _LATE for _, f in refs) or over():
                _not_compared(result, Unchecked(exercise, sub.candidate, PUBLISHED_SIDE))
                continue
            best = max(((resemblance(mine, f), n, p) for n, (p, f) in enumerate(refs) if f is not None),
                       key=lambda t: (t[0], -t[1]), default=None)  # ties: the reference, then variants, mutants
            if best is not None and best[0] >= listed_at:
                strong = best[0] >= max(RED_FLOOR, (honest or 0.0) + RED_MARGIN)
                result.published.append(PublishedMatch(sub, best[2], round(best[0], 3),
                                                       None if honest is None else round(honest, 3), strong))
        for j, b in enumerate(group):
            for i, a in enumerate(group[:j]):
                if prints[i] is None or prints[j] is None:
                    continue  # one side too short: never a pair, whatever the time
                if prints[i] is _LATE or prints[j] is _LATE or over():
                    _not_compared(result, Unchecked(exercise, a.candidate, b.candidate))
                    continue
                score = resemblance(prints[i], prints[j])
                if score >= threshold:
                    result.pairs.append(Pair(exercise, a, b, round(score, 3)))
    result.pairs.sort(key=lambda p: (-p.similarity, p.exercise, p.a.candidate, p.b.candidate))
    result.published.sort(key=lambda m: (-m.similarity, m.submission.exercise, m.submission.candidate))
    return result


def honest_reach(prints: list) -> float | None:
    """How close honest solutions come to one another: the highest :func:`resemblance` of two of them (their
    fingerprints; a side too short or not reached is left out); None with fewer than two to compare."""
    usable = [f for f in prints if f is not None and f is not _LATE]
    scores = [resemblance(usable[i], usable[j]) for j in range(len(usable)) for i in range(j)]
    return max(scores) if scores else None


def _not_compared(result: Similarity, what: Unchecked) -> None:
    result.unchecked_count += 1
    if len(result.unchecked) < MAX_LISTED:
        result.unchecked.append(what)


_LATE = frozenset({-1})  # a file the budget ran out before: its pairs are not compared


def _flaggable(source: str, stub_tokens: list[str], min_tokens: int) -> frozenset[int] | None:
    """The file's fingerprints, or ``None`` when it has too little distinctive code to ever flag."""
    size, found = fingerprints(source, stub_tokens)
    return found if size >= min_tokens and found else None


def similar_pairs(submissions: list[Submission], stubs: dict[str, str], *, threshold: float = THRESHOLD,
                  min_tokens: int = 30) -> list[Pair]:
    """:func:`compare` with no time budget: every pair, most similar first."""
    return compare(submissions, stubs, threshold=threshold, min_tokens=min_tokens, budget_s=None).pairs


def pairs_by_candidate(pairs: list[Pair]) -> dict[tuple[str, str], list[Pair]]:
    """``(candidate, exercise) -> pairs`` it is in, so the panel can flag that row."""
    out: dict[tuple[str, str], list[Pair]] = defaultdict(list)
    for p in pairs:
        out[(p.a.candidate, p.exercise)].append(p)
        out[(p.b.candidate, p.exercise)].append(p)
    return dict(out)
