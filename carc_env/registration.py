"""Registration of the environments with Gymnasium and PettingZoo (runs on ``import carc_env``).

Ids (versioned; a change of observation, action or reward semantics bumps the version):

==============================  ====================================================================
id                              made by
==============================  ====================================================================
``carc_env/Carcassonne-v0``     ``gymnasium.make("carc_env/Carcassonne-v0", **options)``: the
                                single-agent env (:class:`carc_env.env.gym_env.CarcassonneGymEnv`);
                                ``gymnasium.make_vec("carc_env/Carcassonne-v0", num_envs=N, **options)``:
                                its batched form, the vector env with the same default opponents
                                (:func:`carc_env.env.vector.make_vec`, same-step autoreset);
                                ``vectorization_mode="sync"`` still wraps N single envs
``Carcassonne-v0``              the same env, for Gymnasium's ``"module:id"`` form:
                                ``gymnasium.make("carc_env:Carcassonne-v0")`` imports ``carc_env``
                                itself (no import needed in user code) and then looks up the id
                                after the colon, which carries no namespace
``carc_env/carcassonne-v0``     ``pettingzoo.make("aec", "carc_env/carcassonne-v0", **options)``:
                                the wrapped AEC env (:func:`carc_env.env.aec.env`; PettingZoo >= 1.27,
                                older versions have no registry and are skipped)
==============================  ====================================================================

The entry points are strings, so registering imports none of the environment
modules; it does import ``gymnasium`` and ``pettingzoo`` themselves (their
registries live there).  That is the price of ids that resolve after a plain
``import carc_env``: measured on the 2-core development machine, ``import
carc_env`` takes about 1.4 times as long as without registering (0.26 s instead of
0.19 s in a fresh interpreter; see docs/gymnasium.md).
Registering is idempotent, and an id that another package already registered
with a different entry point is left alone with a warning rather than
overwritten.
"""

from __future__ import annotations

import warnings

GYM_ID = "carc_env/Carcassonne-v0"
GYM_MODULE_ID = "Carcassonne-v0"
PETTINGZOO_ID = "carc_env/carcassonne-v0"
GYM_ENTRY_POINT = "carc_env.env.gym_env:CarcassonneGymEnv"
GYM_VECTOR_ENTRY_POINT = "carc_env.env.vector:make_vec"
PETTINGZOO_ENTRY_POINT = "carc_env.env.aec:env"


def _register_gymnasium() -> None:
    import gymnasium

    for env_id in (GYM_ID, GYM_MODULE_ID):
        spec = gymnasium.registry.get(env_id)
        if spec is None:
            gymnasium.register(id=env_id, entry_point=GYM_ENTRY_POINT, vector_entry_point=GYM_VECTOR_ENTRY_POINT)
        elif spec.entry_point != GYM_ENTRY_POINT:
            warnings.warn(
                f"gymnasium id {env_id!r} is already registered to {spec.entry_point!r}; carc_env leaves it "
                f"alone (use {GYM_ID!r})",
                stacklevel=3,
            )


def _register_pettingzoo() -> None:
    try:
        import pettingzoo
    except ImportError:  # pragma: no cover - pettingzoo is a dependency
        return
    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is None:  # pragma: no cover - PettingZoo < 1.27 has no registry
        return
    spec = registry.get(PETTINGZOO_ID)
    if spec is None:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point=PETTINGZOO_ENTRY_POINT)
    elif spec.entry_point != PETTINGZOO_ENTRY_POINT:
        warnings.warn(
            f"pettingzoo id {PETTINGZOO_ID!r} is already registered to {spec.entry_point!r}; carc_env leaves it alone",
            stacklevel=3,
        )


def register() -> None:
    """Register every id above (idempotent)."""
    _register_gymnasium()
    _register_pettingzoo()


__all__ = ["GYM_ID", "GYM_MODULE_ID", "PETTINGZOO_ID", "register"]
