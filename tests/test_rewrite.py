"""The judge's rewrite of a submission (grader.subset.rewrite): every guarded form goes through a guard, the
module means what it meant, and every line, caret and traceback stays the candidate's."""

from __future__ import annotations

import ast
import sys
import traceback
from pathlib import Path

import pytest

from grader.subset.rewrite import rewrite_source, rewritten_json
from grader.wire import guarded as G
from grader.wire import module_ast
from tests.rewritten import run

REPO = Path(__file__).resolve().parent.parent


#: Ordinary Python whose every result must be the same rewritten: each case defines ``result()``.
SAME_MEANING = {
    "private names are mangled as Python does": '''
class Box:
    def __init__(self):
        self.__secret = 1
        self._plain = 2
    def get(self):
        self.__secret += 10
        return self.__secret, self._plain, self._Box__secret
def result():
    return Box().get()
''',
    "augmented assignment evaluates in Python's order": '''
log = []
class Obj:
    def __init__(self):
        self.items = {"k": [1]}
        self.count = 0
def pick(x, tag):
    log.append(tag)
    return x
def result():
    o = Obj()
    pick(o, "target").count += pick(5, "value")
    pick(o.items, "container")[pick("k", "key")] += pick([2], "extra")
    return o.count, o.items, log
''',
    "unpacking, starred and nested": '''
def result():
    a, (b, *c), d = 1, (2, 3, 4), 5
    pairs = [(i, (i, i * i)) for i in range(3)]
    out = []
    for i, (j, k) in pairs:
        out.append(i + j + k)
    first, *rest = iter("xyz")
    x = y = (7, 8)
    return a, b, c, d, out, first, rest, x, y
''',
    "with, as and exceptions": '''
class CM:
    def __init__(self):
        self.log = []
    def __enter__(self):
        return (1, [2, 3])
    def __exit__(self, kind, exc, tb):
        self.log.append(kind.__name__ if kind else None)
        return kind is KeyError
def result():
    cm = CM()
    with cm as (one, (two, three)):
        total = one + two + three
    with cm:
        raise KeyError("swallowed")
    try:
        with cm:
            raise ValueError("kept")
    except ValueError as e:
        kept = str(e)
    return total, cm.log, kept
''',
    "super, properties, __getattr__ and hasattr": '''
class Base:
    def __init__(self, n):
        self.n = n
    def __getattr__(self, name):
        if name == "magic":
            return 42
        raise AttributeError(name)
class Child(Base):
    def __init__(self):
        super().__init__(3)
    @property
    def double(self):
        return self.n * 2
    @double.setter
    def double(self, value):
        self.n = value // 2
def result():
    c = Child()
    c.double = 10
    return c.n, c.double, c.magic, hasattr(c, "missing"), getattr(c, "missing", "default")
''',
    "generators, send, yield from and comprehensions": '''
def inner():
    got = yield 1
    return got * 2
def outer():
    value = yield from inner()
    yield value
def result():
    g = outer()
    first = next(g)
    second = g.send(21)
    return first, second, {k: v for k, v in zip("ab", range(2))}, {x % 3 for x in range(10)}, \\
        sum(x for x in range(4) if x), [[j for j in range(i)] for i in range(3)]
''',
    "match, walrus, slices, del and f-strings": '''
from dataclasses import dataclass, field
@dataclass
class Point:
    x: int
    y: int = 0
    tags: list = field(default_factory=list)
def result():
    out = []
    for p in [Point(1, 2), Point(0, 5), {"k": 3}, [1, 2, 3]]:
        match p:
            case Point(x=0, y=yy):
                out.append(("on y", yy))
            case Point(x=xx):
                out.append(("point", xx))
            case {"k": value, **rest}:
                out.append(("map", value, rest))
            case [first, *others]:
                out.append(("seq", first, others))
    data = list(range(10))
    del data[::3]
    if (n := len(data)) > 3:
        out.append(n)
    d = {"a": 1}
    del d["a"]
    return out, data[1:5:2], d, f"{data[0]!r:>4}|{n:03d}"
''',
    "lazy annotations and dataclass ClassVar": '''
from __future__ import annotations
from dataclasses import dataclass, fields
from typing import ClassVar
@dataclass
class Config:
    registry: ClassVar[dict] = {}
    size: int = 3
def result():
    c = Config()
    return c.size, Config.registry, [f.name for f in fields(Config)], [f.type for f in fields(c)]
''',
    "eager annotations, decorators, lambdas and closures": '''
import functools
from typing import ClassVar
from dataclasses import dataclass, fields
@dataclass
class C:
    shared: ClassVar[int] = 5
    v: int = 1
def deco(fn):
    @functools.wraps if False else (lambda f: f)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) + 1
    return wrapper
@deco
def f(x: int, *, y: int = 2) -> int:
    adder = lambda z, w=y: z + w
    return adder(x)
def counter():
    n = 0
    def bump():
        nonlocal n
        n += 1
        return n
    return bump
def result():
    b = counter()
    b()
    return f(1), [f.name for f in fields(C)], b(), sorted([3, 1, 2], key=lambda v: -v)
''',
}


@pytest.mark.parametrize("source", SAME_MEANING.values(), ids=SAME_MEANING.keys())
def test_the_rewrite_changes_no_meaning(source):
    assert run(source, guarded=True).result() == run(source, guarded=False).result()


def test_every_guarded_form_goes_through_a_guard():
    source = SAME_MEANING["augmented assignment evaluates in Python's order"] + '''
def more(o, xs, cm):
    o.a = xs[0]
    del o.b, xs[1]
    for x in xs:
        pass
    with cm as m:
        pass
    return [y for y in xs], o.c(1)
'''
    tree = rewrite_source(source, filename="cand.py")
    guard_calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                   and n.func.id in G.ALL]
    called = {n.func.id for n in guard_calls}
    assert {G.ATTR, G.WRITE, G.DELETE, G.UPDATE, G.VALUE, G.CONTAINER, G.ITER, G.ENTER} <= called
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):  # what is left is a store or delete whose object a guard returned
            assert not isinstance(node.ctx, ast.Load) and node.value.func.id in (G.WRITE, G.DELETE, G.UPDATE)
        if isinstance(node, (ast.For, ast.comprehension)):
            assert node.iter.func.id == G.ITER


def test_every_node_keeps_the_candidates_position():
    source = "import math\n\n\ndef f(x):\n    return (math\n            .sqrt(x)\n            .real)\n"
    original = {(n.lineno, n.col_offset) for n in ast.walk(ast.parse(source)) if hasattr(n, "lineno")}
    rewritten = {(n.lineno, n.col_offset) for n in ast.walk(rewrite_source(source, filename="c.py"))
                 if hasattr(n, "lineno")}
    assert rewritten == original


def test_a_traceback_shows_the_candidates_line_and_carets(tmp_path):
    path = tmp_path / "cand.py"
    source = "def f(values):\n    total = 0\n    for v in values:\n        total += v.missing\n    return total\n"
    path.write_text(source)
    module = run(source, guarded=True, filename=str(path))
    with pytest.raises(AttributeError) as caught:
        module.f([1])
    frames = [f for f in traceback.extract_tb(caught.value.__traceback__) if f.filename == str(path)]
    assert [(f.lineno, f.line) for f in frames][-1] == (4, "total += v.missing")
    last = frames[-1]
    assert source.splitlines()[3][last.colno:last.end_colno] == "v.missing"


def test_every_shipped_python_file_rewrites_and_compiles():
    files = sorted([*REPO.glob("solutions/**/*.py"), *REPO.glob("exercises/*/*.py"),
                    *REPO.glob("tests/hostile/**/*.py")])
    assert len(files) > 200
    for path in files:
        tree = module_ast.decode(rewritten_json(path.read_bytes(), filename=str(path)))
        compile(tree, str(path), "exec", dont_inherit=True)


def test_the_tree_crosses_as_json_unchanged():
    source = SAME_MEANING["match, walrus, slices, del and f-strings"] + "\nX = (1.5, 2j, b'\\x00', ..., 10**40, -0.0)\n"
    tree = rewrite_source(source, filename="c.py")
    assert ast.dump(module_ast.decode(module_ast.encode(tree)), include_attributes=True) == \
        ast.dump(tree, include_attributes=True)
    with pytest.raises(ValueError):
        module_ast.decode('{"_t": "NodeTransformer"}')
    with pytest.raises(ValueError):
        module_ast.decode('{"_t": "Expression", "body": {"_t": "Name", "id": "x"}}')


def test_python_versions_newer_fields_are_filled():
    """A judge on an older Python leaves out a newer node field (``type_params``): the sandbox fills it empty."""
    data = module_ast.encode(ast.parse("def f():\n    return 1\n"))
    node = module_ast.decode(data.replace('"returns":null,', "")).body[0]
    assert node.returns is None and node.decorator_list == []
    assert sys.version_info >= (3, 11)
