"""The invariants the soak run checks after every step of a game (used by ``soak.py``).

:func:`play_game` plays one game of a :class:`GameSpec` through ``raw_env`` and checks, from
the rule book rather than from the engine's own bookkeeping:

- every step: card conservation (the multiset of hands + stock + discard pile is exactly
  ``num_decks`` of each card), hand sizes, whose turn it is (engine and env), the legal
  actions derived afresh from the rules = ``legal_actions`` = ``action_mask`` = the env's
  mask (the discard ban included), the observations of the mover and of one other seat
  inside their ``Box`` (others' masks all 0), the turn limit, the env's info keys;
- every draw: what moved where, and on a reshuffle that the top card stays and the rest of
  the pile becomes the stock;
- every discard: the card left the hand for the pile, the ban on the card just taken, going
  out exactly when the discard leaves a least penalty of 0 (and only the first time), whose
  turn is next and whether the round ends (last turns after going out, the turn cap);
- every round end: the record, the points = the solver's least penalty of each hand (and,
  on a sample, = the brute-force reference of ``tests/reference_solver.py`` and = the
  pure-Python twin), the scores adding up, the rewards of the reward mode, the one more turn
  each in seat order, the dealer rotation and the first player left of the dealer.

A failed check raises :class:`Violation`; ``play_game`` reports it with the step it
happened at and stops that game.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tt_env.agents import make_agent
from tt_env.engine import game, melds_py
from tt_env.engine.melds import least_penalty
from tt_env.engine.rules import ALL_ROUNDS, Rules, auto_decks, wild_rank
from tt_env.three_thirteen_v0 import REWARD_SCALE, raw_env, win_rewards

try:  # the brute-force reference lives with the tests; a checkout has it, an install may not
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from reference_solver import ref_least_penalty
except ImportError:  # pragma: no cover - only without the tests folder
    ref_least_penalty = None
finally:
    sys.path.pop(0)

OTHER_SEAT_EVERY = 3      # one other seat's observation is checked every third step
REFERENCE_MAX_CARDS = 8   # the reference is exponential: about 0.3 ms for 8 cards, 2 ms for 9
INFO_KEYS = {"went_out", "round_number", "round_points", "final_scores"}
MAX_TURNS_CHOICES = (1, 2, 3, 4, 6, 10, 25, 60, 200)
REWARD_MODES = ("relative", "penalty", "win")


class Violation(Exception):
    """An invariant that did not hold: ``check`` names it, the message says how."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"{check}: {message}")
        self.check, self.message = check, message


@dataclass(frozen=True)
class GameSpec:
    """Game ``index`` of a soak run: its rules, reward mode, seed and greedy seats."""

    index: int
    seed: tuple[int, int]
    rules: Rules
    reward_mode: str
    greedy_seats: tuple[int, ...]

    def describe(self) -> str:
        agents = f", greedy-v0 at seats {list(self.greedy_seats)}" if self.greedy_seats else ""
        return (f"rules {self.rules.to_dict()}, reward_mode {self.reward_mode!r}, env seed {list(self.seed)}"
                f"{agents} (others random legal)")


def game_spec(run_seed: int, index: int) -> GameSpec:
    """The configuration of game ``index``: a pure function of (run seed, index)."""
    rng = np.random.default_rng([run_seed, index, 1])
    n = int(rng.integers(2, 9))
    pick = rng.random()
    if pick < 0.2:
        rounds = ALL_ROUNDS
    elif pick < 0.3:
        rounds = (11,)
    else:
        rounds = tuple(sorted(int(r) for r in rng.choice(ALL_ROUNDS, int(rng.integers(1, 5)), replace=False)))
    pick = rng.random()
    if pick < 0.5:
        decks: int | str = "auto"
    elif pick < 0.93:
        decks = auto_decks(n, rounds[-1]) + int(rng.integers(0, 3))
    else:
        decks = int(rng.choice([8, 16, 64]))
    rules = Rules(num_players=n, decks=decks, aces=str(rng.choice(["low", "high_or_low"])), rounds=rounds,
                  discard_drawn_discard=bool(rng.random() < 0.5),
                  max_turns_per_round=int(rng.choice(MAX_TURNS_CHOICES)),
                  meld_needs_natural=bool(rng.random() < 0.5))
    greedy = tuple(s for s in range(n) if rng.random() < 0.5) if rng.random() < 0.25 else ()
    return GameSpec(index, (run_seed, index), rules, str(rng.choice(REWARD_MODES)), greedy)


@dataclass
class GameResult:
    """What one game counted, and its violation if one was found."""

    index: int
    steps: int = 0
    rounds: int = 0
    reshuffles: int = 0
    turn_caps: int = 0
    went_out: int = 0
    bans: int = 0
    reference_checks: int = 0
    twin_checks: int = 0
    violation: dict[str, Any] | None = None
    counts: dict[str, int] = field(default_factory=dict)


def expect(ok: bool, check: str, message: Any) -> None:
    """Raise :class:`Violation` unless ``ok``; ``message`` may be a callable (built only then)."""
    if not ok:
        fail(check, message() if callable(message) else str(message))


def fail(check: str, message: str) -> None:
    raise Violation(check, message)


def expected_legal(s: game.GameState) -> list[int]:
    """The legal actions as RULES.md states them, written afresh from the state."""
    if s.phase == game.PHASE_DRAW:
        acts = [game.DRAW_STOCK] if s.stock or len(s.discard_pile) > 1 else []
        return acts + [game.TAKE_DISCARD] if s.discard_pile else acts
    hand = s.hands[s.current_player]
    banned = s.taken_this_turn
    types = set(hand)
    if banned is not None and not s.rules.discard_drawn_discard and types != {banned}:
        types.discard(banned)
    return sorted(game.DISCARD_BASE + c for c in types)


class GameChecker:
    """Plays one game of a :class:`GameSpec` and checks it (see the module docstring)."""

    def __init__(self, spec: GameSpec, reference_every: int = 1) -> None:
        self.spec, r = spec, spec.rules
        self.rules, self.n = r, r.num_players
        self.env = raw_env(num_players=r.num_players, reward_mode=spec.reward_mode,
                           **{k: v for k, v in r.to_dict().items() if k != "num_players"})
        space = self.env.observation_space("player_0")["observation"]
        self.low, self.high, self.obs_shape = space.low, space.high, space.shape
        self.full = [r.num_decks] * 52
        self.names = self.env.possible_agents
        self.agents = {s: make_agent("greedy-v0", r) for s in spec.greedy_seats}
        self.reference_every = reference_every
        self.result = GameResult(spec.index)
        self.last_movers: list[int] = []

    # ------------------------------------------------------------------ every step
    def check_state(self, s: game.GameState, step: int) -> list[int]:
        """Checks of the position before each action (plain ``if``s: this runs every step)."""
        r, n = self.rules, self.n
        if np.bincount([c for h in s.hands for c in h] + s.stock + s.discard_pile, minlength=52).tolist() != self.full:
            fail("cards", f"hands + stock + pile are not {r.num_decks} of each card")
        want, mover, hands = s.round_number + 2, s.current_player, s.hands
        for p in range(n):
            if len(hands[p]) != want + (p == mover and s.phase == game.PHASE_DISCARD):
                fail("hand sizes", f"{[len(h) for h in hands]} in round {s.round_number}, phase {s.phase}")
        if s.round_number != r.rounds[s.round_index]:
            fail("round", f"round {s.round_number} at index {s.round_index} of {list(r.rounds)}")
        agent = self.env.agent_selection
        if agent != self.names[mover]:
            fail("turn", f"env says {agent}, engine seat {mover}")
        legal = game.legal_actions(s)
        if legal != expected_legal(s) or not legal:
            fail("mask", f"legal_actions {legal}, the rules say {expected_legal(s)}")
        mask = game.action_mask(s)
        if np.flatnonzero(mask).tolist() != legal:
            fail("mask", f"action_mask {np.flatnonzero(mask).tolist()} != legal_actions {legal}")
        obs = self.env.observe(agent)
        if not np.array_equal(obs["action_mask"], mask):
            fail("mask", f"the env's mask {np.flatnonzero(obs['action_mask']).tolist()} != {legal}")
        self.check_observation(obs["observation"], agent)
        if step % OTHER_SEAT_EVERY == 0:
            other = self.names[(mover + 1 + step // OTHER_SEAT_EVERY % (n - 1)) % n]
            seen = self.env.observe(other)
            if seen["action_mask"].any():
                fail("mask", f"{other} is not to move but has legal actions")
            self.check_observation(seen["observation"], other)
        if s.went_out is None and s.turn >= r.max_turns_per_round:
            fail("turn cap", f"turn {s.turn} of {r.max_turns_per_round} and the round goes on")
        if self.env.infos[agent].keys() != INFO_KEYS:
            fail("infos", f"keys {sorted(self.env.infos[agent])}")
        return legal

    def check_observation(self, x: np.ndarray, agent: str) -> None:
        if x.shape != self.obs_shape or x.dtype != np.float32:
            fail("observation", f"{agent}: shape {x.shape}, dtype {x.dtype}")
        if not ((x >= self.low).all() and (x <= self.high).all()):
            outside = np.flatnonzero((x < self.low) | (x > self.high)).tolist()
            fail("observation", f"{agent}: outside the Box at {outside}")

    # ------------------------------------------------------------------ the game
    def play(self) -> GameResult:
        env, res = self.env, self.result
        env.reset(seed=list(self.spec.seed))
        s = env.game_state
        rng = np.random.default_rng([*self.spec.seed, 2])
        step = 0
        try:
            expect(s.current_player == (s.dealer + 1) % self.n, "first player", "not left of the dealer")
            first_dealer = s.dealer
            while not s.game_over:
                legal = self.check_state(s, step)
                seat = s.current_player
                if seat in self.agents:
                    obs = env.observe(env.agent_selection)
                    action = int(self.agents[seat].act(obs["observation"], obs["action_mask"], rng))
                else:
                    action = legal[int(rng.integers(len(legal)))]
                before = self.snapshot(s)
                step += 1
                env.step(action)
                res.steps += 1
                self.check_step(s, action, before, first_dealer)
            for _ in range(self.n):
                expect(env.terminations[env.agent_selection], "episode end", "a live agent after the game")
                env.step(None)
            expect(env.agents == [], "episode end", f"agents left: {env.agents}")
        except Exception as exc:  # a Violation, or the engine failing
            check = exc.check if isinstance(exc, Violation) else "exception"
            message = exc.message if isinstance(exc, Violation) else f"{type(exc).__name__}: {exc}"
            res.violation = {"check": check, "message": message, "game": self.spec.index,
                             "seed": list(self.spec.seed), "step": step, "config": self.spec.describe(),
                             "state": s.describe()}
        return res

    @staticmethod
    def snapshot(s: game.GameState) -> tuple:
        pile = s.discard_pile
        return (s.current_player, s.phase, s.turn, s.went_out, s.dealer, s.round_index, len(s.stock),
                s.stock[-1] if s.stock else None, list(pile) if not s.stock else pile[-1] if pile else None,
                len(pile), list(s.hands[s.current_player]), list(s.scores), s.taken_this_turn)

    def check_step(self, s: game.GameState, action: int, before: tuple, first_dealer: int) -> None:
        mover, phase, turn, went_out, dealer, round_index, stock_len, stock_top, pile, pile_len, hand, \
            scores, banned = before
        r, n, res = self.rules, self.n, self.result
        if phase == game.PHASE_DRAW:
            expect((s.current_player, s.phase, s.turn) == (mover, game.PHASE_DISCARD, turn), "turn order",
                   "a draw must leave the same player to discard")
            got = s.hands[mover][-1]
            if action == game.TAKE_DISCARD:
                top = pile[-1] if isinstance(pile, list) else pile
                expect(got == top and len(s.discard_pile) == pile_len - 1 and s.taken_this_turn == top,
                       "take discard", "the top of the pile did not move to the hand")
            elif stock_len:
                expect(got == stock_top and len(s.stock) == stock_len - 1, "draw", "the stock's top did not move")
            else:
                res.reshuffles += 1
                expect(s.discard_pile == pile[-1:], "reshuffle", lambda: f"pile {s.discard_pile}, top was {pile[-1]}")
                expect(Counter(s.stock + [got]) == Counter(pile[:-1]), "reshuffle",
                       "the stock is not the pile below its top card")
            return
        card = action - game.DISCARD_BASE
        if banned is not None and card == banned:
            expect(r.discard_drawn_discard or set(hand) == {banned}, "discard ban",
                   lambda: f"discarded {card}, just taken from the pile, holding {hand}")
        res.bans += banned is not None and not r.discard_drawn_discard
        hand.remove(card)
        record = s.round_results[-1] if len(s.round_results) > res.rounds else None
        wild = wild_rank(r.rounds[round_index])
        goes_out = went_out is None and least_penalty(hand, wild, r.aces_high, r.meld_needs_natural) == 0
        info = self.env.infos[self.env.agents[0]]
        expect((info["went_out"] == mover) == goes_out, "going out",
               lambda: f"info went_out {info['went_out']} for mover {mover}; penalty 0 after discard: {goes_out}")
        out = mover if goes_out else went_out
        res.went_out += goes_out
        if went_out is not None:
            self.last_movers.append(mover)
        nxt = (mover + 1) % n
        ends = nxt == out or (out is None and turn + 1 >= r.max_turns_per_round)
        if (record is not None) != ends:
            fail("round end", f"round ended: {record is not None}; by the rules: {ends}")
        if record is None:
            expect(Counter(s.hands[mover]) == Counter(hand) and s.discard_pile[-1] == card, "discard",
                   "the card did not go from the hand to the pile")
            expect((s.current_player, s.phase, s.turn, s.went_out) == (nxt, game.PHASE_DRAW, turn + 1, out),
                   "turn order", lambda: f"next {s.current_player} phase {s.phase} turn {s.turn} out {s.went_out}")
            expect(s.scores == scores and not any(self.env.rewards.values()), "scores", "changed mid-round")
            return
        self.check_round_end(s, record, mover, hand, out, turn, dealer, round_index, scores, first_dealer)

    def check_round_end(self, s: game.GameState, record: game.RoundRecord, mover: int, hand: list[int],
                        out: int | None, turn: int, dealer: int, round_index: int, scores: list[int],
                        first_dealer: int) -> None:
        r, n, res = self.rules, self.n, self.result
        res.rounds += 1
        expect((record.round_number, record.dealer, record.went_out, record.turns)
               == (r.rounds[round_index], dealer, out, turn + 1), "round record", lambda: str(record))
        expect(Counter(record.hands[mover]) == Counter(hand), "round record", "the last discard is not recorded")
        if out is None:
            res.turn_caps += 1
            expect(record.turns == r.max_turns_per_round, "turn cap", f"{record.turns} turns")
        else:
            expect(self.last_movers == [(out + k) % n for k in range(1, n)], "last turns",
                   lambda: f"after seat {out} went out, seats {self.last_movers} played")
        self.last_movers = []
        wild = wild_rank(record.round_number)
        points = [0 if p == out else least_penalty(h, wild, r.aces_high, r.meld_needs_natural)
                  for p, h in enumerate(record.hands)]
        expect(record.points == points, "scoring", lambda: f"points {record.points}, solver {points}")
        self.sample_solvers(record, wild, out)
        totals = [a + b for a, b in zip(scores, points, strict=True)]
        expect(s.scores == totals, "scores", lambda: f"{s.scores} != {scores} + {points}")
        last = round_index + 1 == len(r.rounds)
        expect(s.game_over == last, "game end", f"game_over {s.game_over} after round index {round_index}")
        self.check_rewards(points, totals, last)
        info = self.env.infos[self.env.agents[0]]
        expect((info["round_number"], info["round_points"], info["final_scores"])
               == (record.round_number, points, totals if last else [0] * n), "infos", lambda: str(info))
        if last:
            expect(s.scores == [sum(rec.points[p] for rec in s.round_results) for p in range(n)]
                   and len(s.round_results) == len(r.rounds), "scores", "totals are not the sum of the rounds")
            return
        expect(s.dealer == (dealer + 1) % n == (first_dealer + round_index + 1) % n, "dealer rotation",
               f"dealer {s.dealer} after {dealer}")
        expect((s.current_player, s.phase, s.turn, s.went_out, s.round_index)
               == ((s.dealer + 1) % n, game.PHASE_DRAW, 0, None, round_index + 1), "first player",
               lambda: f"seat {s.current_player} starts, dealer {s.dealer}")
        expect(len(s.discard_pile) == 1 and not any(s.known_taken) and not any(s.discards), "new deal",
               "the new round does not start from a fresh deal")

    def check_rewards(self, points: list[int], totals: list[int], last: bool) -> None:
        n, mode = self.n, self.spec.reward_mode
        if mode == "relative":
            want = [((sum(points) - p) / (n - 1) - p) / REWARD_SCALE for p in points]
        elif mode == "penalty":
            want = [-p / REWARD_SCALE for p in points]
        else:
            want = win_rewards(totals) if last else [0.0] * n
        got = [self.env.rewards[f"player_{p}"] for p in range(n)]
        expect(np.allclose(got, want, atol=1e-12), "rewards", lambda: f"{mode}: {got} != {want}")

    def sample_solvers(self, record: game.RoundRecord, wild: int, out: int | None) -> None:
        """The solver against the brute-force reference and the pure-Python twin, on one hand."""
        r, res = self.rules, self.result
        seat = res.rounds % self.n
        hand, want = record.hands[seat], record.points[seat] if seat != out else 0
        if (ref_least_penalty is not None and len(hand) <= REFERENCE_MAX_CARDS
                and res.rounds % self.reference_every == 0):
            res.reference_checks += 1
            ref = ref_least_penalty(hand, wild, r.aces_high, r.meld_needs_natural)
            expect(ref == want, "solver vs reference", lambda: f"hand {hand}: solver {want}, reference {ref}")
        res.twin_checks += 1
        twin = melds_py.solve(list(hand), wild, r.aces_high, r.meld_needs_natural)[0]
        expect(twin == want, "solver vs python twin", lambda: f"hand {hand}: solver {want}, twin {twin}")


def play_game(spec: GameSpec) -> GameResult:
    """Play and check game ``spec``; the result says what it counted and any violation."""
    return GameChecker(spec).play()
