# noqa: D212, D415
"""
# Three Thirteen

| Import             | `from tt_env import three_thirteen_v0`                         |
|--------------------|----------------------------------------------------------------|
| Actions            | Discrete                                                       |
| Parallel API       | No                                                             |
| Manual Control     | No (see `python -m tt_env.ui.play`)                            |
| Agents             | `agents= ['player_0', ..., 'player_{N-1}']`                    |
| Number of agents   | N = `num_players`, 2 to 8                                      |
| Action Shape       | Discrete(54)                                                   |
| Action Values      | Discrete(54)                                                   |
| Observation Shape  | (107 * N + 80,): 294 for 2 players, 401 for 3, 508 for 4       |
| Observation Values | counts and scaled values, all >= 0 (bounds in the `Box`)       |

Three Thirteen is an 11-round rummy game. In round r each player holds r + 2 cards and the
cards of rank r + 2 are wild (3s in round 1 up to kings in round 11). On a turn a player
draws (the stock or the top of the discard pile) and discards; a player whose hand, less
the discard, is all in sets and runs goes out, and every other player has one more turn.
Each unmelded card costs its value; after the last round the lowest total wins.

## Rules as implemented

The rule book is `RULES.md` of the project (every option below is one of its options):
sets of three or more of a rank; runs of three or more of a suit in sequence (each rank at
most once, at most 13 long); wilds stand for any card, fill gaps and extend ends, and a meld
of wilds only is a set; aces are low (A-2-3), or high or low with `aces="high_or_low"`
(Q-K-A, never K-A-2; an unmelded ace then costs 15). Unmelded cards cost A 1, 2-10 their
face value, J Q K 10, a wild its own rank's value; the least-penalty arrangement is found
exactly. House rules where the sources are silent: an empty stock is refilled by shuffling
the discard pile under its top card; the card type just taken from the discard pile may not
be discarded in the same turn (`discard_drawn_discard=False`); a round with nobody gone out
ends after `max_turns_per_round` turns and every hand is scored as held.

Going out is never worse for the player, so the environment goes out for it whenever the
chosen discard leaves a fully melded hand; `infos[agent]["went_out"]` gives the seat that
went out.

## Arguments

``` python
three_thirteen_v0.env(num_players=2, reward_mode="relative", render_mode=None,
                      reveal_all=False, decks="auto", aces="low", rounds=(1, ..., 11),
                      discard_drawn_discard=False, max_turns_per_round=200,
                      meld_needs_natural=False)
```

`num_players`: 2 to 8. `reward_mode`: `"relative"`, `"penalty"` or `"win"` (below).
`render_mode`: `"ansi"` (returns the text view), `"human"` (the picture in a window when a
display exists, else prints the text view) or `"rgb_array"` (the picture, `H x W x 3` uint8;
needs Pillow). Both show the table as the agent to move sees it; `reveal_all=True` shows
every hand in the pictures.
The rule options are those of `tt_env.engine.Rules` (docs/game.md, "Options"); a bad value
raises `ValueError` naming the option and the allowed values. Numpy integers are accepted
wherever an int is (`num_players=np.int64(3)`, `rounds=np.array([9, 10, 11])`) and stored as
plain ints. `decks` is `"auto"` or 1..64 (`tt_env.engine.rules.MAX_DECKS`: no table needs
more, and every deal shuffles the whole shoe). `env(...)` and `raw_env(...)` take the same
arguments, by position or by keyword.

## Observation Space

A dict: `"observation"`, a float32 vector whose layout depends only on the number of players
N (opponents in seat order from the observer's left), and `"action_mask"`, int8 (54,), 1
for the legal actions of the agent to move and all 0 for the others. For N = 2:

| Index | Piece | Meaning |
|---|---|---|
| 0 - 51 | `hand` | own hand: count of each card (0, 1, or more with several decks) |
| 52 - 103 | `discard_top` | top card of the discard pile (one-hot; all 0 when empty) |
| 104 - 155 | `discard_below` | counts of the discard pile below its top card |
| 156 - 207 | `opponent_taken` | per opponent from the left: cards it took from the discard pile this round and still holds (counts) |
| 208 - 259 | `opponent_discards` | per opponent from the left: cards it discarded this round (counts) |
| 260 - 272 | `wild_rank` | wild rank of the round (one-hot, A..K) |
| 273 - 283 | `round` | round number 1..11 (one-hot) |
| 284 - 285 | `phase` | phase of the turn (one-hot: draw, discard) |
| 286 - 287 | `went_out` | who went out this round (one-hot, self then opponents; all 0 if nobody) |
| 288 - 289 | `hand_sizes` | cards held, self then opponents from the left (/ 14) |
| 290 | `stock_size` | cards in the stock (/ cards in the shoe) |
| 291 - 292 | `scores` | cumulative scores before this round, self then opponents (/ 100) |
| 293 | `turn` | turns played this round (/ max_turns_per_round) |

Within each 52-card block, card `c = suit * 13 + (rank - 1)`, suits C, D, H, S, ranks A..K.
`tt_env.observation.get_layout(N)` gives the offsets for any N.

## State Space (`env.state()`, `env.state_space`)

For centralized critics (MAPPO, QMIX): the whole game as a float32 vector of `160 * N + 236`
values (556 for 2 players), the same for every agent, seats in absolute order (seat 0 first).
It shows every hand and the stock, so it must never reach a policy that acts; no observation
holds any of it beyond what that player may know. `state_space` is its `Box`;
`tt_env.observation.state.get_state_layout(N)` gives the offsets, `tt_env.observation.state.decode_state(vector, rules)`
the facts as plain values, and `tt_env.observation.state.STATE_VERSION` (1) is bumped if the layout changes.
The stock and the discard pile under its top are counts: their order is no player's knowledge
(a stock is shuffled; the order under the top only feeds the shuffle of a refill). For N = 2:

| Index | State piece | Meaning |
|---|---|---|
| 0 - 103 | `hands` | every seat's hand, seat 0 first: count of each card |
| 104 - 155 | `stock` | the stock: count of each card (its order is not part of the state) |
| 156 - 207 | `discard_top` | top card of the discard pile (one-hot; all 0 when empty) |
| 208 - 259 | `discard_below` | counts of the discard pile below its top card |
| 260 - 363 | `known_taken` | per seat from seat 0: cards it took from the discard pile this round and still holds (counts) |
| 364 - 467 | `discards` | per seat from seat 0: cards it discarded this round (counts) |
| 468 - 519 | `taken_this_turn` | the card type just taken from the discard pile, which the mover may not discard this turn (one-hot; all 0 when none) |
| 520 - 532 | `wild_rank` | wild rank of the round (one-hot, A..K) |
| 533 - 543 | `round` | round number 1..11 (one-hot) |
| 544 - 545 | `phase` | phase of the turn (one-hot: draw, discard) |
| 546 - 547 | `current_player` | seat to move (one-hot) |
| 548 - 549 | `dealer` | dealer of this round (one-hot) |
| 550 - 551 | `went_out` | seat that went out this round (one-hot; all 0 if nobody) |
| 552 - 553 | `scores` | cumulative scores before this round, seat 0 first (/ 100) |
| 554 | `turn` | turns played this round (/ max_turns_per_round) |
| 555 | `game_over` | 1 once the last round is scored, else 0 |

### Legal Actions Mask

Draw phase: 0 when the stock (or the discard pile below its top, to reshuffle) has cards,
1 when the discard pile has a top card. Discard phase: `2 + c` for every card `c` held,
except the card type just taken from the discard pile (unless `discard_drawn_discard`, or
unless it is the only card type held).

## Action Space

| Action ID | Action                                    |
|-----------|-------------------------------------------|
| 0         | draw the top card of the stock            |
| 1         | take the top card of the discard pile     |
| 2 - 53    | discard card `id - 2` (going out when it leaves the hand fully melded) |

## Rewards

Given at the step that ends each round (the last turn after someone went out, or the turn
that reaches `max_turns_per_round`), to every agent, divided by `REWARD_SCALE = 100`:

| `reward_mode` | each round | at the end of the game |
|---|---|---|
| `relative` (default) | mean of the others' round penalties minus one's own (zero-sum) | nothing more |
| `penalty` | minus one's own round penalty | nothing more |
| `win` | 0 | +1 shared among the lowest totals, -1 shared among the rest; 0 for all on an all-way tie |

## Actions that are not moves, calls out of order

An action is an int `0..53`: a Python int, a numpy integer scalar or a 0-d numpy integer
array. Anything else at a live agent's turn (`True`, `1.7`, `"0"`, `None`, a 1-element
array) raises `TypeError` naming the allowed values, in `raw_env` and in `env()` alike: it
is a bug in the caller, not a move (PettingZoo's `AssertOutOfBoundsWrapper` would raise a
bare `AssertionError`, and `True` would crash `TerminateIllegalWrapper`, so `env()` checks
first). An int outside `0..53` raises `ValueError` in `env()`.

| what | `raw_env` | `env()` |
|---|---|---|
| an in-range action the mask forbids | `ValueError` naming the legal actions | the game ends, -1 for the offender (`TerminateIllegalWrapper`), the others 0 |
| a non-integer action | `TypeError` | `TypeError` |
| `step`, `observe` or `last` before `reset` | `RuntimeError`: call reset | PettingZoo's `OrderEnforcingWrapper` error |
| a step after the game is over | `None` for each agent in turn (`agent_iter` does it); any other action raises `ValueError`, a step once every agent is gone `RuntimeError`: call reset | the same (PettingZoo warns for a step with no agents left) |
| `observe` of an unknown agent | `ValueError` naming the agents | the same |
| `reset(seed=-1)` | `ValueError` naming the seed | the same |

Seeds are `None`, an int >= 0 or a non-empty list of them (a `SeedSequence` entropy).

## Infos

Every agent's info dict has the same keys, with the same types, at every step of every game
(so that libraries that stack infos into arrays, such as Tianshou's buffers or TorchRL's
specs, see one shape). They describe what the last step did:

| key | type | value |
|---|---|---|
| `went_out` | int | the seat whose discard at this step went out; -1 when nobody went out at this step |
| `round_number` | int | the round (1..11) that ended at this step; 0 when no round ended |
| `round_points` | list of N ints | the points of that round per seat (0 for the one who went out); all 0 when no round ended |
| `final_scores` | list of N ints | the game's totals per seat at the step that ends the game; all 0 before |

## Episode End

The episode is the whole game: the rounds of `rounds`, in order. All agents terminate after
the last round is scored. Rounds stopped by `max_turns_per_round` are scored, never
truncated; nothing is ever truncated.

## Version History

* v0: initial release (three-thirteen 0.1.0).
  `state()` and `state_space` added later in 0.1.0 (state layout version 1); observations,
  actions and rewards unchanged.
"""  # noqa: E501  (markdown tables: one row a line)

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .engine import game
from .engine.rules import Rules, option_names
from .engine.scoring import REWARD_SCALE, win_rewards  # noqa: F401  (re-exported: the rewards' scale and final rule)
from .engine.scoring import ILLEGAL_ACTION_REWARD, REWARD_MODES, round_rewards
from .env_checks import ActionCheckWrapper, checked_seed
from .observation import encode, observation_bounds
from .observation import get_layout  # noqa: F401  (re-exported: the observation's layout)
from .observation.state import encode_state, state_bounds
from .ui.render_text import render_text



def env(num_players: int = 2, reward_mode: str = "relative", render_mode: str | None = None,
        reveal_all: bool = False, **rule_options: Any) -> AECEnv:
    """The environment in PettingZoo's standard wrappers (illegal move ends the game, bounds,
    order); takes exactly the arguments of :class:`raw_env`."""
    wrapped = raw_env(num_players, reward_mode, render_mode, reveal_all, **rule_options)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=ILLEGAL_ACTION_REWARD)
    wrapped = ActionCheckWrapper(wrapped)
    wrapped = wrappers.OrderEnforcingWrapper(wrapped)
    return wrapped


ENV_ARGUMENTS = "num_players, reward_mode, render_mode, reveal_all"
"""The keyword arguments of :class:`raw_env` besides the rule options (named when one is unknown)."""


def rules_from_kwargs(num_players: int = 2, *, env_arguments: str = ENV_ARGUMENTS, **options: Any) -> Rules:
    """A :class:`Rules` from environment keyword arguments; unknown names are rejected, with the
    environment's own arguments (``env_arguments``) and the rule options named as allowed."""
    unknown = sorted(set(options) - set(option_names()))
    if unknown:
        raise TypeError(f"unknown argument(s) {unknown}: allowed are {env_arguments} and the rule options "
                        f"{list(option_names()[1:])}")
    return Rules(num_players=num_players, **options)


class raw_env(AECEnv, EzPickle):
    """Three Thirteen as a PettingZoo AEC environment; the module docstring is its documentation."""

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "three_thirteen_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, num_players: int = 2, reward_mode: str = "relative",
                 render_mode: str | None = None, reveal_all: bool = False, **rule_options: Any) -> None:
        EzPickle.__init__(self, num_players=num_players, reward_mode=reward_mode,
                          render_mode=render_mode, reveal_all=reveal_all, **rule_options)
        super().__init__()
        self.rules = rules_from_kwargs(num_players, **rule_options)
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode={reward_mode!r} is not allowed: use one of {list(REWARD_MODES)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not allowed: use one of "
                             f"{self.metadata['render_modes']} or None")
        if not isinstance(reveal_all, bool):
            raise ValueError(f"reveal_all={reveal_all!r} is not allowed: use True or False")
        self.reward_mode = reward_mode
        self.render_mode = render_mode
        self.reveal_all = reveal_all
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = list(self.possible_agents)
        low, high = observation_bounds(n, self.rules.max_turns_per_round, self.rules.num_decks)
        obs_space = gymnasium.spaces.Dict({
            "observation": gymnasium.spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": gymnasium.spaces.Box(low=0, high=1, shape=(game.NUM_ACTIONS,), dtype=np.int8),
        })
        s_low, s_high = state_bounds(n, self.rules.max_turns_per_round, self.rules.num_decks)
        self.state_space = gymnasium.spaces.Box(low=s_low, high=s_high, dtype=np.float32)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: gymnasium.spaces.Discrete(game.NUM_ACTIONS) for a in self.possible_agents}
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        self._no_mask = np.zeros(game.NUM_ACTIONS, dtype=np.int8)
        self._rng: np.random.Generator | None = None
        self.game_state: game.GameState | None = None
        self._table_renderer: Any = None

    # ------------------------------------------------------------------ spaces
    @classmethod
    def from_rules(cls, rules: Rules, reward_mode: str = "relative", render_mode: str | None = None,
                   reveal_all: bool = False) -> raw_env:
        """The env of a :class:`Rules` object (its player count included), for callers that hold one."""
        if not isinstance(rules, Rules):
            raise TypeError(f"rules={rules!r} is not a Rules object")
        options = {k: v for k, v in rules.to_dict().items() if k != "num_players"}
        return cls(rules.num_players, reward_mode, render_mode, reveal_all, **options)

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    @property
    def round_results(self) -> list[game.RoundRecord]:
        """Records of the finished rounds of the current game."""
        return self.game_state.round_results if self.game_state else []

    # ------------------------------------------------------------------ API
    def reset(self, seed: Any = None, options: dict | None = None) -> None:
        """Start a new game; ``seed`` makes it reproducible (else the env's generator continues).

        ``seed``: ``None``, an int >= 0 (numpy integers too) or a non-empty list of them (a
        ``SeedSequence`` entropy, as game records store); anything else is an error naming it.
        """
        seed = checked_seed(seed, allow_list=True)
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.game_state = game.new_game(self.rules, self._rng)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = self._blank_infos()
        self._events = False
        self.agent_selection = self.possible_agents[self.game_state.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Observation of ``agent``: computed afresh from ``game_state`` each call."""
        state = self.game_state
        seat = self._seat_of.get(agent)
        if seat is None or state is None:
            raise self._observe_error(agent)
        mask = game.action_mask(state) if seat == state.current_player and not state.game_over else self._no_mask
        return {"observation": encode(state, seat), "action_mask": mask}

    def state(self) -> np.ndarray:
        """The full state of the game (every hand, the stock; module docstring, "State Space"), for
        centralized critics: the same for every agent, computed afresh from ``game_state``."""
        if self.game_state is None:
            raise RuntimeError("state() called before reset(): call reset() first")
        return encode_state(self.game_state)

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict]:
        """Observation, cumulative reward, termination, truncation and info of the agent to act."""
        if self.game_state is None:
            raise RuntimeError("last() called before reset(): call reset() first")
        agent = self.agent_selection
        if agent not in self._cumulative_rewards:
            raise RuntimeError("last() called after the game is over and every agent has stepped out "
                               "(env.agents is empty): call reset() to start a new game")
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def step(self, action: int | None) -> None:
        state = self.game_state
        if state is None:
            raise RuntimeError("step() called before reset(): call reset() first")
        agent = self.agent_selection
        if state.game_over or self.terminations.get(agent, True) or self.truncations.get(agent, True):
            self._done_step(agent, action)
            return
        if type(action) is not int:
            action = self._checked_action(action)
        result = game.apply(state, action)
        if self._events:
            self.rewards = {a: 0.0 for a in self.agents}
            self.infos = self._blank_infos()
            self._events = False
        self._cumulative_rewards[agent] = 0.0
        if result.went_out:
            self._events = True
            self.infos = self._blank_infos(went_out=self._seat_of[agent])
        if result.round_record is not None:
            self._events = True
            self._score_round(result.round_record, result.game_over)
        if result.game_over:
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = self.possible_agents[state.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------------ checks and infos
    def _blank_infos(self, went_out: int = -1) -> dict[str, dict[str, Any]]:
        """Fresh info dicts: every key of the docstring's table, with its "nothing happened" value."""
        n = self.rules.num_players
        return {a: {"went_out": went_out, "round_number": 0, "round_points": [0] * n, "final_scores": [0] * n}
                for a in self.agents}

    def _checked_action(self, action: Any) -> int:
        """``action`` as an int, or ``TypeError`` naming the allowed values (``None`` explained)."""
        if action is None:
            raise TypeError(f"action None at {self.agent_selection}'s turn: None is only for an agent that is "
                            f"done (terminated or truncated); use {game.ACTION_TYPES_TEXT}")
        return game.as_action(action)

    def _done_step(self, agent: str, action: Any) -> None:
        """A step for an agent that is done: ``None`` removes it; after the last one, an error."""
        if agent not in self.terminations:
            raise RuntimeError("step() called after the game is over and every agent has stepped out "
                               "(env.agents is empty): call reset() to start a new game")
        if action is not None:
            raise ValueError(f"the game is over: {agent} is done (terminated), so its only action is None "
                             f"(env.agent_iter() hands each agent its last turn); got {action!r}. "
                             f"Call reset() to start a new game")
        self._was_dead_step(None)

    def _observe_error(self, agent: Any) -> Exception:
        if self.game_state is None:
            return RuntimeError("observe() called before reset(): call reset() first")
        return ValueError(f"unknown agent {agent!r}: the agents are {self.possible_agents}")

    def _score_round(self, record: game.RoundRecord, game_over: bool) -> None:
        """Set this step's rewards and infos from a finished round."""
        points = record.points
        n = len(points)
        values = round_rewards(self.reward_mode, points, self.game_state.scores, game_over)
        final = list(self.game_state.scores) if game_over else [0] * n
        for seat, agent in enumerate(self.possible_agents):
            self.rewards[agent] = values[seat]
        self.infos = {a: {"went_out": -1, "round_number": record.round_number, "round_points": list(points),
                          "final_scores": list(final)} for a in self.agents}

    def render(self) -> str | np.ndarray | None:
        """Text view (``ansi``/``human``) or picture (``rgb_array``) of the table."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode= to the env")
            return None
        if self.game_state is None:
            return None
        seat = self.game_state.current_player
        if self.render_mode == "rgb_array":
            from .ui.render_image import render_table  # imported lazily: Pillow is optional

            return render_table(self.game_state, seat, reveal_all=self.reveal_all)
        if self.render_mode == "human":
            from .ui.render_window import show_human  # a window when a display exists, else the text view

            self._table_renderer = show_human(self._table_renderer, self.game_state, seat,
                                              reveal_all=self.reveal_all, fps=self.metadata["render_fps"])
            return None
        return render_text(self.game_state, seat)

    def close(self) -> None:
        if self._table_renderer is not None:
            self._table_renderer.close()
            self._table_renderer = None

