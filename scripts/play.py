"""Play against the agents in a browser: serves the play page on 127.0.0.1 and prints its URL.

    python scripts/play.py [--port 8765] [--hint pretrained:base-2p]

Needs the extra [play] (pip install -c constraints.txt -e ".[play]").  The page plays any seat as a
human or as a player spec (random, greedy:EPS, mcts:N, pretrained:NAME, a checkpoint path); the
policy inspector and the hints use the deciding agent's network, else the first ``--hint`` network
that fits the game (default: every shipped agent).  Only this machine can reach the page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port)")
    ap.add_argument(
        "--hint",
        action="append",
        default=None,
        help="network for hints and the inspector: pretrained:NAME or a checkpoint path (repeatable)",
    )
    args = ap.parse_args(argv)
    try:
        import uvicorn
    except ImportError:
        print(
            'scripts/play.py needs the extra [play]: python -m pip install -c constraints.txt -e ".[play]"',
            file=sys.stderr,
        )
        return 2
    from agents.play.app import create_app
    from agents.players import PlayerSpecError, make_player
    from agents.pretrained import available, load

    names = available()
    hints = []
    if args.hint is None:
        hints = [load(n) for n in names]
    else:
        for spec in args.hint:
            try:
                p = make_player(spec, {}, seed=0) if not spec.startswith("pretrained:") else load(spec.split(":", 1)[1])
            except (PlayerSpecError, ValueError) as exc:
                print(f"--hint {spec}: {exc}", file=sys.stderr)
                return 2
            if getattr(p, "net", None) is None:
                print(f"--hint {spec}: not a network (give pretrained:NAME or a checkpoint)", file=sys.stderr)
                return 2
            hints.append(p)
    app = create_app(hints=hints, pretrained=names)
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port} ({exc}); pick another --port", file=sys.stderr)
        return 2
    sock.listen(128)  # listening before the URL is printed: early requests wait in the backlog
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    print(f"play page: http://127.0.0.1:{port}/  (Ctrl+C stops it)", flush=True)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
