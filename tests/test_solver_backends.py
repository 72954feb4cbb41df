"""The two meld-solver backends as one: ``TT_ENV_SOLVER`` and ``solver_backend()``, identical
input errors, and ``discard_penalties`` against per-card ``least_penalty`` and the reference.

Backend selection happens at import, so those tests run a fresh interpreter each.
"""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tt_env.engine import discard_penalties, least_penalty, melds, melds_py, solver_backend
from tt_env.engine.cards import parse_cards

from reference_solver import ref_least_penalty
from solver_modules import BACKEND_NAMES, _meldsolver, solver_module as _module

REPO = Path(__file__).resolve().parents[1]


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with this checkout first on the path."""
    full_env = dict(os.environ, **env)
    full_env["PYTHONPATH"] = os.pathsep.join([str(REPO), full_env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full_env, cwd=REPO, timeout=300)


# --------------------------------------------------------------------------- selection
def test_solver_backend_in_this_process() -> None:
    forced_python = os.environ.get("TT_ENV_SOLVER", "").strip() == "python"
    expected = "c" if _meldsolver is not None and not forced_python else "python"
    assert solver_backend() == expected == melds.SOLVER_BACKEND
    backend = _meldsolver if expected == "c" else melds_py
    assert least_penalty is backend.least_penalty and discard_penalties is backend.discard_penalties
    assert melds.after_draw_values is backend.after_draw_values


# A short game through the AEC env (random legal moves, one greedy-v0 seat) and one through
# the Gymnasium env against expert-v0; prints the backend and everything scored.
GAME = """
import json
import numpy as np
from tt_env import three_thirteen_v0
from tt_env.agents import make_agent
from tt_env.engine import Rules, solver_backend, best_melds
env = three_thirteen_v0.env(num_players=2, rounds=[1, 4, 9])
env.reset(seed=7)
greedy, rng = make_agent("greedy-v0", Rules(rounds=(1, 4, 9))), np.random.default_rng(0)
for agent in env.agent_iter():
    obs, reward, term, trunc, info = env.last()
    if term or trunc:
        action = None
    elif agent == env.possible_agents[0]:
        action = greedy.act(obs["observation"], obs["action_mask"], rng)
    else:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
    env.step(action)
import gymnasium, tt_env
gym_env = gymnasium.make("tt_env/ThreeThirteen-v0", opponents=["expert-v0"], rounds=[2, 3])
obs, info = gym_env.reset(seed=3)
done = False
while not done:
    obs, reward, done, truncated, info = gym_env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
print(json.dumps({"backend": solver_backend(),
                  "aec": [env.unwrapped.game_state.scores, [r.points for r in env.unwrapped.round_results]],
                  "gym": info["final_scores"],
                  "melds": best_melds([18, 19, 20, 4, 17, 30, 9], 13).deadwood}))
"""


def _game(**env: str) -> dict:
    result = _python(GAME, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_python_backend_plays_the_same_games_as_c() -> None:
    python = _game(TT_ENV_SOLVER="python")
    assert python["backend"] == "python"
    assert python["aec"][1] and python["melds"] == 10
    if _meldsolver is not None:
        c = _game(TT_ENV_SOLVER="c")
        assert c["backend"] == "c"
        assert c == dict(python, backend="c")


HIDE_C = "import sys; sys.modules['tt_env.engine._meldsolver'] = None  # as if never built\n"


def test_forcing_c_without_the_extension_is_a_clear_import_error() -> None:
    result = _python(HIDE_C + "import tt_env.engine", TT_ENV_SOLVER="c")
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: TT_ENV_SOLVER=c asks for the C meld solver"), result.stderr
    assert "pip install -e ." in last and "C compiler" in last and "TT_ENV_SOLVER=auto or python" in last


@pytest.mark.parametrize("value", ["auto", "", " auto "])
def test_auto_falls_back_to_python_without_the_extension(value: str) -> None:
    code = HIDE_C + "from tt_env.engine import solver_backend, least_penalty; print(solver_backend(), " \
                    "least_penalty([0, 1, 2, 30], 0))"
    result = _python(code, TT_ENV_SOLVER=value)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["python", "5"]


@pytest.mark.parametrize("value", ["fortran", "C", "py"])
def test_bad_solver_value_names_the_allowed_values(value: str) -> None:
    result = _python("import tt_env.engine", TT_ENV_SOLVER=value)
    assert result.returncode != 0
    assert (f"ValueError: TT_ENV_SOLVER={value!r} is not allowed: use c, python or auto"
            in result.stderr), result.stderr


@pytest.mark.skipif(_meldsolver is None, reason="the C accelerator _meldsolver is not built")
def test_forcing_c_with_the_extension() -> None:
    result = _python("from tt_env.engine import solver_backend; print(solver_backend())", TT_ENV_SOLVER="c")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "c"


# --------------------------------------------------------------------------- input errors
WILD_HINT = "use 1..13 (or 0 for no wilds)"
BAD_INPUTS = [
    ([0, 1, True], 5, TypeError, "card True is a bool, not a card int: cards are ints 0..51"),
    ([0, "7H"], 5, TypeError, "card '7H' is not an int: cards are ints 0..51"),
    ([0, 2.0], 5, TypeError, "card 2.0 is not an int: cards are ints 0..51"),
    ([None], 5, TypeError, "card None is not an int: cards are ints 0..51"),
    ([52], 5, ValueError, "52 is not a card int: allowed 0..51"),
    ([3, -1], 5, ValueError, "-1 is not a card int: allowed 0..51"),
    ([2 ** 70], 0, ValueError, f"{2 ** 70} is not a card int: allowed 0..51"),
    ([0, 1, 2], 14, ValueError, f"wild_rank=14 is not allowed: {WILD_HINT}"),
    ([0, 1, 2], -1, ValueError, f"wild_rank=-1 is not allowed: {WILD_HINT}"),
    ([0], 2 ** 64, ValueError, f"wild_rank={2 ** 64} is not allowed: {WILD_HINT}"),
    ([0, 1, 2], True, TypeError, f"wild_rank=True is a bool, not an int: {WILD_HINT}"),
    ([0, 1, 2], 5.0, TypeError, f"wild_rank=5.0 is not an int: {WILD_HINT}"),
    ([0, 1, 2], "K", TypeError, f"wild_rank='K' is not an int: {WILD_HINT}"),
    ([0] * 41, 5, ValueError, "hand has 41 cards: the solver takes at most 40"),
    (5, 5, TypeError, "hand must be a sequence of card ints"),
    (None, 5, TypeError, "hand must be a sequence of card ints"),
    # checked in order: the wild rank, the hand's length, then each card in turn
    ([52], 14, ValueError, f"wild_rank=14 is not allowed: {WILD_HINT}"),
    ([True] * 41, 5, ValueError, "hand has 41 cards: the solver takes at most 40"),
    ([52, True], 5, ValueError, "52 is not a card int: allowed 0..51"),
    ([True, 52], 5, TypeError, "card True is a bool, not a card int: cards are ints 0..51"),
]
ENTRY_POINTS = ["least_penalty", "discard_penalties", "solve"]


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("backend", BACKEND_NAMES)
@pytest.mark.parametrize(("hand", "wild", "error", "message"), BAD_INPUTS)
def test_bad_input_same_error_in_both_backends(backend, entry, hand, wild, error, message) -> None:
    with pytest.raises(error) as caught:
        getattr(_module(backend), entry)(hand, wild, False, False)
    assert str(caught.value) == message


def test_best_melds_checks_its_input_too() -> None:
    with pytest.raises(ValueError, match=r"^52 is not a card int: allowed 0\.\.51$"):
        melds.best_melds([1, 52], 5)


class Rank(enum.IntEnum):
    KING = 13


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_integer_like_input_is_accepted_alike(backend: str) -> None:
    solver = _module(backend)
    cards = parse_cards("7H 8H KS 5C 5D 5S JC")
    expected = 10
    makers = [(list, 13), (tuple, 13), (iter, 13), (np.array, np.int64(13)),
              (lambda cs: [np.int32(c) for c in cs], Rank.KING)]
    for make, wild in makers:
        assert solver.least_penalty(make(cards), wild) == expected
        assert solver.least_penalty(make(cards), wild_rank=wild, aces_high=0, meld_needs_natural=None) == expected
        assert solver.discard_penalties(make(cards), wild) == solver.discard_penalties(cards, 13)
    assert solver.solve(np.array(cards), 13)[0] == expected
    assert solver.least_penalty([0] * 40, 0) == 0  # exactly 40 cards is allowed


# --------------------------------------------------------------------------- discard_penalties
def _per_card(solver, hand, wild, aces_high, natural) -> list[tuple[int, int]]:
    out = []
    for card in sorted(set(hand)):
        rest = list(hand)
        rest.remove(card)
        out.append((card, solver.least_penalty(rest, wild, aces_high, natural)))
    return out


def _random_hand(rng: np.random.Generator, size: int, decks: int, wild: int) -> list[int]:
    hand: list[int] = []
    while len(hand) < size:
        if wild and rng.random() < 0.2:
            card = int(rng.integers(4)) * 13 + wild - 1
        elif rng.random() < 0.5:
            card = int(rng.integers(13)) + 13 * int(rng.integers(2))  # two suits: runs and pairs
        else:
            card = int(rng.integers(52))
        if hand.count(card) < decks:
            hand.append(card)
    return hand


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_discard_penalties_match_each_sub_hand(backend: str) -> None:
    solver = _module(backend)
    rng = np.random.default_rng(11)
    for i in range(400 if backend == "c" else 120):
        wild = i % 14
        hand = _random_hand(rng, int(rng.integers(0, 21)), int(rng.integers(1, 4)), wild)
        aces_high, natural = bool(rng.integers(2)), bool(rng.integers(2))
        got = solver.discard_penalties(hand, wild, aces_high, natural)
        assert got == _per_card(solver, hand, wild, aces_high, natural), (hand, wild, aces_high, natural)
        assert all(type(card) is int and type(p) is int for card, p in got)


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_discard_penalties_match_reference(backend: str) -> None:
    solver = _module(backend)
    rng = np.random.default_rng(12)
    for i in range(150):
        wild = (0, *range(3, 14))[i % 12]
        hand = _random_hand(rng, int(rng.integers(1, 11)), int(rng.integers(1, 3)), wild)
        aces_high, natural = bool(rng.integers(2)), bool(rng.integers(2))
        expected = _per_card(type("Ref", (), {"least_penalty": staticmethod(ref_least_penalty)}),
                             hand, wild, aces_high, natural)
        assert solver.discard_penalties(hand, wild, aces_high, natural) == expected, (hand, wild)


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_discard_penalties_known(backend: str) -> None:
    solver = _module(backend)
    assert solver.discard_penalties([], 5) == []
    # 4H 5H 6H 7C 7D 7S KS, no wilds: only discarding KS leaves both melds
    hand = parse_cards("4H 5H 6H 7C 7D 7S KS")
    left = {"4H": 5 + 6 + 10, "5H": 4 + 6 + 10, "6H": 4 + 5 + 10, "7C": 24, "7D": 24, "7S": 24, "KS": 0}
    assert solver.discard_penalties(hand, 0) == sorted((parse_cards(c)[0], p) for c, p in left.items())
    # a hand of only wilds: one fewer wild is an all-wild set, unless melds need a natural
    assert solver.discard_penalties(parse_cards("9C 9D 9H 9S"), 9) == [(c, 0) for c in parse_cards("9C 9D 9H 9S")]
    assert solver.discard_penalties(parse_cards("9C 9D 9H 9S"), 9, False, True) == \
        [(c, 27) for c in sorted(parse_cards("9C 9D 9H 9S"))]


def test_backends_agree_on_discard_penalties_of_game_hands() -> None:
    if _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    rng = np.random.default_rng(13)
    for _ in range(150):
        wild = int(rng.integers(3, 14))
        hand = (rng.permutation(104)[:wild + 1] % 52).tolist()  # a hand after the draw
        aces_high, natural = bool(rng.integers(2)), bool(rng.integers(2))
        assert _meldsolver.discard_penalties(hand, wild, aces_high, natural) == \
            melds_py.discard_penalties(hand, wild, aces_high, natural)


def test_backends_lay_out_the_same_arrangement() -> None:
    """``solve`` is the same in both, card for card: ties between equally good sets go the same
    way and wilds are used in hand order (expert-v0 reads the unmelded cards of it)."""
    if _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    rng = np.random.default_rng(31)
    for _ in range(1500):
        decks, wild = int(rng.integers(1, 5)), int(rng.integers(0, 14))
        hand = (rng.permutation(52 * decks)[:int(rng.integers(0, 21))] % 52).tolist()
        if wild and rng.random() < 0.3:
            hand = (hand + [s * 13 + wild - 1 for s in rng.integers(0, 4, size=int(rng.integers(1, 8)))])[:20]
        aces_high, natural = bool(rng.integers(2)), bool(rng.integers(2))
        assert _meldsolver.solve(hand, wild, aces_high, natural) == melds_py.solve(hand, wild, aces_high, natural), \
            (hand, wild, aces_high, natural)
