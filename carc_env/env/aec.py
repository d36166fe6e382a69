"""Carcassonne as a PettingZoo AEC environment (``carcassonne_v0``).

Usage::

    import carc_env
    env = carc_env.env(num_players=2, reward="win_loss", render_mode="ansi")
    env.reset(seed=42)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            action = None
        else:
            action = env.action_space(agent).sample(obs["action_mask"])
        env.step(action)

``env(**options)`` wraps :class:`raw_env` in PettingZoo's classic wrappers
(``TerminateIllegalWrapper(illegal_reward=-1)``, ``AssertOutOfBoundsWrapper``,
``OrderEnforcingWrapper``; subclasses of PettingZoo's that read the per-step
attributes straight from the raw env, a third faster, same behaviour).
Options are listed in
:mod:`carc_env.env.options`; unknown options or bad values raise
``carc_env.ConfigError`` (a ``ValueError``) naming the option.  Where the
compiled engine (:mod:`carc_env.fast`) covers the configuration it runs the
game (option ``engine``, default ``"auto"``; ``env.unwrapped.engine`` says
``"numba"`` or ``"python"``), with identical observations, rewards and games.

Agents and turns
----------------
Agents are ``player_0 .. player_{n-1}`` (seat ``i`` = ``player_i``, seat 0
moves first).  ``agent_selection`` is always the player who must decide now
(``game.player`` of the core), which need not be the player whose turn it is:
expansions may ask other players to decide.  A turn is a sequence of
decisions: place the drawn tile, then (if a follower can go anywhere) place a
follower or pass, then any expansion phase.

``reset(seed=None, options=None)``: ``seed`` seeds the game (the same seed
gives the same draw order and game); a reset without a seed continues the
seed stream of the last seeded reset.  ``options={"draw_order": [tile ids]}``
forces the draw order (tile ids as in the tile data, e.g. ``"BA-D"``); other
keys are ignored with a warning.  ``options`` must be a dict (or None) and the
seed None or a non-negative integer; a reset that fails (a bad option, an
unknown tile id) raises ``ConfigError`` / ``ValueError`` and leaves the env as
it was (never reset, or still in the previous game).
``options={"record": rec}`` (and optionally ``"upto": k``) starts at the
position a saved game record reached, on the env's own engine
(:mod:`carc_env.env.start`).

Calling ``observe``, ``last`` or ``render`` before a successful ``reset``
raises ``RuntimeError`` (``AttributeError`` for the per-step attributes, as in
PettingZoo).

Actions
-------
One flat ``Discrete(N)`` for every agent (:mod:`carc_env.encoding.actions`):

* ``[0, 4*rows*cols)``: place the drawn tile at window cell ``(row, col)``
  turned ``rot`` quarter turns clockwise, index
  ``rot*rows*cols + row*cols + col`` (a ``(4, rows, cols)`` convolutional head
  flattens onto it); the window is re-centred on the played area every step;
* next ``max_segments + 1`` entries: put a follower on segment ``i`` of the
  tile just placed; the last entry is ``pass``;
* then one range per expansion phase, in the order of the rule set's phases
  (``env.unwrapped.codec.ranges`` lists every range).  Each phase's layout is
  documented by the ``actions`` module of the plug-in that adds it
  (``carc_env/expansions/<key>/actions.py``; e.g. the Count of Carcassonne's
  four phases in :mod:`carc_env.expansions.count.actions`).

With the default window of 27 x 27 (:data:`carc_env.encoding.DEFAULT_WINDOW`,
sized from 10,000 measured games) the base game has ``N = 2925``; with every
built-in expansion that plays with the Count (all but ``maps_germany``) and 2 players
``N = 12471`` (Stained Glass's steal range grows with the number of players).

On a printed board (``maps_germany``) the window does not move: when the
``window`` option is left out it is the board's extent, every square and
every cell of a feature printed abroad (Germany: 19 rows x 15 columns, origin
(-1, -1), ``N = 1149``), so each square keeps its row and column all game and
no placement is ever outside (:func:`carc_env.encoding.default_window`); a
``window`` smaller than the board is a ``ConfigError``.  Coordinates in the
text notation are the map file's (x = column, y = row), not the start tile's.

``obs["action_mask"]`` (``int8``) enables exactly the legal actions of the
deciding agent (all zero for the others); it is mirrored in
``info["action_mask"]`` and never all zero for the acting agent.

``step(action)`` takes an integer (a Python or numpy integer, or an integer
0-d array or tensor).  Anything else (a float such as ``2916.7``, a string, a
bool, ``None`` for an agent that must act) raises
``carc_env.core.ActionTypeError`` (an ``IllegalActionError`` and a
``TypeError``) naming the value and its type; an index outside
``0..N-1`` raises ``IllegalActionError``.  These checks are real ``if``
statements, so they hold under ``python -O`` too.  In ``raw_env`` an integer
the mask does not enable raises ``IllegalActionError`` and changes nothing
(the acting agent's pending reward included); ``env()``'s
``TerminateIllegalWrapper`` instead ends the game with -1 for that agent, as
in every PettingZoo classic env.

Observations, masks and infos are read-only arrays: the mask is the array the
env validates the next action against and an observation dict is cached until
the next step, so writing into them would change the env
(``ValueError: assignment destination is read-only``; copy to modify).
``env.unwrapped.action_to_text(a)`` / ``action_from_text("tile 1,-2 r3")``
convert with absolute coordinates (start tile at (0, 0), x east, y south).
If a legal placement ever falls outside the window, the acting agent's info
carries ``info["placements_outside_window"] = n`` (those placements cannot be
chosen this step) and the global feature ``window_clipped`` is 1; likewise
a legal move of an expansion phase that its range cannot express this step
(a feature with no tile in the window) is reported as
``info["actions_out_of_range"] = n``.  Every built-in phase has a fixed
layout; a phase whose plug-in has no codec for it falls back to the generic
:class:`~carc_env.encoding.EnumeratedPhaseCodec` with a warning at
construction (``ActionCodec(strict=True)`` raises instead); legal actions it
cannot express are reported in ``info["actions_out_of_range"]`` too.

Observations
------------
With the option ``obs_format="classic"`` the observation is PettingZoo's
classic convention instead, ``{"observation": float32 vector, "action_mask":
int8}``, the vector being the parts below flattened and concatenated
(``board ++ globals ++ windows``; :func:`carc_env.env.wrappers.flat_layout`
gives each part's slice), for tools written for the classic games.  By
default (``obs_format="dict"``) it is
a dict; every seat-indexed quantity is relative to the observing agent:
``p0`` is the observer, ``p1`` the next player in turn order, and so on.

``"board"``: ``uint8 (channels, rows, cols)``, one cell per board square of
the window.  Channels (``raw_env.channel_names`` lists them in order; the
base game, 2 players: 54 channels):

{BOARD_CHANNELS}

Expansion channels exist only when their expansion is enabled: static
per-tile ones follow ``building_*``, dynamic ones follow
``building_neighbours``, each group in the rule set's expansion order
(``env.unwrapped.game.rules.expansions``).  Each is documented by the
``observe`` module of the plug-in that adds it
(``carc_env/expansions/<key>/observe.py``, e.g.
:mod:`carc_env.expansions.count.observe`).  Building kinds and edge kinds
that an expansion's tiles bring need no channel of their own: they appear in
``building_{kind}`` and ``edge_{S}_{kind}`` above.  For example The Royal
Gateways add ``king_gate`` / ``queen_gate`` (static: the gate tiles),
``linked_city`` (tiles of a city whose gates link several physical cities) and
``gate_waiting`` (tiles of a city whose gate waits for its partner); the
Sagrada Familia adds ``sagrada_familia`` (static: its tile) and
``sagrada_city`` (its city, while no placement may close it).  Maps - Germany's planes
(:mod:`carc_env.expansions.maps_germany.observe`): ``map_playable``,
``map_void``, ``map_large_city`` (2 once connected), ``map_town`` (2 on a
start square), ``map_border_feature`` (1 road, 2 city printed abroad) and
``map_coats_of_arms``; its printed pieces are tiles for the channels above
(their neutral sides are ``edge_{S}_interior``).

``"globals"``: ``float32`` (``raw_env.global_names``; base game, 2 players: 92):

{GLOBAL_FEATURES}

Expansion features follow ``window_clipped`` when their expansion is
enabled, in expansion order, each documented by its plug-in's ``observe``
module (like the expansion channels).

``"windows"``: ``uint8 (num_players, W)``: one row per relative seat (row 0
is the observer); the columns (``raw_env.window_names``) are the ones the
enabled plug-ins declare, in expansion order.  With Stained Glass
(:mod:`carc_env.expansions.stained_glass.observe`) ``W = 22``:
``token_{kind}`` (12 columns, token order ``G1a`` .. ``G4c``): copies of that
glass token the seat holds (0..2); ``window_{shape}`` (10 columns, ``W1`` ..
``W1+W2+W3+W4``): how many disjoint copies of that window the seat's tokens
complete now (0..2).  The tokens left in the bag are the global
``glass_bag``, the thieves the board channels ``thieves_p{i}``.  Without a
plug-in declaring columns, ``W = 12`` columns of zeros.

``"action_mask"``: see Actions.

With the option ``action_features=True`` (off by default) the one-ply action
features the example agents read are part of the observation too, computed
by either engine byte for byte (shapes fixed per configuration, unused rows
zero; ``rows`` = option ``action_feature_rows``, default 128; a legal
placement beyond them is reported as ``info["placements_without_features"]``):
``"place_index"`` ``int64 (rows,)``, the action indices of the legal in-window
placements of the drawn tile (ascending); ``"place_features"`` ``float32
(rows, 18)``, one row per placement; ``"spots"`` ``float32 (S, 16)``, row
``i`` for segment ``i`` of the tile just placed (follower action ``i``).  Both
are seen from the observer; outside its tile (follower) decision the rows are
zero.

{PLACEMENT_FEATURES}

{SPOT_FEATURES}

The observation layout above (names, order, meanings) is
:mod:`carc_env.encoding.spec`, which the encoder and the compiled engine read.

Rewards and the end of the game
-------------------------------
``reward=`` (defined in :mod:`carc_env.env.match`; ``reward_scale`` default 0.01):

* ``"win_loss"`` (default): at the end, +1 to the sole winner and -1 to the
  others; players tied for the best score get 0 each (the rest -1);
* ``"score_diff"``: at the end, ``scale * (own score - best opponent's score)``;
* ``"score_delta"``: every step, ``scale * (own points gained - mean points
  gained by the opponents)`` (sums to ``scale * (own - mean opponent)``).

Rewards are given in ``env.rewards``
at the step that earns them (terminal rewards at the step that ends the
game); ``last()`` returns the agent's cumulative reward since it last acted.
When the game ends every agent gets ``terminations[agent] = True`` at once
(no truncation: a game always ends); each agent then steps ``None`` once to
leave, as in every PettingZoo classic env.  Their infos carry
``final_scores`` (absolute seat order) and ``winners`` (agent names).

Rendering: ``render_mode="ansi"`` returns the text board,
``"rgb_array"`` an ``(H, W, 3) uint8`` image (``carc_env.render``),
``"human"`` prints the text board after every step, ``"svg"`` returns the
board as an SVG document (``raw_env.to_svg()`` in any mode; a notebook shows
an env as that SVG through ``_repr_svg_``).  An ``rgb_array`` frame
is bounded: its board part is at most ``render_max_px`` pixels (default 2048)
on its longer side, so on a large board the tiles are drawn smaller than
``tile_px`` (never below 8 px); ``raw_env.render_tile_px()`` gives the size
the next frame uses.  (Unbounded, a 28 x 28-tile board at 512 px per tile is
a 704 MB frame.)

The environment pickles with its full state (``pickle.dumps(env)`` mid-game,
restore and continue identically).

See also :mod:`carc_env.env.gym_env` (single-agent Gymnasium env),
:mod:`carc_env.env.vector` (batched self-play env), :mod:`carc_env.env.wrappers`
(flat ``Box`` observations) and :mod:`carc_env.policies` (baseline policies).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..core import ConfigError, Game, IllegalActionError, as_index
from ..encoding import ActionCodec, ObservationEncoder
from ..encoding.spec import BOARD_CHANNELS, GLOBAL_FEATURES, PLACEMENT_FEATURES, SPOT_FEATURES, rst_table
from .fast_match import make_match
from .options import RENDER_MODES, EnvOptions
from .start import START_OPTIONS, start_record
from .wrappers import classic_observation, classic_space

RESET_OPTIONS = ("draw_order", *START_OPTIONS)

if __doc__:  # the tables come from the observation spec (absent under python -OO)
    __doc__ = (
        __doc__.replace("{BOARD_CHANNELS}", rst_table(BOARD_CHANNELS, "channel", "value in a cell"))
        .replace("{GLOBAL_FEATURES}", rst_table(GLOBAL_FEATURES, "feature"))
        .replace("{PLACEMENT_FEATURES}", rst_table(PLACEMENT_FEATURES, "placement feature"))
        .replace("{SPOT_FEATURES}", rst_table(SPOT_FEATURES, "spot feature"))
    )


def env(**options: Any) -> AECEnv:
    """The Carcassonne AEC env in PettingZoo's classic wrappers (see the module docstring)."""
    raw = raw_env(**options)
    terminate = TerminateIllegalWrapper(raw, illegal_reward=-1)
    e = OrderEnforcingWrapper(AssertOutOfBoundsWrapper(terminate))
    e._chain = (raw, terminate)  # the one-call path of the common step (see _ResetChecked)
    return e


# PettingZoo's wrappers forward every attribute read through ``__getattr__``, one
# Python call per wrapper level, and the AEC loop reads these attributes a few dozen
# times per step (a third of a step's time).  The subclasses below read them straight
# from the raw env; behaviour is unchanged (the raw env owns them; the wrappers only
# ever assign them on ``env.unwrapped``), and the order-enforcing check is kept.
_PER_STEP_ATTRS = (
    "agents",
    "agent_selection",
    "rewards",
    "terminations",
    "truncations",
    "infos",
    "_cumulative_rewards",
)
_GUARDED = {"agents", "agent_selection", "rewards", "terminations", "truncations", "infos"}


def _raw_property(name: str, guarded: bool) -> property:
    if guarded:

        def get(self: Any) -> Any:
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self._raw, name)
    else:

        def get(self: Any) -> Any:
            return getattr(self._raw, name)

    return property(get)


def _fast(cls: type, guard: bool) -> type:
    attrs: dict[str, Any] = {n: _raw_property(n, guard and n in _GUARDED) for n in _PER_STEP_ATTRS}

    def __init__(self: Any, inner: AECEnv, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        cls.__init__(self, inner, *args, **kwargs)  # type: ignore[misc]  # cls is the wrapper class built here
        self._raw = inner.unwrapped

    def __str__(self: Any) -> str:  # noqa: N807
        return str(self.env)

    attrs.update(__init__=__init__, __str__=__str__, __doc__=cls.__doc__, __module__=__name__)
    return type(cls.__name__, (cls,), attrs)


def _checked_action(env: AECEnv, action: Any) -> Any:
    """``action`` if it is None for a terminated agent or an integer in the action space (as an int);
    raise otherwise.  Real checks, not ``assert``: they must hold under ``python -O``."""
    raw = env.unwrapped
    agent = raw.agent_selection
    if raw.terminations[agent] or raw.truncations[agent]:
        return action
    if action is None:
        raise IllegalActionError(f"{agent} must act (it is not terminated); got None")
    index = as_index(action, "an action")
    n = raw.action_space(agent).n
    if not 0 <= index < n:
        raise IllegalActionError(f"action {index} is outside the action space 0..{n - 1}")
    return index


class _BoundsChecked:
    """PettingZoo's AssertOutOfBoundsWrapper checks with ``assert``, which ``python -O`` removes
    (then ``step(-1)`` reached TerminateIllegalWrapper as the last mask entry and ended the game).
    This step checks for real and raises IllegalActionError / ActionTypeError instead."""

    def step(self, action: Any) -> None:
        wrappers.BaseWrapper.step(self, _checked_action(self, action))


class _ResetChecked:
    """PettingZoo's OrderEnforcingWrapper marks the env reset before the reset runs; after a reset
    that raised, ``last()`` then failed with AttributeError deep in the raw env.  This one keeps
    the previous state of the flag when the reset fails and checks ``last()`` too.

    The common calls of an AEC loop, ``last()`` and ``step()`` of a legal integer by a live agent, take
    one call here instead of a call per wrapper (three wrappers, a third of a compiled step's time): with
    ``_chain = (raw env, its TerminateIllegalWrapper)`` (set by :func:`env`) this does what the chain
    does, the same reads and writes (TerminateIllegalWrapper's record of the last observation included);
    every other case (an illegal or out-of-range action, a dead agent's step, before a reset, ...) goes
    through the wrappers themselves."""

    _has_reset: bool  # OrderEnforcingWrapper's flag
    _has_updated: bool
    _chain: tuple[Any, Any] | None = None

    def step(self, action: Any) -> None:
        chain = self._chain
        if chain is not None and type(action) is int and self._has_reset:
            raw, terminate = chain
            agent = raw.agent_selection
            prev = terminate._prev_obs
            if (
                type(prev) is dict
                and raw.agents
                and not terminate._terminated
                and not raw.terminations[agent]
                and not raw.truncations[agent]
            ):
                mask = prev["action_mask"]
                if 0 <= action < len(mask) and mask[action]:
                    self._has_updated = True  # OrderEnforcingWrapper.step
                    terminate._prev_obs = None  # TerminateIllegalWrapper.step
                    terminate._prev_info = None
                    raw.step(action)
                    return
        wrappers.OrderEnforcingWrapper.step(self, action)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        was = self._has_reset
        try:
            wrappers.OrderEnforcingWrapper.reset(self, seed=seed, options=options)
        except BaseException:
            self._has_reset = was
            raise

    def last(self, observe: bool = True) -> tuple:
        if not self._has_reset:
            raise RuntimeError("call reset() (successfully) before last()")
        chain = self._chain
        if chain is None:
            return wrappers.OrderEnforcingWrapper.last(self, observe)
        raw, terminate = chain
        agent = raw.agent_selection
        infos = raw.infos
        obs = None
        if observe:  # the observe of each wrapper: TerminateIllegalWrapper's records it
            obs = raw.observe(agent)
            terminate._prev_obs = obs
            terminate._prev_info = infos[agent] if agent in infos else {}
        return obs, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent], infos[agent]

    def _repr_svg_(self) -> str | None:
        """Jupyter's picture of the env (the raw env's: the board as SVG)."""
        return self.unwrapped._repr_svg_()  # type: ignore[attr-defined]  # the PettingZoo wrapper chain has it


TerminateIllegalWrapper = _fast(wrappers.TerminateIllegalWrapper, guard=False)
AssertOutOfBoundsWrapper = _fast(
    type("AssertOutOfBoundsWrapper", (_BoundsChecked, wrappers.AssertOutOfBoundsWrapper), {}), guard=False
)
OrderEnforcingWrapper = _fast(
    type("OrderEnforcingWrapper", (_ResetChecked, wrappers.OrderEnforcingWrapper), {}), guard=True
)


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    """The unwrapped AEC environment.  See the module docstring for the full contract."""

    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "carcassonne_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.options = EnvOptions.from_kwargs(**options)
        self.render_mode = self.options.render_mode
        self.match = make_match(self.options)
        n = self.options.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        codec = self.match.codec
        obs_space = self.match.observation_space()
        self._classic = self.options.obs_format == "classic"
        if self._classic:
            obs_space = classic_space(obs_space)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        act_space = spaces.Discrete(codec.n)
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self._zero_mask = np.zeros(codec.n, dtype=np.int8)
        self._zero_mask.flags.writeable = False

    def __setstate__(self, state: dict[str, Any]) -> None:
        # unpickled arrays come back writable: the masks in the infos are handed out read-only again
        self.__dict__.update(state)
        self._zero_mask.flags.writeable = False
        for info in getattr(self, "infos", {}).values():
            for v in info.values():
                if isinstance(v, np.ndarray):
                    v.flags.writeable = False

    # ------------------------------------------------------------------ public helpers
    @property
    def game(self) -> Game:
        """The core game (read it freely; change it only through ``step``).  On the compiled engine it is
        the reference game rebuilt from the actions played (on demand, so reading it costs time), and
        read-only: ``apply`` or an attribute write raises :class:`~carc_env.fast.engine.ReadOnlyGameError`
        (make the env with ``engine="python"`` to edit its game)."""
        return self.match.game

    @property
    def engine(self) -> str:
        """The engine running the game: ``"numba"`` (compiled, :mod:`carc_env.fast`) or ``"python"``."""
        return self.match.engine

    @property
    def engine_reason(self) -> str:
        """Why the Python engine runs (empty on the compiled engine)."""
        return self.match.engine_reason

    @property
    def codec(self) -> ActionCodec:
        return self.match.codec

    @property
    def encoder(self) -> ObservationEncoder:
        return self.match.encoder

    @property
    def channel_names(self) -> list[str]:
        """Names of the board channels, in order."""
        return self.match.encoder.channel_names

    @property
    def global_names(self) -> list[str]:
        """Names of the global features, in order."""
        return self.match.encoder.global_names

    @property
    def window_names(self) -> list[str]:
        """Names of the ``windows`` columns, in order (empty: 12 columns of zeros, no plug-in fills them)."""
        return self.match.encoder.window_names

    def seat_of(self, agent: str) -> int:
        return self._seat[agent]

    def action_to_text(self, action: int) -> str:
        """Text notation (absolute coordinates) of a flat action in the current state."""
        return self.match.codec.action_to_text(self.match.game, action)

    def action_from_text(self, text: str) -> int:
        """Flat action of a text-notation action (``"tile 1,-2 r3"``, ``"follower c1"``, ``"pass"``)."""
        return self.match.codec.action_from_text(self.match.game, text)

    # ------------------------------------------------------------------ AEC API
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        if not self.match.started:
            raise RuntimeError("call reset() before observe()")
        if self._classic:
            return classic_observation(self.match.observe(seat))
        return self.match.observe(seat)

    def last(self, observe: bool = True) -> tuple:
        if not self.match.started:
            raise RuntimeError("call reset() (successfully) before last()")
        return super().last(observe)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        draw_order = None
        if options is not None and not isinstance(options, dict):
            raise ConfigError(
                f"reset options must be a dict such as {{'draw_order': [tile ids]}} or None, got {options!r} "
                f"of type {type(options).__name__}"
            )
        if options:
            unknown = sorted(set(options) - set(RESET_OPTIONS), key=repr)
            if unknown:
                warnings.warn(
                    f"carcassonne_v0.reset ignores unknown option(s) {unknown}; known: {list(RESET_OPTIONS)}",
                    stacklevel=2,
                )
            draw_order = options.get("draw_order")
        record = start_record(seed, options)
        if record is not None:
            self.match.start_from(record)  # raises before changing anything
        else:
            self.match.reset(seed, draw_order)  # raises before changing anything
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {"action_mask": self._zero_mask} for a in self.agents}
        self._skip_agent_selection = None
        match = self.match
        self.agent_selection = self.agents[match.player]
        if match.over:  # only with an empty (or unplaceable) forced draw order
            self._finish()
            return
        self._update_infos()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} must act (it is not terminated); got None")
        seat = self._seat[agent]
        rewards = self.match.step(action)  # validates first: a rejected action changes nothing
        self._cumulative_rewards[agent] = 0.0
        for i, a in enumerate(self.agents):
            self.rewards[a] = rewards[i]
        match = self.match
        if match.over:
            self.agent_selection = self.agents[(seat + 1) % len(self.agents)]
            self._finish()
        else:
            self.agent_selection = self.agents[match.player]
            self._update_infos()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _update_infos(self) -> None:
        zero = self._zero_mask
        infos = self.infos
        for a in self.agents:
            infos[a] = {"action_mask": zero}
        mask, outside, dropped, missing = self.match.acting_info()
        if not mask[int(mask.view(np.bool_).argmax())]:  # pragma: no cover - an engine/codec bug, never user input
            raise RuntimeError(
                f"the deciding agent's action mask is all zero in phase {self.match.phase!r} (engine/codec bug)"
            )
        info: dict[str, Any] = {"action_mask": mask}
        if outside:
            info["placements_outside_window"] = outside
        if dropped:
            info["actions_out_of_range"] = dropped
        if missing:
            info["placements_without_features"] = missing
        infos[self.agent_selection] = info

    def _finish(self) -> None:
        scores = tuple(self.match.scores)
        best = max(scores)
        winners = tuple(self.possible_agents[i] for i, s in enumerate(scores) if s == best)
        self.terminations = dict.fromkeys(self.agents, True)
        for a in self.agents:
            self.infos[a] = {"action_mask": self._zero_mask, "final_scores": scores, "winners": winners}

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            warnings.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'rgb_array' or 'svg'", stacklevel=2
            )
            return None
        if not self.match.started:
            raise RuntimeError("call reset() before render()")
        from ..render import render_image, render_text

        if self.render_mode == "rgb_array":
            return render_image(self.match.game, tile_px=self.render_tile_px())
        if self.render_mode == "svg":
            return self.to_svg()
        text = render_text(self.match.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def to_svg(self, highlight_legal: bool = False) -> str:
        """The current state as a standalone SVG document (:func:`carc_env.render.render_svg`; any render mode)."""
        if not self.match.started:
            raise RuntimeError("call reset() before to_svg()")
        from ..render import render_svg

        return render_svg(self.match.game, tile_px=self.options.tile_px, highlight_legal=highlight_legal)

    def _repr_svg_(self) -> str | None:
        """Jupyter's picture of the env: the board as SVG (None before the first reset)."""
        return self.to_svg() if self.match.started else None

    def render_tile_px(self) -> int:
        """Pixels per tile of the next ``rgb_array`` frame: ``tile_px``, or less where the board
        would make the frame's board part larger than ``render_max_px`` on a side (at least 8)."""
        from ..render.image import board_view

        x0, x1, y0, y1 = board_view(self.match.game)
        cells = max(x1 - x0 + 1, y1 - y0 + 1)
        return max(8, min(self.options.tile_px, self.options.render_max_px // cells))

    def close(self) -> None:
        pass

    def __str__(self) -> str:
        return str(self.metadata["name"])


__all__ = ["env", "raw_env"]
