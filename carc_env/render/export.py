"""PNG / GIF export and frames from a JSON game record.

Contract
--------
* ``save_png(array, path)`` writes an ``(H, W, 3)`` uint8 array as PNG.
* ``save_gif(frames, path, duration_ms=400, final_ms=2000)`` writes an
  animated GIF (looping) with one shared palette, so colours do not flicker
  and Pillow stores only the changed part of each frame.
* ``frames_from_record(record, every=1, tile_px=32)`` replays a game record
  (a dict from :func:`carc_env.core.record.to_record` or a path to its JSON
  file) and renders one frame at the start and one after each tile placement
  (once the turn's follower decision is made too, i.e. when the next tile is
  drawn, and at the end); ``every=k`` keeps every k-th of those frames and
  always the last one.  Every frame uses the final board's extent, so all
  frames show the same cells.  A malformed record or one that does not replay
  raises :class:`carc_env.core.record.RecordError`.  Frames whose side panel
  is narrower are padded, so all frames have the same size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from ..core.actions import IllegalActionError
from ..core.record import RecordError, load_record, replay
from .image import BACKGROUND, board_view, render_image


def _as_image(array: np.ndarray) -> Image.Image:
    a = np.asarray(array)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got shape {a.shape} dtype {a.dtype}")
    return Image.fromarray(a, "RGB")


def _pad(im: Image.Image, width: int, height: int) -> Image.Image:
    if im.size == (width, height):
        return im
    out = Image.new("RGB", (width, height), BACKGROUND)
    out.paste(im, (0, 0))
    return out


def save_png(array: np.ndarray, path: str | Path) -> None:
    """Write an ``(H, W, 3)`` uint8 image as PNG."""
    _as_image(array).save(Path(path), format="PNG", optimize=True)


def save_gif(
    frames: Iterable[np.ndarray],
    path: str | Path,
    duration_ms: int = 400,
    final_ms: int | None = 2000,
    loop: int = 0,
) -> None:
    """Write frames (``(H, W, 3)`` uint8 arrays) as an animated GIF.

    Frames smaller than the largest are padded on the right and bottom with
    the board background.
    ``final_ms`` holds the last frame longer (None: like the others);
    ``loop=0`` loops forever.
    """
    ims = [_as_image(f) for f in frames]
    if not ims:
        raise ValueError("save_gif needs at least one frame")
    W = max(im.width for im in ims)
    H = max(im.height for im in ims)
    ims = [_pad(im, W, H) for im in ims]
    # One palette for all frames, taken from a strip of a few frames spread over the game.
    picks = sorted({round(i * (len(ims) - 1) / 5) for i in range(6)})
    strip = Image.new("RGB", (W, H * len(picks)))
    for j, i in enumerate(picks):
        strip.paste(ims[i], (0, j * H))
    pal = strip.quantize(colors=255, method=Image.Quantize.MEDIANCUT)
    qs = [im.quantize(palette=pal, dither=Image.Dither.NONE) for im in ims]
    durations = [int(duration_ms)] * len(qs)
    if final_ms is not None:
        durations[-1] = int(final_ms)
    qs[0].save(
        Path(path),
        format="GIF",
        save_all=True,
        append_images=qs[1:],
        duration=durations if len(qs) > 1 else durations[0],
        loop=loop,
        optimize=False,
        disposal=1,
    )


def _load(record: Mapping[str, Any] | str | Path) -> Mapping[str, Any]:
    if isinstance(record, (str, Path)):
        return load_record(record)
    return record


def frames_from_record(
    record: Mapping[str, Any] | str | Path,
    every: int = 1,
    tile_px: int = 32,
    highlight_legal: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> list[np.ndarray]:
    """Render a recorded game as frames; see the module docstring."""
    if not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be a positive integer, got {every!r}")
    record = _load(record)
    final = replay(record)  # validates the whole record (and its final scores) first
    view = board_view(final)
    actions = list(record["actions"])
    n_place = len(final.placements)

    game = replay(record, upto=0)
    base = len(game.placements)
    total = n_place - base + 1  # the start position and one frame per placement
    wanted = {i for i in range(total) if i % every == 0} | {total - 1}
    frames: list[np.ndarray] = []

    def snap(i: int) -> None:
        if i in wanted:
            frames.append(render_image(game, tile_px=tile_px, highlight_legal=highlight_legal, view=view))
            if progress is not None:
                progress(len(frames), len(wanted))

    snap(0)
    shown = 0
    for j, text in enumerate(actions):
        try:
            game.apply(text)
        except IllegalActionError as exc:  # pragma: no cover - replay() above already checked
            raise RecordError(f"action {j} ({text!r}) does not replay: {exc}") from None
        placed = len(game.placements) - base
        if placed > shown and (game.phase == "tile" or game.over):
            shown = placed
            snap(shown)
    if shown < total - 1:  # pragma: no cover - defensive: a record ending mid-turn
        shown = total - 1
        snap(shown)
    W = max(f.shape[1] for f in frames)
    H = max(f.shape[0] for f in frames)
    return [f if f.shape[:2] == (H, W) else np.asarray(_pad(Image.fromarray(f), W, H)) for f in frames]
