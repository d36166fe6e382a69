#!/usr/bin/env python
"""Turn a JSON game record into a PNG of the final board and/or an animated GIF.

Usage::

    python scripts/replay.py RECORD.json --png final.png --gif game.gif [--tile-px 32] [--every 2]

The record is the JSON written by ``carc_env.core.record.save_record``.  The
whole record is replayed (and its final scores checked) before anything is
drawn; a missing, malformed or non-replaying record exits with status 2 and a
message saying what is wrong, and so does a bad argument (``--png`` into a
missing folder, ``--tile-px 4``, ``--every 0``), before anything is replayed:
one line naming the argument, the value and what is allowed.  ``--text`` also
prints the final board as text.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

try:
    import carc_env  # noqa: F401
except ImportError:  # run from a checkout without installing: use the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import carc_env  # noqa: F401

from agents import cli
from carc_env.core.expansion import ConfigError
from carc_env.core.record import RecordError, load_record, replay
from carc_env.render import frames_from_record, render_image, render_text, save_gif, save_png


def _parser() -> argparse.ArgumentParser:
    p = cli.Parser(
        prog="replay.py",
        description="Render a carc_env JSON game record as a PNG of the final board and/or an animated GIF.",
    )
    p.add_argument("record", type=Path, help="game record (JSON from carc_env.core.record.save_record)")
    p.add_argument("--png", type=cli.output_file, help="write the final board to this PNG file (its folder must exist)")
    p.add_argument(
        "--gif", type=cli.output_file, help="write an animation of the game (one frame per placed tile) to this GIF"
    )
    p.add_argument(
        "--tile-px",
        type=cli.int_range(8, 512),
        default=None,
        help="pixels per tile, 8..512 (default: 64 for the PNG, 32 for the GIF)",
    )
    p.add_argument(
        "--every",
        type=cli.int_range(1),
        default=1,
        help="GIF: keep every K-th placement frame (default 1; the last is always kept)",
    )
    p.add_argument(
        "--duration-ms", type=cli.int_range(1), default=300, help="GIF: milliseconds per frame (default 300)"
    )
    p.add_argument("--text", action="store_true", help="also print the final board as text")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.png is None and args.gif is None and not args.text:
        parser.error("nothing to do: give --png, --gif and/or --text")

    try:
        record = load_record(args.record)
        game = replay(record)
    except (RecordError, ConfigError) as exc:
        return cli.fail("replay.py", exc)
    except (TypeError, KeyError, AttributeError, ValueError) as exc:  # structurally broken JSON content
        return cli.fail("replay.py", f"{args.record}: corrupt game record ({type(exc).__name__}: {exc})")

    scores = ", ".join(f"P{p} {s}" for p, s in enumerate(game.scores))
    print(
        f"{args.record}: {len(game.placements)} tiles on the board, scores {scores}" + (" (final)" if game.over else "")
    )
    if args.text:
        print(render_text(game), end="")
    if args.png is not None:
        save_png(render_image(game, tile_px=args.tile_px or 64), args.png)
        print(f"wrote {args.png}")
    if args.gif is not None:
        t0 = time.perf_counter()

        def progress(i: int, n: int) -> None:
            if i == n or i % 10 == 0:
                print(f"  rendered frame {i}/{n}", flush=True)

        frames = frames_from_record(record, every=args.every, tile_px=args.tile_px or 32, progress=progress)
        save_gif(frames, args.gif, duration_ms=args.duration_ms)
        size_kb = args.gif.stat().st_size / 1024
        print(f"wrote {args.gif}: {len(frames)} frames, {size_kb:.0f} KiB in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
