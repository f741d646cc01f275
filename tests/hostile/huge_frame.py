"""Answers every call with a 240 MB tensor, streamed straight into the protocol channel.

It takes over the worker's ``send`` (the whole sandbox process is the candidate's) and
writes a well-formed result frame whose value is one 240 MB float32 tensor, in 1 MB
pieces, so the sandbox itself needs almost no memory: only the judge would pay for it.
"""
import io
import json
import os
import struct
import sys

SIZE = 240 * 1024 * 1024
_PIECE = b"\0" * (1024 * 1024)


def _worker():
    frame = sys._getframe()
    while frame is not None and type(frame.f_locals.get("self")).__name__ != "Worker":
        frame = frame.f_back
    return frame.f_locals["self"]


class _Fd:
    def __init__(self, fd):
        self.fd = fd

    def write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


def _channel(send):
    """The worker's protocol channel: the file or descriptor its ``send`` writes to."""
    for cell in send.__closure__:
        held = cell.cell_contents
        if isinstance(held, io.FileIO):
            return held
        if type(held) is int and held > 2:
            return _Fd(held)
    raise LookupError("no channel")


def _stream_huge_result(out, message):
    header = json.dumps({"type": "result", "id": message.get("id"), "ok": True, "value": {"$tensor": "t0"},
                         "output": "", "output_dropped": 0, "forbidden": []}).encode()
    tensor = json.dumps({"t0": {"dtype": "F32", "shape": [SIZE // 4], "data_offsets": [0, SIZE]}}).encode()
    blob_head = struct.pack("<Q", len(tensor)) + tensor
    payload_len = 4 + len(header) + len(blob_head) + SIZE
    out.write(b"GRDR" + struct.pack(">I", payload_len) + struct.pack(">I", len(header)) + header + blob_head)
    for _ in range(SIZE // len(_PIECE)):
        out.write(_PIECE)


def scale(x, factor):
    worker = _worker()
    if not getattr(worker, "huge", False):
        out = _channel(worker.send)
        original = worker.send

        def send(message, strict=True):
            if message.get("type") == "result":
                _stream_huge_result(out, message)
            else:
                original(message, strict)

        worker.send, worker.huge = send, True
    return x * 0
