"""``ismcts-v0``: single-observer Information Set MCTS over sampled worlds, guided by expert-v0.

Each decision (Cowling, Powley and Whitehouse 2012, SO-ISMCTS) searches a tree whose nodes are
the observer's information sets: an iteration samples a world consistent with the observation
(:func:`tt_env.search.sample_world`: :func:`~tt_env.search.determinize`, then the opponents'
hidden cards tilted towards the hands a good player holds after that many turns), walks the
tree from the root choosing, at each node, among the actions available in that world by UCB1
with availability counts, expands one node, plays the rest of the round out with the rollout
policy (``expert-v0`` by default) and backs up each seat's round points relative to the others
(the objective that adds up to the game's). Going out is automatic, as in the env.

What it adds to the expert it is built on, within a fraction of a second:

- **a prior:** the root's candidates are expert-v0's best ``candidates`` moves
  (:func:`expert_scores`); a decision with one candidate (a forced move, the last turn, a
  move that goes out) is played at once;
- **common random numbers:** every root candidate is tried in the same worlds, with the same
  stock order, so the comparison between two moves is not drowned by the luck of the draw;
- **a confidence gate:** the search leaves the expert's first choice only when another
  candidate's mean advantage over it, paired by world, is ``z`` standard errors above zero.
  The expert is right most of the time; small estimated differences are mostly noise;
- **adaptive effort:** worlds are added in blocks while the verdict is undecided, up to the
  budget, so iterations go where the choice is close;
- **belief:** uniform worlds deal opponents random hands, far worse than what they hold after
  a few turns of good play (they keep what melds); the tilt fixes that and removes hands that
  would already have gone out;
- **the last turn solved exactly:** after someone went out, the draw is a one-step expectation
  over the unseen cards (:mod:`.last_turn`), where expert-v0 takes the discard whenever it
  lowers its penalty. This, not the sampled worlds, is what makes it stronger than expert-v0
  (docs/agents.md, "Search over hidden cards": with ``exact_last_turn=False`` it is level).

The budget is counted in worlds (and so iterations), never in seconds, so results do not
depend on the machine. Same observation and same ``rng`` state, same action.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..engine import game
from ..engine.game import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD, GameState
from ..engine.rules import Rules
from ..engine.scoring import relative_rewards
from ..observation import encode
from ..search import HandBelief, sample_world
from .base import checked_mask
from .expert import ExpertAgent
from .inference import discard_is_consistent
from .last_turn import last_turn_scores
from ..observation.decode import decode_observation

StatePolicy = Callable[[GameState], int]


def relative_points(points: list[int] | list[float]) -> list[float]:
    """Each seat's round result as its reward: the mean of the others' points minus its own."""
    return relative_rewards(points, scale=1.0)


def expert_scores(expert: ExpertAgent, observation: np.ndarray, action_mask: np.ndarray) -> list[tuple[int, float]]:
    """``(action, score)`` of expert-v0's candidate moves, best (lowest score) first.

    The first is exactly the move ``expert.act`` plays. Draws: the value of the stock against
    that of taking the discard. Discards: the expert's pool (the few discards within its margin
    of the least penalty), each scored by the value of the hand left plus its feeding cost. A
    single candidate when the expert has nothing to weigh (one legal move, the last turn after
    someone went out, a discard that goes out).
    """
    view = decode_observation(observation)
    legal = np.flatnonzero(action_mask)
    if legal.size == 1:
        return [(int(legal[0]), 0.0)]
    if view.went_out is not None:  # the last turn: expert-v0 plays greedily
        return [(expert.act(observation, action_mask, np.random.default_rng(0)), 0.0)]
    hand, wild = view.hand, view.wild_rank
    ctx = expert.context(view)
    if action_mask[DRAW_STOCK] or action_mask[TAKE_DISCARD]:
        top = view.discard_top
        keep = [c for c in hand if c != top or expert.rules.discard_drawn_discard]
        if not keep:
            return [(DRAW_STOCK, 0.0)]
        v_now, _, gain = expert.hand_value(hand, ctx)
        _, v_take = expert.choose_discard(hand + [top], keep, ctx, False)
        # sorted is stable: on a tie the stock stays first, as in expert.act
        return sorted([(DRAW_STOCK, v_now - gain), (TAKE_DISCARD, v_take)], key=lambda x: x[1])
    out, ranked = expert.ranked_discards(hand, np.flatnonzero(action_mask[DISCARD_BASE:]).tolist(), wild)
    if out is not None:
        return [(DISCARD_BASE + out, -math.inf)]  # it goes out
    return sorted([(DISCARD_BASE + c, score) for c, score in expert.pool_scores(hand, ranked, ctx)],
                  key=lambda x: x[1])


def expert_rollout_policy(rules: Rules) -> StatePolicy:
    """expert-v0 for the seat to move of a world, reading that seat's own observation."""
    expert = ExpertAgent(rules)
    rng = np.random.default_rng(0)  # expert-v0 draws nothing from it

    def policy(state: GameState) -> int:
        return expert.act(encode(state, state.current_player), game.action_mask(state), rng)

    return policy


class _Edge:
    """An action from an information set: visits, summed reward of its actor, availability."""

    __slots__ = ("n", "w", "avail", "children")

    def __init__(self) -> None:
        self.n = 0
        self.w = 0.0
        self.avail = 0
        self.children: dict = {}


class ISMCTSAgent:
    """``ismcts-v0`` (see the module docstring). ``ismcts-v0`` is the defaults.

    Args:
        worlds: the most worlds sampled per decision; each root candidate is one iteration in
            each world (iterations = worlds x candidates).
        min_worlds: worlds of the first block; more blocks of this size follow while the
            verdict is open (the paired advantage of the best challenger between ``-z`` and
            ``z`` standard errors, or too few worlds to tell).
        candidates: root moves searched: expert-v0's best ones.
        z: standard errors by which a challenger must beat expert-v0's first choice.
        tree_depth: information sets below the root that the tree may grow (0: the root
            only; each deeper node chooses by UCB1 among expert-v0's best ``candidates``).
        exploration: UCB1 constant, in points of a round.
        rollout: the policy that plays out the round in a world (a ``StatePolicy``, or
            ``"expert"`` for expert-v0, ``"greedy"`` for greedy-v0); every seat uses it.
        belief: a number: the strength of the tilt of opponents' hidden cards towards low
            penalty, per turn the opponent has played this round (0: uniform worlds,
            ``determinize`` alone); or a model of the opponents' unknown cards that the worlds
            are drawn from (a :class:`~tt_env.search.HandBelief`, such as a
            ``models.belief.Belief``: ``ismcts-v1``).
        belief_steps: Metropolis steps of the tilt per opponent (a numeric ``belief`` only).
        margin: points a challenger's mean paired advantage must also exceed to be played (on
            top of the ``z`` test): small estimated gains are mostly the belief's bias.
        tilt: with a model ``belief``, the strength of a tilt of its hands towards low penalty
            (per discard of the opponent this round, as the numeric belief's; 0: the model's
            hands as drawn).
        infer: policy-based inference: a world in which expert-v0, in the seat before the
            observer, would not have made that seat's last discard is drawn again, up to this
            many times (:mod:`.inference`; 0: off).
        horizon: actions a play-out lasts before the round is valued as if it ended there (each
            seat's least penalty; 0: to the end of the round).
        exact_last_turn: play the draw of the last turn after someone went out by its exact
            expected penalty (:func:`~tt_env.agents.last_turn.last_turn_scores`); False: as
            expert-v0 plays it (greedily).
    """

    name = "ismcts-v0"

    def __init__(self, rules: Rules | None = None, *, worlds: int = 20, min_worlds: int = 10, candidates: int = 2,
                 z: float = 1.5, tree_depth: int = 0, exploration: float = 10.0,
                 rollout: StatePolicy | str = "expert", belief: float | HandBelief = 0.04, belief_steps: int = 60,
                 exact_last_turn: bool = True, margin: float = 0.0, tilt: float = 0.0, infer: int = 0,
                 horizon: int = 0) -> None:
        self.rules = rules or Rules()
        # numpy's numbers as Python's (np.int64(8) is a fine world count; np.bool_ stays refused)
        worlds, min_worlds, candidates, tree_depth, belief_steps, infer, horizon, z, exploration, margin, tilt = (
            v.item() if isinstance(v, np.generic) else v
            for v in (worlds, min_worlds, candidates, tree_depth, belief_steps, infer, horizon, z, exploration, margin,
                      tilt))
        belief = belief.item() if isinstance(belief, np.generic) else belief
        for key, value, low in (("worlds", worlds, 1), ("min_worlds", min_worlds, 1), ("candidates", candidates, 1),
                                ("tree_depth", tree_depth, 0), ("belief_steps", belief_steps, 0), ("infer", infer, 0),
                                ("horizon", horizon, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{key}={value!r} is not allowed: use an int >= {low}")
        numeric_belief = isinstance(belief, (int, float)) and not isinstance(belief, bool)
        if not numeric_belief and not callable(getattr(belief, "sample_unknown", None)):
            raise ValueError(f"belief={belief!r} is not allowed: use a finite number >= 0 (the tilt) or a belief model "
                             f"with sample_unknown(observation, rng)")
        for key, value in (("z", z), ("exploration", exploration), ("margin", margin), ("tilt", tilt)) + \
                ((("belief", belief),) if numeric_belief else ()):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{key}={value!r} is not allowed: use a finite number >= 0")
        if not isinstance(exact_last_turn, bool):
            raise ValueError(f"exact_last_turn={exact_last_turn!r} is not allowed: use True or False")
        self.exact_last_turn = exact_last_turn
        self.worlds, self.min_worlds = worlds, min(min_worlds, worlds)
        self.candidates, self.z, self.tree_depth, self.c = candidates, float(z), tree_depth, float(exploration)
        self.belief = float(belief) if numeric_belief else belief
        self.belief_steps, self.margin, self.tilt, self.infer = belief_steps, float(margin), float(tilt), infer
        self.horizon = horizon
        if rollout == "expert":
            rollout = expert_rollout_policy(self.rules)
        elif rollout == "greedy":
            from ..search.simulation import greedy as rollout
        if not callable(rollout):
            raise ValueError(f"rollout={rollout!r} is not allowed: use 'expert', 'greedy' or a function "
                             f"state -> action")
        self.rollout: StatePolicy = rollout
        self.expert = ExpertAgent(self.rules)
        self.last_search: dict = {}
        """What the last searched decision found: worlds, candidates, mean advantages, choice."""

    # ------------------------------------------------------------------ one iteration
    def _tree_actions(self, state: GameState) -> list[int]:
        """Actions a tree node below the root considers: expert-v0's best for the seat to move."""
        seat = state.current_player
        obs, mask = encode(state, seat), game.action_mask(state)
        return [a for a, _ in expert_scores(self.expert, obs, mask)[:self.candidates]]

    def _iterate(self, root: dict[int, _Edge], world: GameState, action: int) -> list[float]:
        """Play ``action`` in ``world`` (mutated), descend/expand the tree, roll out; back up rewards."""
        path: list[tuple[_Edge, int]] = []
        edges, depth = root, 0
        while True:
            seat = world.current_player
            edge = edges.get(action)
            if edge is None:
                edge = edges[action] = _Edge()
            edge.avail += depth == 0
            fresh = edge.n == 0
            result = game.apply(world, action)
            path.append((edge, seat))
            if result.round_record is not None:
                rewards = relative_points(result.round_record.points)
                break
            if fresh or depth >= self.tree_depth:
                rewards = self._rollout(world)
                break
            # the observer sees its own stock draws: the card drawn is part of its next information set
            key = world.hands[0][-1] if (action == DRAW_STOCK and seat == 0) else None
            edges = edge.children.setdefault(key, {})
            action = self._select(edges, self._tree_actions(world))
            depth += 1
        for e, seat in path:
            e.n += 1
            e.w += rewards[seat]
        return rewards

    def _select(self, edges: dict[int, _Edge], actions: list[int]) -> int:
        """UCB1 with availability counts among the actions available here (unvisited first)."""
        best, best_score = actions[0], -math.inf
        for a in actions:
            e = edges.get(a)
            if e is None:
                e = edges[a] = _Edge()
            e.avail += 1
            if e.n == 0:
                return a
            score = e.w / e.n + self.c * math.sqrt(math.log(e.avail) / e.n)
            if score > best_score:
                best, best_score = a, score
        return best

    def _rollout(self, world: GameState) -> list[float]:
        policy = self.rollout
        for _ in range(self.horizon or 10_000):
            result = game.apply(world, policy(world))
            if result.round_record is not None:
                return relative_points(result.round_record.points)
        return relative_points(game.round_penalties(world))  # the horizon: the penalties held now

    # ------------------------------------------------------------------ the decision
    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        view = decode_observation(observation)
        mask = checked_mask(action_mask, view.hand, view.phase)
        if self.exact_last_turn and mask[DRAW_STOCK] and mask[TAKE_DISCARD]:
            if view.went_out is not None:
                return last_turn_scores(view, self.rules)[0][0]
        prior = expert_scores(self.expert, observation, mask)
        candidates = [a for a, _ in prior[:self.candidates]]
        if len(candidates) == 1:
            return candidates[0]
        root: dict[int, _Edge] = {}
        rewards: dict[int, list[float]] = {a: [] for a in candidates}
        used = 0
        choice = candidates[0]
        while used < self.worlds:
            block = min(self.min_worlds, self.worlds - used)
            for _ in range(block):
                seed = int(rng.integers(2 ** 62))
                world = self._world(observation, mask, seed)
                for a in candidates:
                    copy = world.copy(np.random.default_rng(seed + 1))  # the same future in every branch
                    rewards[a].append(self._iterate(root, copy, a)[0])
            used += block
            choice, decided = self._verdict(rewards, candidates)
            if decided:
                break
        self.last_search = {"worlds": used, "candidates": candidates, "choice": choice,
                            "advantage": {a: float(np.mean(np.subtract(rewards[a], rewards[candidates[0]])))
                                          for a in candidates[1:]}}
        return choice

    def _world(self, observation: np.ndarray, mask: np.ndarray, seed: int) -> GameState:
        """A world from the belief; with ``infer``, redrawn while the last discard before the observer
        would not have been expert-v0's (the last draw is kept if none is)."""
        world_rng = np.random.default_rng(seed)
        for _ in range(self.infer + 1):
            world = sample_world(observation, self.rules, world_rng, action_mask=mask, belief=self.belief,
                                 steps=self.belief_steps, tilt=self.tilt)
            if not self.infer or discard_is_consistent(world, self.expert.act):
                break
        return world

    def _verdict(self, rewards: dict[int, list[float]], candidates: list[int]) -> tuple[int, bool]:
        """(the move to play, whether more worlds could change it): the expert's first choice unless a
        challenger's paired advantage is ``z`` standard errors above zero."""
        base = np.asarray(rewards[candidates[0]])
        best, best_t, open_ = candidates[0], self.z, False
        for a in candidates[1:]:
            diff = np.asarray(rewards[a]) - base
            sd = float(diff.std(ddof=1)) if diff.size > 1 else 0.0
            if sd == 0.0:
                continue  # the same outcome in every world: nothing to prefer
            t = float(diff.mean()) / (sd / math.sqrt(diff.size))
            if t > best_t and float(diff.mean()) > self.margin:
                best, best_t = a, t
            if -self.z < t <= self.z:
                open_ = True
        return best, not open_
