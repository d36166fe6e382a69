"""The compiled engine (Numba): see :mod:`carc_env.fast.engine`."""
