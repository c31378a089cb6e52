"""Where the reader's prompt KV comes from: the instruction held between calls (else read from
the file an earlier process wrote, else computed and written), then the excerpt's opening
segments (answer/excerpts.py) from what the model still holds, from the KV tree's nodes, or
computed, in that order. A node is put back at the positions it was computed at (nothing
moves) after the same tokens it was computed after, so a verdict is the same with it as
without it (tests/assistant/answer/test_reader_kv.py)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from assistant.kv.prompt_cache import PIECE
from assistant.llm.model_file import LLMError
from assistant.llm.runtime import LocalLLM
from cache.files import replace_atomically
from cache.kv_tree import BUILD, KVTree, segment_hash

log = logging.getLogger(__name__)
DIGEST = 32  # the sha256 that ends an instruction's KV file


class ReaderKV:
    def __init__(self, llm: LocalLLM, kv_dir: Path | None, nodes: KVTree | None) -> None:
        self.llm = llm
        self.kv_dir = kv_dir  # where the instruction's KV is kept for the next process
        self.nodes = nodes  # the KV tree under the reader model's fingerprint, or none
        self.restored = 0  # segments put back from nodes (a bench counts them)

    def instruction(self, prefix: Sequence[int]) -> None:
        """The model holds the instruction's KV: kept from the last call, else read from
        `kv_dir` (written by an earlier process: a one-shot `ask` computes only its own
        prompt), else computed and written there. A file that does not fit, or is not as written
        (its sha256), is computed again."""
        prefix = list(prefix)
        if self.llm.held_tokens()[: len(prefix)] == prefix:
            return
        name = hashlib.sha256(str(prefix).encode()).hexdigest()[:16]
        path = self.kv_dir / f"{self.llm.fingerprint}-{name}.kv" if self.kv_dir else None
        if path is not None and path.is_file():
            try:
                self.llm.restore_ranges([unsealed(path.read_bytes())], prefix)
                return
            except (OSError, LLMError) as exc:
                log.warning("%s: the reader's cached instruction is recomputed (%s)", path, exc)
        self.llm.reset()
        self.llm.eval(prefix)
        if path is not None:
            blob = self.llm.save_range(0, len(prefix))
            replace_atomically(path, lambda tmp: tmp.write_bytes(sealed(blob)))
            self._sweep()

    def _sweep(self) -> None:
        """Removes the instruction files of another llama.cpp build (or named before builds
        were, llm/model_file.py kv_name): no process of this build reads them again."""
        build = self.llm.fingerprint.partition(BUILD)[2]
        for old in self.kv_dir.glob("*.kv") if self.kv_dir else ():
            if old.name.partition("-")[0].partition(BUILD)[2] != build:
                try:
                    old.unlink(missing_ok=True)
                except OSError as exc:
                    log.warning("%s: another build's instruction KV is kept (%s)", old, exc)

    def hold(self, prefix: Sequence[int], segments: Sequence[Sequence[int]]) -> None:
        """The model holds `prefix` (which it holds already: `instruction`) and then
        `segments`, and nothing after: what it holds of them is kept, a segment the tree has
        restored, the rest evaluated."""
        target = [*prefix, *(t for seg in segments for t in seg)]
        same = common(self.llm.held_tokens(), target)
        if same < len(prefix):
            raise ValueError("the reader's instruction is not held")
        self.llm.truncate(same)
        path, start = [segment_hash(prefix)], len(prefix)
        for seg in segments:
            path.append(segment_hash(seg))
            end = start + len(seg)
            if end > same:
                if start < same:  # held in part: computed whole, as a node would be
                    self.llm.truncate(start)
                if not self._restored(path, seg, start):
                    self.llm.eval(list(seg))
                same = end
            start = end

    def _restored(self, path: list[str], seg: Sequence[int], start: int) -> bool:
        node = self.nodes.node_blob(path) if self.nodes is not None else None
        if node is None or node[1] != start + len(seg):
            return False
        try:
            self.llm.append_range(node[0], list(seg), start)
        except LLMError as exc:  # a blob of another build or shape: computed instead
            log.warning("a reader KV node is recomputed (%s)", exc)
            self.llm.truncate(start)
            return False
        self.restored += 1
        return True

    def keep(
        self, prefix: Sequence[int], segments: Sequence[Sequence[int]], check: Callable[[], None]
    ) -> int:
        """The nodes [prefix, segments[0]], [prefix, segments[0], segments[1]] … the tree lacks,
        computed and stored (the night's), PIECE tokens an eval; `check` is called before each
        piece, and may raise to step aside (the node is then computed again next time).
        Returns how many were stored."""
        if self.nodes is None:
            return 0
        made, path = 0, [segment_hash(prefix)]
        for depth, seg in enumerate(segments):
            path.append(segment_hash(seg))
            if self.nodes.has_blob(path):
                continue
            self.hold(prefix, segments[:depth])
            start = self.llm.n_past
            for at in range(0, len(seg), PIECE):  # a question waits a piece at most
                check()
                self.llm.eval(list(seg[at : at + PIECE]))
            blob = self.llm.save_range(start, start + len(seg))
            made += self.nodes.store(list(path), start + len(seg), blob)
        return made


def sealed(blob: bytes) -> bytes:
    """The instruction's KV as its file holds it: followed by its sha256."""
    return bytes(blob) + hashlib.sha256(blob).digest()


def unsealed(data: bytes) -> bytes:
    """The KV a file holds; LLMError where it is not what was written (a byte changed on disk
    would load, and every verdict would read the damaged KV), or was written without its
    sha256 by an earlier version."""
    blob, digest = data[:-DIGEST], data[-DIGEST:]
    if len(data) <= DIGEST or hashlib.sha256(blob).digest() != digest:
        raise LLMError("damaged on disk: its sha256 does not match")
    return blob


def common(a: Sequence[int], b: Sequence[int]) -> int:
    """The length of the longest common prefix of `a` and `b`."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
