"""A Python module's syntax tree as JSON: how the judge hands the sandbox the module it rewrote.

The judge rewrites the candidate's module (``grader.subset.rewrite``) and the sandbox compiles
exactly that tree, with every node at the candidate's own line and column, so tracebacks point
at what the candidate wrote. Decoding builds only ``ast`` node classes, from a tree the judge
wrote into the read-only stage. Standard library only: it is staged into the sandbox.
"""

from __future__ import annotations

import ast
import base64
import json

_TYPE = "_t"
#: Fields a newer Python added to a node that an older judge leaves out: lists, filled empty.
_LIST_FIELDS = frozenset({"type_params", "type_ignores", "decorator_list", "keywords", "defaults", "kw_defaults",
                          "posonlyargs", "kwonlyargs", "args", "body", "orelse", "finalbody", "handlers", "names",
                          "targets", "elts", "keys", "values", "ops", "comparators", "generators", "ifs", "items",
                          "cases", "patterns", "kwd_attrs", "kwd_patterns"})


def encode(tree: ast.AST) -> str:
    """``tree`` as JSON text."""
    return json.dumps(_node(tree), separators=(",", ":"))


def decode(text: str | bytes) -> ast.Module:
    """The module :func:`encode` wrote; ``ValueError`` for anything that is not such a tree."""
    tree = _build(json.loads(text))
    if not isinstance(tree, ast.Module):
        raise ValueError("not a module's syntax tree")
    return tree


def _node(node: ast.AST) -> dict:
    out: dict = {_TYPE: type(node).__name__}
    for name in (*node._fields, *node._attributes):
        if hasattr(node, name):
            out[name] = _value(getattr(node, name))
    return out


def _value(value):
    if isinstance(value, ast.AST):
        return _node(value)
    if isinstance(value, list):
        return [_value(v) for v in value]
    if value is None or isinstance(value, (str, int)):  # bool is an int, and JSON keeps it apart
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, complex):
        return {"complex": [repr(value.real), repr(value.imag)]}
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if value is Ellipsis:
        return {"ellipsis": True}
    raise TypeError(f"a syntax tree holds no {type(value).__name__}")


def _build(data):
    if isinstance(data, list):
        return [_build(v) for v in data]
    if not isinstance(data, dict):
        return data
    if _TYPE not in data:
        return _constant(data)
    cls = getattr(ast, str(data[_TYPE]), None)
    if not (isinstance(cls, type) and issubclass(cls, ast.AST)):
        raise ValueError("not a syntax tree node")
    node = cls()
    for name in (*cls._fields, *cls._attributes):
        if name in data:
            setattr(node, name, _build(data[name]))
        elif name in cls._fields:
            setattr(node, name, [] if name in _LIST_FIELDS else None)
    return node


def _constant(data: dict):
    if "float" in data:
        return float(data["float"])
    if "complex" in data:
        real, imag = data["complex"]
        return complex(float(real), float(imag))
    if "bytes" in data:
        return base64.b64decode(data["bytes"])
    if "ellipsis" in data:
        return Ellipsis
    raise ValueError("not a constant of a syntax tree")
