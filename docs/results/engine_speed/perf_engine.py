"""Profile the compiled engine's random play with Linux ``perf``, the jitted functions named.

perf names samples in JIT code only through a map file ``/tmp/perf-<pid>.map`` (start, size, name per
line).  Numba keeps each compiled entry point's machine code as an ELF object (``CodeLibrary``; on a
cache load, the object read from the cache): its symbol table gives every outlined function's offset and
size, one symbol's address in memory (``get_pointer_to_function``) gives the load address, and the two make
the map.  Functions LLVM inlined have no symbol: their samples count in their caller.

    PYTHONPATH=$PWD python docs/results/engine_speed/perf_engine.py box:king_robber,count,river2,shrines,darmstadt:2:8
    perf report -i /tmp/engine_perf_box.data --no-children --sort sym --stdio

Each argument is ``name:expansions:players:cpu_seconds``; the engine is compiled or loaded first (from the
cache: the object of a fresh compilation is not kept, run twice), then each configuration plays random
games (``FastBatch.play_random``, 50 a call) under ``perf record -F 4000`` attached to this process.
The object is kept as ``/tmp/engine_perf.o`` and its load address in ``/tmp/engine_perf.base``, to map a
sample's address to an instruction (``objdump -d``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

from numba.core import codegen

_set = codegen.CodeLibrary._set_compiled_object


def _keep(self, value):  # the object read from the cache (Numba drops it once loaded)
    self._kept_object = value
    return _set(self, value)


codegen.CodeLibrary._set_compiled_object = _keep

from carc_env.env.options import EnvOptions  # noqa: E402
from carc_env.fast.engine import FastBatch  # noqa: E402
from carc_env.fast.seam import engine  # noqa: E402


def perf_map() -> None:
    lines = []
    for cres in engine().play_random.overloads.values():
        lib = cres.library
        obj = getattr(lib, "_kept_object", None)
        if obj is None:
            sys.exit("the engine was compiled in this process: run again to load it from the cache")
        path = tempfile.mktemp(suffix=".o")
        with open(path, "wb") as f:
            f.write(obj)
        nm = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True).stdout
        rows = (ln.split() for ln in nm.splitlines())  # functions: code of the object's one text section
        syms = [(int(p[0], 16), int(p[1], 16), p[3]) for p in rows if len(p) == 4 and p[2] in "tTwW"]
        base = next(lib.get_pointer_to_function(n) - v for v, _, n in syms if lib.get_pointer_to_function(n))
        lines += [f"{base + v:x} {size:x} {name}" for v, size, name in syms]
        os.replace(path, "/tmp/engine_perf.o")
        with open("/tmp/engine_perf.base", "w") as f:
            f.write(str(base))
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> None:
    configs = [a.split(":") for a in sys.argv[1:]]
    batches = []
    for _, exps, players, _ in configs:
        opts = EnvOptions.from_kwargs(num_players=int(players), expansions=tuple(e for e in exps.split(",") if e))
        fb = FastBatch(opts, 1)
        fb.play_random([0])
        batches.append(fb)
    perf_map()
    for (name, _, _, seconds), fb in zip(configs, batches, strict=True):
        out = f"/tmp/engine_perf_{name}.data"
        rec = subprocess.Popen(["perf", "record", "-F", "4000", "-p", str(os.getpid()), "-o", out],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        time.sleep(0.5)
        c0, n, s = time.process_time(), 0, 1000
        while time.process_time() - c0 < float(seconds):
            fb.play_random(range(s, s + 50), rng_seed=s)
            s += 50
            n += 50
        rec.send_signal(signal.SIGINT)
        rec.wait()
        print(f"{name}: {n / (time.process_time() - c0):.0f} games per CPU-s (perf attached), {out}")


if __name__ == "__main__":
    main()
