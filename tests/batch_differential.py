"""The batched engine against the scalar engine, table by table: the one differential check.

The scalar engine is the specification. Before each step every table is read back as a scalar
``GameState`` (``BatchGame.to_game_state``); its observation, mask and seat must be the scalar
engine's. The same move is then applied to it with ``engine.game.apply``, and the batch's rewards,
scores, round points, flags and next state must equal the scalar engine's. A table left out of a
partial step (``active``) must not change at all.

Randomness is the one thing that differs by design (the batch shuffles from its own streams):
after a reshuffle the stock is compared as a multiset, and a new deal is checked for validity.

``tests/test_batch_engine.py`` and ``tests/test_batch_observe.py`` run it on small batches;
``benchmarks/batch_soak.py`` runs it for millions of table steps over random rule configurations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import torch

from tt_env.batch import BatchGame, TimeStep
from tt_env.engine import game as engine
from tt_env.engine.rules import Rules, hand_size
from tt_env.engine.scoring import REWARD_SCALE, win_rewards
from tt_env.observation import encode


class Mismatch(AssertionError):
    """The batch and the scalar engine differ: the message says at which table, in what."""


def expect(ok: bool, what: Callable[[], str] | str) -> None:
    """Raise :class:`Mismatch` unless ``ok`` (``what`` is built only then)."""
    if not ok:
        raise Mismatch(what() if callable(what) else what)


def snapshot(st: engine.GameState) -> dict:
    """What a state means for play: order-free parts sorted, ordered parts (stock, pile) as is."""
    return {
        "hands": [sorted(h) for h in st.hands], "stock": list(st.stock), "pile": list(st.discard_pile),
        "known_taken": [sorted(k) for k in st.known_taken], "discards": [sorted(d) for d in st.discards],
        "passed": [sorted(p) for p in st.passed], "round_index": st.round_index, "round_number": st.round_number,
        "dealer": st.dealer, "current": st.current_player, "phase": st.phase, "scores": list(st.scores),
        "went_out": st.went_out, "turn": st.turn, "taken": st.taken_this_turn, "game_over": st.game_over,
    }


def differences(got: dict, want: dict, keys: Sequence[str] | None = None) -> dict:
    """The snapshot entries that differ, as (batch, scalar) pairs."""
    return {k: (got[k], want[k]) for k in (keys if keys is not None else got) if got[k] != want[k]}


def expected_rewards(points: list[int], scores: list[int], game_over: bool, mode: str) -> list[float]:
    """``three_thirteen_v0``'s rewards for a finished round."""
    n = len(points)
    if mode == "relative":
        total = sum(points)
        return [((total - p) / (n - 1) - p) / REWARD_SCALE for p in points]
    if mode == "penalty":
        return [-p / REWARD_SCALE for p in points]
    return win_rewards(scores) if game_over else [0.0] * n


def check_deal(st: engine.GameState) -> None:
    """A freshly dealt round: right hand sizes, one card up, the whole shoe accounted for."""
    n, size = st.rules.num_players, hand_size(st.round_number)
    expect([len(h) for h in st.hands] == [size] * n, lambda: f"dealt hand sizes {[len(h) for h in st.hands]}")
    expect(len(st.discard_pile) == 1 and st.turn == 0 and st.phase == engine.PHASE_DRAW,
           lambda: f"a new round opens with pile {st.discard_pile}, turn {st.turn}, phase {st.phase}")
    expect(st.current_player == (st.dealer + 1) % n and st.went_out is None,
           lambda: f"a new round's first player {st.current_player} (dealer {st.dealer}), went_out {st.went_out}")
    everything = Counter(c for h in st.hands for c in h) + Counter(st.stock) + Counter(st.discard_pile)
    expect(everything == Counter({c: st.rules.num_decks for c in range(52)}), "the deal does not hold the whole shoe")


class SideBySide:
    """A :class:`BatchGame` stepped next to the scalar engine, every table checked at every step.

    ``events`` counts what the checked steps went through: ``steps`` (table steps), ``rounds``,
    ``games``, ``reshuffles``, ``went_out``, ``idle`` (tables left out of a partial step) and
    ``loads`` (:meth:`reload`). ``reward_mode`` is the mode the rewards are checked in: the
    caller's, not read back from the game under test (a game that lost its mode would agree
    with itself).
    """

    def __init__(self, game: BatchGame, ts: TimeStep, reward_mode: str) -> None:
        self.game, self.ts, self.reward_mode = game, ts, reward_mode
        self.events: Counter = Counter()
        self.states = [game.to_game_state(i) for i in range(game.num_tables)]
        for i, st in enumerate(self.states):
            self._at(i, check_deal, st)

    def check_views(self) -> None:
        """The batch's seat, observation and mask of every table are the scalar engine's."""
        ts = self.ts
        seats, obs, masks = ts.seat.cpu().numpy(), ts.observation.cpu().numpy(), ts.action_mask.cpu().numpy()
        for i, st in enumerate(self.states):
            self._at(i, self._check_view, st, int(seats[i]), obs[i], masks[i])

    @staticmethod
    def _check_view(st: engine.GameState, seat: int, obs: np.ndarray, mask: np.ndarray) -> None:
        expect(seat == st.current_player, lambda: f"seat to move {seat}, scalar {st.current_player}")
        want = encode(st, seat)
        expect(np.array_equal(obs, want), lambda: f"observation differs at {np.flatnonzero(obs != want).tolist()[:8]}")
        expect(np.array_equal(mask, engine.action_mask(st).astype(bool)),
               lambda: f"mask {np.flatnonzero(mask).tolist()}, scalar {engine.legal_actions(st)}")

    def reload(self) -> TimeStep:
        """Save the batch's state and load it back (``BatchGame.load_state``): play must go on as
        before, which the next checks see (a load that lost what the engine keeps besides the
        state, its lockstep or its kept penalties, plays the next steps wrong)."""
        self.events["loads"] += 1
        self.ts = self.game.load_state({k: v.clone() for k, v in self.game.state.fields().items()})
        return self.ts

    def step(self, actions: Sequence[int], active: Sequence[bool] | None = None) -> TimeStep:
        """Step the batch with ``actions`` (legal ones, from the scalar states), check every table."""
        game, n = self.game, self.game.num_players
        mask = None if active is None else torch.tensor(list(active), device=game.device)
        ts = self.ts = game.step(torch.tensor(list(actions), device=game.device), active=mask)
        host = {k: v.cpu() for k, v in ts._asdict().items()}
        for i, st in enumerate(self.states):
            before = snapshot(st)
            post = game.to_game_state(i)
            if active is not None and not active[i]:
                self._at(i, self._check_idle, i, before, post, host)
            else:
                self._at(i, self._check_table, i, st, before, int(actions[i]), post, host, n)
            self.states[i] = post
        return ts

    def _check_idle(self, i: int, before: dict, post: engine.GameState, host: dict) -> None:
        """A table left out of a partial step: nothing changed, nothing happened."""
        self.events["idle"] += 1
        after = snapshot(post)
        expect(after == before, lambda: f"left out of the step, it changed: {differences(after, before)}")
        expect(not host["round_over"][i] and not host["game_over"][i] and int(host["went_out"][i]) == -1
               and not host["rewards"][i].any(), "left out of the step, it has a reward or an event")

    def _check_table(self, i: int, st: engine.GameState, before: dict, action: int, post: engine.GameState,
                     host: dict, n: int) -> None:
        self.events["steps"] += 1
        result = engine.apply(st, action)
        got, want = snapshot(post), snapshot(st)
        ended = result.round_record is not None
        expect(bool(host["round_over"][i]) == ended and bool(host["game_over"][i]) == result.game_over,
               lambda: f"round_over {bool(host['round_over'][i])} / game_over {bool(host['game_over'][i])}, "
                       f"scalar {ended} / {result.game_over}")
        expect(int(host["went_out"][i]) == (before["current"] if result.went_out else -1),
               lambda: f"went_out {int(host['went_out'][i])}, scalar went out: {result.went_out}")
        expect(int(host["ended_round"][i]) == (result.round_record.round_number if ended else 0),
               lambda: f"ended_round {int(host['ended_round'][i])}")
        rewards = [0.0] * n
        if ended:
            self.events["rounds"] += 1
            points = result.round_record.points
            expect(host["round_points"][i].tolist() == points,
                   lambda: f"round points {host['round_points'][i].tolist()}, scalar {points}")
            rewards = expected_rewards(points, st.scores, result.game_over, self.reward_mode)
        expect(np.array_equal(host["rewards"][i].numpy(), np.asarray(rewards, dtype=np.float32)),
               lambda: f"rewards {host['rewards'][i].tolist()}, scalar {rewards}")
        expect(host["scores"][i].tolist() == st.scores, lambda: f"scores {host['scores'][i].tolist()}, "
                                                                f"scalar {st.scores}")
        if result.game_over:
            self.events["games"] += 1
            final = encode(st, st.current_player)
            expect(np.array_equal(host["final_observation"][i].numpy(), final), "the final observation differs")
            expect(post.round_index == 0 and post.scores == [0] * n, "a finished game's table did not start anew")
            check_deal(post)
        elif ended:
            diff = differences(got, want, ("round_index", "round_number", "dealer", "scores", "game_over"))
            expect(not diff, lambda: f"the next round: {diff}")
            check_deal(post)
        elif result.reshuffled:
            self.events["reshuffles"] += 1
            seat = st.current_player
            drawn = Counter(got["hands"][seat]) - Counter(before["hands"][seat])
            expect(sum(drawn.values()) == 1, lambda: f"the draw of a reshuffle took {dict(drawn)}")
            expect(Counter(got["stock"]) + drawn == Counter(before["pile"][:-1]),
                   "the reshuffled stock is not the pile below its top")
            expect(got["pile"] == before["pile"][-1:], lambda: f"the pile after a reshuffle: {got['pile']}")
            diff = differences(got, want, [k for k in got if k not in ("stock", "hands")])
            expect(not diff, lambda: f"after a reshuffle: {diff}")
        else:
            expect(got == want, lambda: f"the next state: {differences(got, want)}")
        if result.went_out:
            self.events["went_out"] += 1

    @staticmethod
    def _at(i: int, check: Callable, *args) -> None:
        """Run ``check``, naming table ``i`` in what it raises."""
        try:
            check(*args)
        except Mismatch as exc:
            message = str(exc)
            raise Mismatch(message if message.startswith("table ") else f"table {i}: {message}") from None


def play_side_by_side(rules: Rules, tables: int, steps: int, seed: int, reward_mode: str = "relative",
                      device: str = "cpu", accelerator_path: bool = False, solver: str | None = None,
                      solving: str = "auto") -> Counter:
    """Random legal play on a batch, checked against the scalar engine; returns event counts.

    ``accelerator_path`` runs, on a CPU, the code a GPU runs: every row through the rare parts
    of a step with a select, the observation's tensor code, and (unless ``solver`` says
    otherwise) the tensor program for the melds instead of C; ``solving`` picks which hands that path solves."""
    if solver is None:
        solver = "torch" if accelerator_path else "auto"
    g = BatchGame(rules, tables, device=device, seed=seed, reward_mode=reward_mode, solver=solver, solving=solving)
    if accelerator_path:
        g._sparse = False
        g._kernel_backend = "torch"
    pair = SideBySide(g, g.reset(), reward_mode)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        pair.check_views()
        pair.step([int(rng.choice(engine.legal_actions(st))) for st in pair.states])
    return pair.events
