"""The framed protocol: exact round trips, and refusal of everything malformed."""

import io
import json
import struct

import pytest
import torch
from hypothesis import given, settings, strategies as st

from grader.wire import protocol
from grader.wire.protocol import Opaque, ProtocolError


def roundtrip(message, strict=True):
    frame = protocol.encode(message, strict=strict)
    return protocol.read_frame(io.BytesIO(frame).read)


plain = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5).filter(lambda k: not k.startswith("$")), inner, max_size=4),
    max_leaves=20,
)


def same(a, b):
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=200, deadline=None)
@given(plain)
def test_plain_values_round_trip_exactly(value):
    assert same(roundtrip({"type": "x", "v": value})["v"], value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool, torch.float16])
def test_tensors_round_trip_with_dtype_and_shape(dtype):
    t = (torch.arange(24).reshape(2, 3, 4) % 3).to(dtype)
    back = roundtrip({"type": "x", "t": t, "empty": torch.zeros(0, 5, dtype=dtype)})
    assert type(back["t"]) is torch.Tensor and back["t"].dtype == dtype and torch.equal(back["t"], t)
    assert back["empty"].shape == (0, 5)


def test_received_tensors_are_independent_copies():
    t = torch.ones(3)
    back = roundtrip({"type": "x", "a": t, "b": t})
    back["a"].add_(1)
    assert torch.equal(back["b"], torch.ones(3)) and torch.equal(t, torch.ones(3))


def test_non_contiguous_and_grad_tensors_are_sent_as_data():
    t = torch.arange(6.0, requires_grad=True).reshape(2, 3).t()
    back = roundtrip({"type": "x", "t": t})["t"]
    assert not back.requires_grad and torch.equal(back, t.detach())


def test_strict_encoding_refuses_objects():
    with pytest.raises(ProtocolError, match="cannot send a object"):
        protocol.encode({"type": "x", "v": object()})


def test_lenient_encoding_turns_objects_and_subclasses_opaque():
    class Sneaky(torch.Tensor):
        def __eq__(self, other):
            return True

    back = roundtrip({"type": "x", "v": object(), "s": torch.ones(2).as_subclass(Sneaky)}, strict=False)
    assert isinstance(back["v"], Opaque) and back["v"].type_name == "object"
    assert isinstance(back["s"], Opaque) and back["s"].type_name == "Sneaky"


def test_opaque_equals_nothing():
    o = Opaque("AlwaysEqual", "x")
    assert not (o == o) and o != o and not (o == 1)


def frame_with_header(header: bytes, blob: bytes = b"") -> bytes:
    payload = struct.pack(">I", len(header)) + header + blob
    return struct.pack(">4sI", protocol.MAGIC, len(payload)) + payload


@pytest.mark.parametrize("raw, match", [
    (b"XXXX\x00\x00\x00\x01a", "bad frame magic"),
    (struct.pack(">4sI", protocol.MAGIC, protocol.MAX_FRAME_BYTES + 1), "exceeds"),
    (frame_with_header(b'{"type": "x", "v": NaN}'), "bare NaN"),
    (frame_with_header(b'{"type": "x", "v": {"$tensor": "t9"}}'), "tensor the message does not carry"),
    (frame_with_header(b'{"type": "x", "v": {"$pickle": "..."}}'), "tagged value of no known kind"),
    (frame_with_header(b'[1, 2]'), "must be an object"),
    (frame_with_header(b'{"type": "x"}', b"not safetensors"), "not valid safetensors"),
    (frame_with_header(b'{"type": "x", "v": ' + b"[" * 40 + b"]" * 40 + b"}"), "deeper"),
    (frame_with_header(b'{"type": "x", "v": {"$dtype": "Tensor"}}'), "dtype torch does not have"),
])
def test_malformed_frames_are_refused_with_a_reason(raw, match):
    with pytest.raises(ProtocolError, match=match):
        protocol.read_frame(io.BytesIO(raw).read)


def test_truncated_stream_is_eof_not_garbage():
    frame = protocol.encode({"type": "x", "v": [1, 2, 3]})
    with pytest.raises(EOFError):
        protocol.read_frame(io.BytesIO(frame[:-3]).read)


def test_header_is_json_not_pickle():
    frame = protocol.encode({"type": "x", "v": (1, "a")})
    (n,) = struct.unpack(">I", frame[8:12])
    assert json.loads(frame[12:12 + n]) == {"type": "x", "v": {"$tuple": [1, "a"]}}


def test_state_dicts_cross_as_dicts():
    from collections import OrderedDict

    sd = torch.nn.Linear(2, 3).state_dict()
    assert isinstance(sd, OrderedDict)
    back = roundtrip({"type": "x", "sd": sd})["sd"]
    assert list(back) == ["weight", "bias"] and torch.equal(back["weight"], sd["weight"])


class HeaderOnly:
    """A stream that hands out one frame header and fails the test if anything past it is read."""

    def __init__(self, header: bytes):
        self.data, self.pos = header, 0

    def read(self, n: int) -> bytes:
        if self.pos >= len(self.data):
            pytest.fail("the reader went past the frame header")
        out = self.data[self.pos:self.pos + n]
        self.pos += len(out)
        return out


@pytest.mark.parametrize("cap", [1024, protocol.MAX_FRAME_BYTES])
def test_a_frame_over_the_cap_is_refused_from_its_header_before_its_body(cap):
    stream = HeaderOnly(struct.pack(">4sI", protocol.MAGIC, cap + 1))
    with pytest.raises(protocol.FrameTooLarge) as refused:
        protocol.read_frame(stream.read, cap)
    assert (refused.value.size, refused.value.limit) == (cap + 1, cap)
    assert stream.pos == 8


def test_a_frame_at_the_cap_is_read_and_a_caller_cannot_raise_the_protocol_ceiling():
    frame = protocol.encode({"type": "x", "t": torch.arange(64.0)})
    length = len(frame) - 8
    assert torch.equal(protocol.read_frame(io.BytesIO(frame).read, length)["t"], torch.arange(64.0))
    with pytest.raises(protocol.FrameTooLarge):
        protocol.read_frame(io.BytesIO(frame).read, length - 1)
    stream = HeaderOnly(struct.pack(">4sI", protocol.MAGIC, protocol.MAX_FRAME_BYTES + 1))
    with pytest.raises(protocol.FrameTooLarge):
        protocol.read_frame(stream.read, 2 * protocol.MAX_FRAME_BYTES)


def test_a_frame_read_in_small_pieces_comes_back_whole():
    tensor = torch.randn(3, 1000)
    stream = io.BytesIO(protocol.encode({"type": "x", "t": tensor, "s": "é"}))
    back = protocol.read_frame(lambda n: stream.read(min(n, 7)))
    assert torch.equal(back["t"], tensor) and back["s"] == "é"


def test_every_frame_kind_is_named_from_one_list():
    """Worker, server, client and the docker backend name their frames from ``protocol.Kind``, never a literal:
    a kind added at one end only is a name error, not a frame nobody expects."""
    import re
    from pathlib import Path

    grader = Path(protocol.__file__).resolve().parent.parent
    ends = ["sandbox/worker.py", "sandbox/worker_server.py", "backends/client.py", "backends/served.py",
            "backends/docker_backend.py"]
    literal = re.compile(r"""(\["type"\]|get\("type"\)|"type":)\s*(==|!=|in)?\s*\(?\s*"(?!ResultNotSendable)""")
    for end in ends:
        text = (grader / end).read_text()
        assert not literal.search(text), f"{end}: a frame kind written as a literal ({literal.search(text)[0]!r})"
    frame = protocol.encode({"type": protocol.Kind.CALL, "id": 1})
    message = protocol.read_frame(io.BytesIO(frame).read)
    assert message["type"] == protocol.Kind.CALL and type(message["type"]) is str
