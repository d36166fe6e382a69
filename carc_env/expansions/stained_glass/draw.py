"""How Stained Glass is drawn (the plug-in's drawing part): each player's windows beside the board.

* Status lines (text header and picture panel), one for the bag and the
  thieves, then one per player (with the player's colour swatch in the
  picture)::

      Stained glass: bag 17 tokens; thieves: P0 at (1,0) r1
      P0 glass: W1 [ab.] W2 [..C] W3 [...] W4 [...] | complete: -
      P1 glass: W1 [abc] W2 [abc] W3 [a..] W4 [...] | complete: W1, W2, W1+W2

  Each basic window shows its three kinds ``a b c`` in order: ``.`` not held,
  the lower-case letter for one copy, the capital for two (the second window
  of that kind is being built too).  ``complete`` lists the windows the
  player's tokens complete now, smallest first.
* Picture, in the side panel below the status lines: per player a row of the
  four basic windows, three glass panes each, coloured when the kind is held
  (the pane's lower half too when both copies are), framed in gold when the
  basic window is finished; a gold bar under the longest run of finished
  basic windows (the biggest window the player could score).
* On the board, a thief's meeple stands in a dark ring (a road follower that
  stole); the text board shows thieves as ordinary road followers (the
  header lists them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.actions import Pass
from ...render.expansions import Canvas, Choice, Decision, PanelBlock, StatusLine, icon, segment_point
from ...render.expansions import Drawing as BaseDrawing
from ...render.geometry import CENTRE, tile_geometry
from ...render.image import DIM_TEXT, TEXT_COLOUR, font, player_colour, text_width
from .rules import (
    KEY,
    STEAL_PHASE,
    THIEF_PHASE,
    WINDOW_PHASE,
    GlassState,
    PlaceThief,
    ScoreWindow,
    Steal,
    thieves,
    token_set,
)
from .tokens import basic_copies, complete_shapes

if TYPE_CHECKING:  # pragma: no cover
    from ...core.game import Game

LEAD = (58, 58, 66)  # the lead came of an unfinished window
GOLD = (255, 200, 36)
THIEF_RING = (40, 20, 60)
EMPTY_PANE = (84, 90, 104)
# Glass colours: per basic window, one per kind (a, b, c).
GLASS = (
    ((214, 48, 58), (240, 120, 60), (250, 176, 70)),
    ((40, 96, 214), (70, 160, 230), (120, 210, 240)),
    ((40, 160, 80), (120, 200, 70), (190, 230, 110)),
    ((130, 60, 190), (190, 90, 200), (230, 150, 220)),
)


PROMPTS = {
    THIEF_PHASE: "Your cloister tile has roads: you may put thieves on them (click a road); each steals a glass token.",
    STEAL_PHASE: "Your thief steals: pick a glass token of another player.",
    WINDOW_PHASE: "Your tokens complete a window: score one now, or keep building.",
}
PASS_LABELS = {THIEF_PHASE: "No (more) thieves", STEAL_PHASE: "Steal nothing", WINDOW_PHASE: "Keep building"}
PASS_TIPS = {
    THIEF_PHASE: "Put no more thieves on this tile's roads",
    STEAL_PHASE: "Give this steal up",
    WINDOW_PHASE: "Score no window now: the tokens stay with you for a bigger window",
}


def _thief_icon(player: int) -> str:
    def paint(d: Any) -> None:
        d.ellipse([2, 2, 30, 30], fill=THIEF_RING, outline=(0, 0, 0))
        d.meeple(player, 6, 5, 21)

    return icon(paint)


def _token_icon(w: int | None, j: int | None) -> str:
    """A glass token: its pane in the window's glass colour, lead came round it (grey: unknown kind)."""

    def paint(d: Any) -> None:
        d.rectangle([6, 1, 26, 31], fill=LEAD, outline=GOLD if w is None else LEAD, width=2)
        colour = EMPTY_PANE if w is None or j is None else GLASS[w % len(GLASS)][j % 3]
        d.rectangle([9, 4, 23, 28], fill=colour)
        if w is None:
            d.text((12, 8), "?", fill=TEXT_COLOUR, font=font(14))

    return icon(paint)


def _window_icon(windows: list[int]) -> str:
    """A window of neighbouring basic windows, each three panes of its glass."""

    def paint(d: Any) -> None:
        n = len(windows)
        u = 30 / (3 * n)
        d.rectangle([0, 4, 32, 28], fill=LEAD, outline=GOLD, width=2)
        for i, w in enumerate(windows):
            for j in range(3):
                x = 1 + (3 * i + j) * u
                d.rectangle([x + 0.5, 6, x + u - 0.5, 26], fill=GLASS[w % len(GLASS)][j])

    return icon(paint)


def window_text(counts: list[int], kinds: range) -> str:
    """``[ab.]``: one character per kind of a basic window (``.`` none, ``a`` one copy, ``A`` two)."""
    out = []
    for j, k in enumerate(kinds):
        letter = "abcdefghij"[j]
        out.append("." if counts[k] == 0 else letter if counts[k] == 1 else letter.upper())
    return "[" + "".join(out) + "]"


class Drawing(BaseDrawing):
    """The bag, the thieves, and every player's windows."""

    vector = True

    def __init__(self, rules: Any) -> None:
        super().__init__(rules)
        self.tokens = token_set()
        ts = self.tokens
        self.window_kinds = [
            range(ts.window_of.index(w), ts.window_of.index(w) + len(b.tokens)) for w, b in enumerate(ts.windows)
        ]

    def status_lines(self, game: Game) -> list[StatusLine]:
        st: GlassState = game.ext[KEY]
        ts = self.tokens
        bag = len(st.forced) + len(st.pool)
        th = ", ".join(f"P{p} at ({x},{y}) {seg}" for p, x, y, seg in thieves(game))
        out = [StatusLine(f"Stained glass: bag {bag} token{'s' * (bag != 1)}; thieves: {th or '-'}")]
        for p in range(game.num_players):
            held = st.held[p]
            wins = " ".join(f"{w.id} {window_text(held, self.window_kinds[i])}" for i, w in enumerate(ts.windows))
            done = ", ".join(ts.shapes[i].name for i in complete_shapes(ts, held))
            out.append(StatusLine(f"P{p} glass: {wins} | complete: {done or '-'}", p))
        return out

    def draw_image(self, game: Game, canvas: Canvas) -> None:
        st: GlassState = game.ext[KEY]
        if not st.thieves:
            return
        d = canvas.pen
        tp = canvas.tile_px
        size = max(8, round(0.36 * tp))  # the meeple sprite's size (render.image)
        for node, p in st.thieves.items():
            if game.followers.get(node) != p:
                continue
            x, y, t, r, base = game.placements[game.node_tile[node]]
            if not (canvas.x0 <= x <= canvas.x1 and canvas.y0 <= y <= canvas.y1):
                continue
            ax, ay = tile_geometry(game.rules.tiles[t], r).anchors.get(node - base, CENTRE)
            ox, oy = canvas.cell_origin(x, y)
            cx, cy = ox + ax * tp, oy + ay * tp - 0.06 * tp
            rr = 0.62 * size
            with d.group("glass-thief", player=p, x=x, y=y):
                d.ellipse([cx - rr, cy - rr, cx + rr, cy + rr], fill=THIEF_RING, outline=(0, 0, 0))

    def decision(self, game: Game, where: Canvas) -> Decision | None:
        phase = game.phase
        if phase not in PROMPTS:
            return None
        p = game.player
        st: GlassState = game.ext[KEY]
        out = []
        for a in game.legal_actions():
            text = game.action_text(a)
            if type(a) is PlaceThief:
                x, y, t, _, _ = game.placements[-1]
                seg = game.rules.tiles[t].segment_index(a.segment)
                out.append(Choice(text, f"thief on road {a.segment}", f"Put one of your followers on road {a.segment} "
                                  f"at ({x},{y}) as a thief: it steals a glass token this turn, then stays on the "
                                  "road as a follower", _thief_icon(p), point=segment_point(game, where, x, y, seg)))  # fmt: skip
            elif type(a) is Steal:
                out.append(self._steal_choice(game, a, text, st))
            elif type(a) is ScoreWindow:
                out.append(self._window_choice(game, a, text))
            elif type(a) is Pass:
                out.append(Choice(text, PASS_LABELS[phase], PASS_TIPS[phase], passes=True))
        return Decision(phase, PROMPTS[phase], tuple(out))

    def _steal_choice(self, game: Game, a: Steal, text: str, st: GlassState) -> Choice:
        ts = self.tokens
        group = f"from P{a.victim}"
        if a.token is None:
            n = sum(st.held[a.victim])
            return Choice(text, f"a random token of P{a.victim}", f"Take a random one of P{a.victim}'s {n} tokens",
                          _token_icon(None, None), group=group)  # fmt: skip
        k = ts.kinds.index(a.token)
        w = ts.window_of[k]
        j = k - self.window_kinds[w].start
        mine = st.held[game.player][k]
        return Choice(text, a.token, f"Steal glass token {a.token} (window {ts.windows[w].id}, pane "
                      f"{'abc'[j % 3]}) from P{a.victim}, who holds {st.held[a.victim][k]}; you hold {mine}",
                      _token_icon(w, j), group=group)  # fmt: skip

    def _window_choice(self, game: Game, a: ScoreWindow, text: str) -> Choice:
        ts = self.tokens
        shape = ts.shapes[ts.shape_index(a.shape)]
        after = game.clone()  # the points exactly as the rules give them (options included)
        p = game.player
        after.apply(text)
        pts = after.scores[p] - game.scores[p]
        tokens = " ".join(ts.kinds[k] for k in shape.kinds)
        return Choice(text, f"{a.shape}: {pts} pts", f"Score window {a.shape} ({tokens}) now for {pts} points; "
                      "its tokens go back into the bag", _window_icon(list(shape.windows)))  # fmt: skip

    def panel_block(self, game: Game, font_px: int) -> PanelBlock:
        ts = self.tokens
        n = game.num_players
        f = font(font_px)
        u = max(7, round(0.95 * font_px))  # pane width; a pane is 2u high
        gap = max(4, u // 2)
        label_w = text_width(f, "P0") + gap
        win_w = 3 * u + 2
        width = label_w + len(ts.windows) * (win_w + gap)
        row_h = 2 * u + 2 + gap + 3
        title_h = font_px + 6
        height = title_h + n * row_h

        def draw(d: Any, x: int, y: int) -> None:
            d.text((x, y), "Windows (gold: finished)", fill=DIM_TEXT, font=f)
            st: GlassState = game.ext[KEY]
            for p in range(n):
                top = y + title_h + p * row_h
                held = st.held[p]
                d.text((x, top + u - font_px // 2), f"P{p}", fill=TEXT_COLOUR, font=f)
                d.rectangle([x + label_w - gap + 1, top + 2, x + label_w - 3, top + 2 * u], fill=player_colour(p))
                done = basic_copies(ts, held)
                for w in range(len(ts.windows)):
                    left = x + label_w + w * (win_w + gap)
                    frame = GOLD if done[w] else LEAD
                    d.rectangle(
                        [left, top, left + win_w, top + 2 * u + 2], fill=LEAD, outline=frame, width=2 if done[w] else 1
                    )
                    for j, k in enumerate(self.window_kinds[w]):
                        px0, py0 = left + 1 + j * u, top + 1
                        colour = GLASS[w % len(GLASS)][j % 3]
                        upper = colour if held[k] >= 1 else EMPTY_PANE
                        lower = colour if held[k] >= 2 else EMPTY_PANE
                        d.rectangle([px0 + 1, py0 + 1, px0 + u - 1, py0 + u], fill=upper)
                        d.rectangle([px0 + 1, py0 + u + 1, px0 + u - 1, py0 + 2 * u], fill=lower)
                # the biggest window the player could score: a gold bar under its basic windows
                runs = [ts.shapes[i] for i in complete_shapes(ts, held)]
                if runs:
                    best = max(runs, key=lambda s: (s.size, -s.windows[0]))
                    a = x + label_w + best.windows[0] * (win_w + gap)
                    b = x + label_w + best.windows[-1] * (win_w + gap) + win_w
                    d.rectangle([a, top + 2 * u + 4, b, top + 2 * u + 5], fill=GOLD)

        return PanelBlock(width, height, draw, vector=True)


__all__ = ["Drawing", "window_text"]
