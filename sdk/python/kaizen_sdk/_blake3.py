"""BLAKE3 (hash mode, 32-byte output) in plain Python.

The session's file notes carry BLAKE3 hashes in hex, so that a file noted
by one plugin (the built-in Read, in Rust) compares equal in another; the
standard library has no BLAKE3 and a component cannot load a native
extension. A straight port of the reference implementation
(github.com/BLAKE3-team/BLAKE3, reference_impl), checked against its test
vectors. It hashes about 1 MB/s natively, less in a component: enough for the
source files tools note, not for large data.
"""

from __future__ import annotations

_IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
_PERMUTATION = (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8)
_CHUNK_START = 1
_CHUNK_END = 2
_PARENT = 4
_ROOT = 8
_BLOCK_LEN = 64
_CHUNK_LEN = 1024
_M = 0xFFFFFFFF


def _schedules() -> tuple[tuple[int, ...], ...]:
    """The message word order of each of the seven rounds."""
    order = tuple(range(16))
    out = []
    for _ in range(7):
        out.append(order)
        order = tuple(order[i] for i in _PERMUTATION)
    return tuple(out)


_SCHEDULES = _schedules()


def _compress(cv: list[int], m: list[int], counter: int, block_len: int, flags: int) -> list[int]:
    """The compression function; returns the 16-word state."""
    v = [
        *cv,
        _IV[0], _IV[1], _IV[2], _IV[3],
        counter & _M, (counter >> 32) & _M, block_len, flags,
    ]  # fmt: skip
    for s in _SCHEDULES:
        # The G function on the columns, then on the diagonals, inlined:
        # this is the hot loop (writing it out on locals gains only 20%).
        for a, b, c, d, x, y in (
            (0, 4, 8, 12, m[s[0]], m[s[1]]),
            (1, 5, 9, 13, m[s[2]], m[s[3]]),
            (2, 6, 10, 14, m[s[4]], m[s[5]]),
            (3, 7, 11, 15, m[s[6]], m[s[7]]),
            (0, 5, 10, 15, m[s[8]], m[s[9]]),
            (1, 6, 11, 12, m[s[10]], m[s[11]]),
            (2, 7, 8, 13, m[s[12]], m[s[13]]),
            (3, 4, 9, 14, m[s[14]], m[s[15]]),
        ):
            va = (v[a] + v[b] + x) & _M
            vd = v[d] ^ va
            vd = ((vd >> 16) | (vd << 16)) & _M
            vc = (v[c] + vd) & _M
            vb = v[b] ^ vc
            vb = ((vb >> 12) | (vb << 20)) & _M
            va = (va + vb + y) & _M
            vd ^= va
            vd = ((vd >> 8) | (vd << 24)) & _M
            vc = (vc + vd) & _M
            vb ^= vc
            v[a], v[b], v[c], v[d] = va, ((vb >> 7) | (vb << 25)) & _M, vc, vd
    for i in range(8):
        v[i] ^= v[i + 8]
        v[i + 8] ^= cv[i]
    return v


def _words(block: bytes) -> list[int]:
    block = block.ljust(_BLOCK_LEN, b"\0")
    return [int.from_bytes(block[i : i + 4], "little") for i in range(0, _BLOCK_LEN, 4)]


class _Node:
    """What is needed to compute a node's output: the last block's inputs."""

    __slots__ = ("cv", "block", "counter", "block_len", "flags")

    def __init__(self, cv: list[int], block: list[int], counter: int, block_len: int, flags: int) -> None:
        self.cv, self.block, self.counter, self.block_len, self.flags = cv, block, counter, block_len, flags

    def chaining_value(self) -> list[int]:
        return _compress(self.cv, self.block, self.counter, self.block_len, self.flags)[:8]

    def root_hash(self) -> bytes:
        words = _compress(self.cv, self.block, 0, self.block_len, self.flags | _ROOT)[:8]
        return b"".join(w.to_bytes(4, "little") for w in words)


def _chunk_node(chunk: bytes, counter: int) -> _Node:
    """The node of one chunk (at most 1024 bytes), up to its last block."""
    cv = list(_IV)
    blocks = [chunk[i : i + _BLOCK_LEN] for i in range(0, len(chunk), _BLOCK_LEN)] or [b""]
    flags = _CHUNK_START
    for block in blocks[:-1]:
        cv = _compress(cv, _words(block), counter, _BLOCK_LEN, flags)[:8]
        flags = 0
    last = blocks[-1]
    return _Node(cv, _words(last), counter, len(last), flags | _CHUNK_END)


def _parent_node(left: list[int], right: list[int]) -> _Node:
    return _Node(list(_IV), left + right, 0, _BLOCK_LEN, _PARENT)


class Hasher:
    """Incremental BLAKE3: ``update`` with bytes, then ``hexdigest``."""

    def __init__(self) -> None:
        self._stack: list[list[int]] = []
        self._pending = b""
        self._chunks = 0

    def update(self, data: bytes) -> "Hasher":
        data = self._pending + bytes(data)
        # Keep the last chunk back: only the final one may be the root.
        full = (len(data) - 1) // _CHUNK_LEN if data else 0
        for i in range(full):
            cv = _chunk_node(data[i * _CHUNK_LEN : (i + 1) * _CHUNK_LEN], self._chunks).chaining_value()
            self._push(cv)
        self._pending = data[full * _CHUNK_LEN :]
        return self

    def _push(self, cv: list[int]) -> None:
        # Merge completed subtrees: one per trailing 1 bit of the count.
        self._chunks += 1
        total = self._chunks
        while total & 1 == 0:
            cv = _parent_node(self._stack.pop(), cv).chaining_value()
            total >>= 1
        self._stack.append(cv)

    def digest(self) -> bytes:
        node = _chunk_node(self._pending, self._chunks)
        for left in reversed(self._stack):
            node = _parent_node(left, node.chaining_value())
        return node.root_hash()

    def hexdigest(self) -> str:
        return self.digest().hex()


def blake3_hex(data: bytes) -> str:
    """The BLAKE3 hash of ``data``, in lowercase hex."""
    return Hasher().update(data).hexdigest()
