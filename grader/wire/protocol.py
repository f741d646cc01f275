"""The framed protocol between the judge and the sandbox worker.

Both sides import this module, and it imports only the standard library, torch
and safetensors: the worker runs it from a read-only copy inside a bare runtime
image. Nothing here can execute code from the other side:

- a frame is ``MAGIC`` + a 4-byte big-endian payload length + the payload; a
  reader refuses a frame longer than its cap from the length alone, before
  reading the body (the judge's cap is the exercise's ``[limits] result_mb``);
- a payload is a 4-byte JSON length, a UTF-8 JSON header, then an optional
  safetensors blob holding every tensor the header refers to.

Values are JSON with a few tagged forms: ``{"$tensor": "t0"}`` (a tensor in the
blob), ``{"$tuple": [...]}``, ``{"$float": "nan"|"inf"|"-inf"}`` and, from the
worker only, ``{"$object": type_name, "repr": text}`` for anything that is not
plain data (a Tensor subclass, a module, an "always equal" object...), and for an
``Opaque`` a probe built itself (``grader.sandbox.probekit.opaque``: a value the
contract did not promise, described in place of the value). Decoding
enforces size and depth caps (and its errors never repeat what the peer sent: the
judge's messages are its own words), and tensors are rebuilt by safetensors, so what the
judge receives is always an exact ``torch.Tensor`` whatever the sandbox sent.
"""

from __future__ import annotations

import json
import math
import struct
from collections import OrderedDict

MAGIC = b"GRDR"
#: A frame between the judge and the sandbox's worker server itself (``grader.sandbox.worker_server``), never
#: relayed to or from a worker: ``fresh``, ``greet``, ``worker``, ``lost``.
SERVER_MAGIC = b"GRDS"
_HEADER = struct.Struct(">4sI")
FRAME_HEADER_BYTES = _HEADER.size  # MAGIC and the payload length: what precedes a payload
_JSON_LEN = struct.Struct(">I")

MAX_FRAME_BYTES = 256 * 1024 * 1024  # the protocol's ceiling in either direction; readers may cap lower
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 32
MAX_TENSORS = 4096
_READ_CHUNK = 1024 * 1024  # what one read asks for: a body arrives into one buffer, not a list of copies


class ProtocolError(Exception):
    """The peer sent something that is not a well-formed frame or value."""


class FrameTooLarge(ProtocolError):
    """A frame's header announced more bytes than the reader accepts; its body was left unread.

    The stream is out of sync after this (the body is still coming), so the reader's
    peer must be discarded, never read from again.
    """

    def __init__(self, size: int, limit: int):
        self.size = size
        self.limit = limit
        super().__init__(f"frame of {size} bytes exceeds the cap of {limit}")


class Opaque:
    """Stands in for a non-plain object the sandbox returned: its type name and a capped repr.

    It compares equal to nothing (not even another Opaque), so a candidate's
    "always equal" object can never satisfy an assertion.
    """

    __slots__ = ("type_name", "repr")

    def __init__(self, type_name: str, repr: str):
        self.type_name = type_name
        self.repr = repr

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    __hash__ = None

    def __repr__(self):
        return f"<opaque {self.type_name}: {self.repr}>"


def _torch():
    import torch  # imported lazily: the judge's CLI process should not pay for torch

    return torch


# ---------------------------------------------------------------- encoding


def _encode_value(value, tensors: dict, depth: int, strict: bool):
    if depth > MAX_DEPTH:
        raise ProtocolError(f"value nested deeper than {MAX_DEPTH} levels")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        if math.isfinite(value):
            return value
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if type(value) in (list, tuple):
        items = [_encode_value(v, tensors, depth + 1, strict) for v in value]
        return items if type(value) is list else {"$tuple": items}
    if type(value) in (dict, OrderedDict):  # OrderedDict: every state_dict
        out = {}
        for k, v in value.items():
            if type(k) is not str or k.startswith("$"):
                if strict:
                    raise ProtocolError(f"dict keys must be plain strings not starting with '$', got {k!r}")
                return _opaque(value)
            out[k] = _encode_value(v, tensors, depth + 1, strict)
        return out
    torch = _torch()
    if type(value) is torch.Tensor or (type(value) is torch.nn.Parameter):
        if len(tensors) >= MAX_TENSORS:
            raise ProtocolError(f"more than {MAX_TENSORS} tensors in one message")
        name = f"t{len(tensors)}"
        tensors[name] = value.detach().to("cpu").contiguous().clone()
        return {"$tensor": name}
    if type(value) is torch.dtype:
        return {"$dtype": str(value).removeprefix("torch.")}
    if type(value) is Opaque:  # a probe's own description of a value: sent as the description it is
        return {"$object": str(value.type_name)[:200], "repr": str(value.repr)[:200]}
    if strict:
        raise ProtocolError(f"cannot send a {type(value).__name__}: only plain data and tensors cross")
    return _opaque(value)


def _opaque(value) -> dict:
    try:
        text = repr(value)
    except BaseException as e:  # a hostile __repr__ must not break the worker
        text = f"<repr raised {type(e).__name__}>"
    return {"$object": type(value).__name__, "repr": text[:200]}


def encode(message: dict, *, strict: bool = True, magic: bytes = MAGIC) -> bytes:
    """Encode a message (a dict of plain data and tensors) into one frame.

    ``strict=False`` (the worker, encoding candidate results) turns non-plain
    objects into opaque descriptors instead of refusing them. ``magic``: :data:`SERVER_MAGIC` for a frame to
    or from the worker server itself.
    """
    tensors: dict = {}
    header = _encode_value(message, tensors, 0, strict)
    body = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    blob = b""
    if tensors:
        from safetensors.torch import save

        blob = save(tensors)
    payload = _JSON_LEN.pack(len(body)) + body + blob
    if len(payload) > MAX_FRAME_BYTES:
        raise ProtocolError(f"message of {len(payload)} bytes exceeds {MAX_FRAME_BYTES}")
    return _HEADER.pack(magic, len(payload)) + payload


# ---------------------------------------------------------------- decoding


def _decode_value(value, tensors: dict, depth: int):
    if depth > MAX_DEPTH:
        raise ProtocolError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        return [_decode_value(v, tensors, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1 and "$tensor" in value:
        try:
            return tensors[value["$tensor"]]
        except (KeyError, TypeError):
            raise ProtocolError("a reference to a tensor the message does not carry") from None
    if len(value) == 1 and "$tuple" in value and isinstance(value["$tuple"], list):
        return tuple(_decode_value(v, tensors, depth + 1) for v in value["$tuple"])
    if len(value) == 1 and value.get("$float") in ("nan", "inf", "-inf"):
        return float(value["$float"])
    if len(value) == 1 and isinstance(value.get("$dtype"), str):
        dtype = getattr(_torch(), value["$dtype"], None)
        if not isinstance(dtype, _torch().dtype):
            raise ProtocolError("a dtype torch does not have")
        return dtype
    if set(value) == {"$object", "repr"}:
        return Opaque(str(value["$object"])[:200], str(value["repr"])[:200])
    if any(k.startswith("$") for k in value):
        raise ProtocolError("a tagged value of no known kind")
    return {k: _decode_value(v, tensors, depth + 1) for k, v in value.items()}


def _reject_constant(name):
    raise ProtocolError(f"bare {name} in JSON; non-finite floats must be tagged")


def decode(payload) -> dict:
    """Decode one frame's payload (without the 8-byte frame header): bytes or a bytearray."""
    view = memoryview(payload)
    if len(view) < _JSON_LEN.size:
        raise ProtocolError("payload shorter than its length prefix")
    (n,) = _JSON_LEN.unpack_from(view)
    if n > MAX_JSON_BYTES or _JSON_LEN.size + n > len(view):
        raise ProtocolError(f"JSON header length {n} is out of bounds")
    start = _JSON_LEN.size + n
    return _decode_parts(bytes(view[_JSON_LEN.size:start]), bytes(view[start:]))


def _decode_parts(header_json, blob: bytes) -> dict:
    """Decode a payload's JSON header and its safetensors blob (read separately, so each is copied once)."""
    try:
        header = json.loads(header_json, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise ProtocolError(f"JSON header does not parse: {e}") from None
    tensors = {}
    if blob:
        from safetensors.torch import load

        try:
            tensors = load(blob)  # the tensors share the per-tensor buffers safetensors makes: no further copy
        except Exception as e:
            raise ProtocolError(f"tensor blob is not valid safetensors ({type(e).__name__})") from None
        if len(tensors) > MAX_TENSORS:
            raise ProtocolError(f"more than {MAX_TENSORS} tensors in one message")
    message = _decode_value(header, tensors, 0)
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("a message must be an object with a string 'type'")
    return message


def read_exactly(read, n: int) -> bytearray:
    """Read ``n`` bytes with ``read(k)`` into one buffer; EOFError if the stream ends first.

    The buffer is allocated once and filled through a memoryview, in reads of at most
    ``_READ_CHUNK``: a body never exists as a list of chunks and a joined copy at once.
    """
    buffer = bytearray(n)
    view = memoryview(buffer)
    got = 0
    while got < n:
        chunk = read(min(n - got, _READ_CHUNK))
        if not chunk:
            raise EOFError(f"stream ended after {got} of {n} bytes")
        view[got:got + len(chunk)] = chunk
        got += len(chunk)
    return buffer


def read_header(read) -> tuple[bytes, int]:
    """A frame's magic and payload length (the 8-byte header), unchecked; EOFError at the end of the stream."""
    return _HEADER.unpack(read_exactly(read, _HEADER.size))


def frame_header(magic: bytes, length: int) -> bytes:
    return _HEADER.pack(magic, length)


def read_server_frame(read, max_bytes: int = 1024 * 1024) -> dict:
    """A frame of the worker server's (:data:`SERVER_MAGIC`): small, never relayed; a bad one is a
    :class:`ProtocolError`."""
    magic, length = read_header(read)
    if magic != SERVER_MAGIC:
        raise ProtocolError("expected a frame of the worker server")
    if length > max_bytes:
        raise FrameTooLarge(length, max_bytes)
    return decode(read_exactly(read, length))


def read_frame(read, max_bytes: int = MAX_FRAME_BYTES) -> dict:
    """Read and decode one frame from a ``read(n) -> bytes`` callable.

    A frame announcing more than ``max_bytes`` raises :class:`FrameTooLarge` after
    the 8-byte header, with nothing of its body read. The body is read in two parts,
    the JSON header and the tensor blob, so the blob is turned into ``bytes`` (what
    safetensors takes) once, without a second copy of the whole payload beside it.
    """
    magic, length = _HEADER.unpack(read_exactly(read, _HEADER.size))
    if magic != MAGIC:
        raise ProtocolError("bad frame magic: something other than the worker wrote to the channel")
    if length > min(max_bytes, MAX_FRAME_BYTES):
        raise FrameTooLarge(length, min(max_bytes, MAX_FRAME_BYTES))
    if length < _JSON_LEN.size:
        raise ProtocolError("payload shorter than its length prefix")
    (n,) = _JSON_LEN.unpack(read_exactly(read, _JSON_LEN.size))
    if n > MAX_JSON_BYTES or _JSON_LEN.size + n > length:
        raise ProtocolError(f"JSON header length {n} is out of bounds")
    header_json = read_exactly(read, n)
    blob = read_exactly(read, length - _JSON_LEN.size - n)
    return _decode_parts(header_json, _as_bytes(blob))


def _as_bytes(buffer: bytearray) -> bytes:
    """``bytes(buffer)``, emptying ``buffer`` at once, so the two copies coexist only for the copy itself."""
    out = bytes(buffer)
    buffer.clear()
    return out
