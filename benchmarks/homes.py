"""Codex homes of other shapes for the dashboard's benchmarks (issue 14): many small
sessions, and a home into which thousands of rollouts were just copied.

- `small_history(dir, size, seed)`: many short sessions (`codex exec` from scripts and CI,
  short TUI sessions): `make_history.py --shape small` when the generator has it, else
  sessions made here from the same recordings: one recorded session's `session_meta` and
  first turn, TUI sessions with 0-2 more recorded turns, nothing grown (ids and times fresh,
  as `make_history.py` makes them). mtimes: each file's last line, as Codex leaves them.
- `bulk_copied(base, into, donor, count, seed)`: `base` copied with its mtimes, plus
  `count` rollouts of `donor` copied in with fresh mtimes (a restored backup, an `rsync`
  without `-t`): their date folders and contents are old, their mtimes now.
  With no `base`, every rollout of `donor` (the whole home with fresh mtimes).

Everything is written under the directory given (`benchmarks/out/` or a temporary one).
"""

from __future__ import annotations

import inspect
import json
import os
import random
import shutil
import time
from pathlib import Path

import harness


def small_history(home: Path, size: int, seed: int = 3, days: int = 90) -> dict:
    """A history of the small shape (built if missing); -> its manifest."""
    manifest = home / "manifest.json"
    gen = harness.load_generator()
    if manifest.exists():
        data = json.loads(manifest.read_text())
        if data.get("shape") in ("small", "small-local"):  # made by make_history.py or here
            return data
    gen.prepare(home, force=manifest.exists())
    print(f"building a {size / 2**30:.2f} GiB history of small sessions in {home} (seed {seed}) ...",
          flush=True)
    if "shape" in inspect.signature(gen.build).parameters and "small" in getattr(gen, "SHAPES", {}):
        return gen.build(home, size, days=days, seed=seed, shape="small")
    return _small_here(gen, home, size, seed, days)


def _small_here(gen, home: Path, size: int, seed: int, days: int) -> dict:
    """The generator has no small shape yet: short sessions made here (see the module)."""
    now = int(time.time())
    rng = random.Random(seed)
    recordings = gen.load_templates()
    pool = gen.output_pool(recordings, rng)
    shares, kinds = zip(*gen.session_kinds(recordings))
    files = turns = nbytes = lines = 0
    while nbytes < size:
        kind = rng.choices(kinds, shares)[0]
        recording, first = gen.pick_by_outcome(rng, kind.openers, 0.12, key=lambda x: x[1])
        blocks = [first]
        if kind.followers:
            blocks += [gen.pick_by_outcome(rng, kind.followers, 0.12) for _ in range(rng.choice((0, 0, 1, 1, 2)))]
        gaps = [int(min(max(rng.lognormvariate(4.5, 1.0), 5), 1800) * 1000) for _ in blocks[1:]]
        plan = gen.Plan(recording, blocks, [{} for _ in blocks], gaps, 0)
        start = gen.pick_start(rng, now, days, gen.duration(plan))
        session_id, text, _, end = gen.render_session(plan, start, rng, pool)
        path = gen.session_path(home, start, session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        path.write_bytes(data)
        os.utime(path, (end, end))
        files += 1
        turns += len(blocks)
        nbytes += len(data)
        lines += text.count("\n")
    manifest = {"generator": "benchmarks/homes.py", "generator_version": gen.GENERATOR_VERSION,
                "shape": "small-local", "seed": seed, "days": days, "now": now, "files": files,
                "sessions": files, "turns": turns, "bytes": nbytes, "lines": lines}
    (home / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def rollouts(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*/*/*/rollout-*.jsonl"))


def bulk_copied(base: Path | None, into: Path, donor: Path, count: int | None, seed: int = 5) -> dict:
    """`into`: `base` (mtimes kept) plus `count` of `donor`'s rollouts (None: all) copied
    with fresh mtimes; -> what it holds."""
    for path in rollouts(base) if base is not None else ():
        target = into / path.relative_to(base)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    donors = rollouts(donor)
    picked = donors if count is None else random.Random(seed).sample(donors, count)
    for path in picked:
        target = into / path.relative_to(donor)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)  # no copystat: the mtime is now
    files = rollouts(into)
    return {"files": len(files), "copied_fresh": len(picked), "bytes": sum(p.stat().st_size for p in files)}
