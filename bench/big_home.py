"""A large home (the dev mailbox copied to ~100k mails) built once, for the commands' scale bench.

    python bench/big_home.py [--copies 48] [--eval-dir ../shared/eval]

The dev mailbox (2,118 mails) `--copies` times, every Message-ID (and reference to one) made
unique per copy, imported as one mbox into <CACHE_DIR>/big-home-xN (48 copies: 101,664 mails,
307,680 chunks: the large-home path, FTS5 + IVF). Embedding 300k chunks takes hours on 2 cores,
so each distinct chunk text is embedded once with the app's encoder and its vector stored for
every copy of it: search runs on real vectors (a copy ranks beside its twins). Prints the path;
an existing home is kept. bench/commands_scale.py measures on it (and copies it first).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

# ruff: noqa: E402
import argparse
import gzip
import re
import time
from pathlib import Path

import numpy as np
from _common import CACHE_DIR, default_eval_dir, log

from assistant.config_sections import ChunkingSettings, EmbeddingSettings
from assistant.home import open_home
from assistant.importing.importer import Importer
from assistant.knowledge.db import open_db
from assistant.knowledge.embeddings import make_embedder
from assistant.knowledge.store import KnowledgeStore

_MESSAGE_ID = re.compile(rb"^Message-ID:\s*<([^<>\s]+)>", re.IGNORECASE | re.MULTILINE)
_ANGLE_ID = re.compile(rb"<([^<>\s]+)>")


def dev_mbox(eval_dir: Path) -> Path:
    out = CACHE_DIR / "skilling-j-all.mbox"
    if not out.exists():
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.decompress((eval_dir / "mail" / "skilling-j.mbox.gz").read_bytes()))
    return out


def copied(raw: bytes, copy: str) -> bytes:
    """`raw` (mbox bytes) with every Message-ID it holds, and each reference to one, prefixed."""
    ids = set(_MESSAGE_ID.findall(raw))
    prefix = f"{copy}.".encode()
    return _ANGLE_ID.sub(
        lambda m: b"<" + prefix + m.group(1) + b">" if m.group(1) in ids else m.group(0), raw
    )


def scaled(mbox: Path, copies: int, name: str = "") -> Path:
    """`mbox` `copies` times (made once, under CACHE_DIR, as `name`.mbox), every Message-ID
    and each reference to one made unique (`copied`)."""
    out = CACHE_DIR / f"{name or f'{mbox.stem}-x{copies}'}.mbox"
    if out.exists():
        return out
    raw = mbox.read_bytes()
    if not raw.endswith(b"\n\n"):
        raw += b"\n" if raw.endswith(b"\n") else b"\n\n"
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        for i in range(copies):
            fh.write(copied(raw, f"copy{i}"))
    tmp.replace(out)
    return out


def embed_by_text(store: KnowledgeStore, batch: int = 64) -> int:
    """Each distinct chunk text embedded once; its vector stored for every chunk holding it."""
    embedder = make_embedder(EmbeddingSettings())
    rows = store.db.execute("SELECT id, content_hash, text FROM chunks ORDER BY id").fetchall()
    by_hash: dict[str, list[int]] = {}
    texts: dict[str, str] = {}
    for chunk_id, digest, text in rows:
        by_hash.setdefault(digest, []).append(chunk_id)
        texts.setdefault(digest, text)
    digests = list(texts)
    log(f"{len(rows)} chunks, {len(digests)} distinct texts to embed")
    for start in range(0, len(digests), batch):
        part = digests[start : start + batch]
        vectors = embedder.embed_batch([texts[d] for d in part])
        ids = [i for d in part for i in by_hash[d]]
        stacked = np.concatenate(
            [np.repeat(v[None], len(by_hash[d]), 0) for d, v in zip(part, vectors, strict=True)]
        )
        store.put_embeddings(embedder.name, ids, stacked)
        if start % (batch * 20) == 0:
            log(f"embedded {start + len(part)} of {len(digests)} texts")
    return len(digests)


def build(copies: int, eval_dir: Path) -> Path:
    root = CACHE_DIR / f"big-home-x{copies}"
    done = root / "BUILT"
    if done.exists():
        return root
    mbox = scaled(dev_mbox(eval_dir), copies)
    home = open_home(root)
    store = KnowledgeStore(open_db(home.knowledge_db))
    t0 = time.perf_counter()
    report = Importer(store, None, ChunkingSettings()).run([mbox], embed=False)
    seconds = time.perf_counter() - t0
    log(f"read {report.seen} mails, {report.chunks_added} chunks in {seconds:.0f} s")
    embed_by_text(store)
    log(f"embedded in {time.perf_counter() - t0:.0f} s")
    done.write_text(f"{report.seen} mails\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=48)
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    args = parser.parse_args()
    print(build(args.copies, args.eval_dir))


if __name__ == "__main__":
    main()
