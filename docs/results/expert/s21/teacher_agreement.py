"""How noisy the searcher teacher's choices are, and how close a network's argmax comes to them (session 21).

At each decision with more than one root choice of the given number of games (deals 424242, 424243, ...),
the teacher (``ppo-mcts:pretrained:base-2p-160:2000:top=15:root=halving:farmers=0``) searches with one seed
and again with another; the game goes on with the first choice. Printed: how often the two choices agree,
and how often the argmax of the start (``pretrained:base-2p-160``) and of NETWORK equal the first.

    python docs/results/expert/s21/teacher_agreement.py NETWORK GAMES
"""

import sys

import torch

import carc_env
from agents.players import make_player
from carc_env.search.mcts import root_choices

TEACHER = "ppo-mcts:pretrained:base-2p-160:2000:top=15:root=halving:farmers=0"


def main(network: str, games: int) -> None:
    torch.set_num_threads(1)
    kw = {"num_players": 2, "expansions": ("base",)}
    first, second = make_player(TEACHER, kw, 0), make_player(TEACHER, kw, 0)
    first.seed(1000)
    second.seed(1001)
    start, student = make_player("pretrained:base-2p-160", kw, 0), make_player(network, kw, 0)
    env = carc_env.raw_env(**kw, engine="python")
    n = again = same_start = same_student = 0
    for g in range(games):
        env.reset(seed=424242 + g)
        while not all(env.terminations.values()):
            obs = env.observe(env.agent_selection)
            actions, indices = root_choices(env.game, env.codec, obs["action_mask"], first.mcts._canon)
            if len(actions) == 1:
                env.step(int(indices[0]))
                continue
            pick = first.act(obs, env)
            n += 1
            again += second.act(obs, env) == pick
            same_start += start.act(obs, env) == pick
            same_student += student.act(obs, env) == pick
            env.step(int(pick))
    print(
        f"decisions {n}; the teacher's choice again with another seed {again / n:.3f}; "
        f"the start's argmax {same_start / n:.3f}; {network}'s argmax {same_student / n:.3f}"
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
