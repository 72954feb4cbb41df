"""``ismcts-v0``: single-observer Information Set MCTS over sampled worlds (prototype)."""

from __future__ import annotations

import math

import numpy as np

from ..engine import game
from ..engine.game import DISCARD_BASE, DRAW_STOCK, PHASE_DISCARD, GameState
from ..engine.rules import Rules
from ..search import determinize
from ..simulation import StatePolicy, greedy, greedy_discards
from .expert import ExpertAgent


class _Edge:
    __slots__ = ("n", "w", "avail", "children")

    def __init__(self) -> None:
        self.n = 0
        self.w = 0.0
        self.avail = 0
        self.children: dict = {}


class _Node:
    __slots__ = ("edges",)

    def __init__(self) -> None:
        self.edges: dict[int, _Edge] = {}


def relative_points(points: list[int]) -> list[float]:
    """Each seat's round result as the reward: mean of the others' points minus its own."""
    n = len(points)
    total = sum(points)
    return [(total - p) / (n - 1) - p for p in points]


def expert_scores(expert: ExpertAgent, observation: np.ndarray, action_mask: np.ndarray) -> list[tuple[int, float]]:
    """``(action, score)`` of expert-v0's candidates, best (lowest score) first: the prior of the search."""
    from ..engine.game import TAKE_DISCARD
    from .greedy import discard_key, without
    from .observation_view import decode_observation

    view = decode_observation(observation)
    if view.went_out is not None:  # the last turn: expert-v0 plays greedily, nothing to search
        return [(expert.act(observation, action_mask, np.random.default_rng(0)), 0.0)]
    hand, wild = view.hand, view.wild_rank
    ctx = expert.context(view)
    if action_mask[DRAW_STOCK] or action_mask[TAKE_DISCARD]:
        if not (action_mask[DRAW_STOCK] and action_mask[TAKE_DISCARD]):
            return [(int(np.flatnonzero(action_mask)[0]), 0.0)]
        top = view.discard_top
        legal = [c for c in hand if c != top or expert.rules.discard_drawn_discard]
        if not legal:
            return [(DRAW_STOCK, 0.0)]
        v_now, _, gain = expert.hand_value(hand, ctx)
        _, v_take = expert.choose_discard(hand + [top], legal, ctx, view.went_out is not None)
        scores = [(DRAW_STOCK, v_now - gain), (TAKE_DISCARD, v_take)]
        return sorted(scores, key=lambda x: x[1])
    legal = np.flatnonzero(action_mask[DISCARD_BASE:]).tolist()
    scored = []
    left = expert.discard_penalties(hand, wild)
    for c in sorted(set(legal)):
        p = left[c] if c in left else expert.penalty(without(hand, c), wild)
        if p == 0:
            return [(DISCARD_BASE + c, -1e9)]
        scored.append((discard_key(p, c, wild, expert.aces_high), c))
    scored.sort()
    best_p = scored[0][0][0]
    pool = [c for key, c in scored if key[0] <= best_p + expert.margin][:expert.candidates]
    out = []
    values = expert.hand_values([without(hand, c) for c in pool], ctx)
    for c, (v, _, _) in zip(pool, values):
        out.append((DISCARD_BASE + c, v + ctx.feed[c]))
    out.sort(key=lambda x: x[1])
    return out


class ISMCTSAgent:
    name = "ismcts-v0"

    def __init__(self, rules: Rules | None = None, *, iterations: int = 200, exploration: float = 8.0,
                 candidates: int = 4, opponent_candidates: int = 3, rollout: StatePolicy = greedy,
                 rollout_turns: int | None = None, halving: bool = True, prior: str = "expert",
                 leaf: str = "penalty", close: float = 3.0) -> None:
        self.rules = rules or Rules()
        self.iterations, self.c = iterations, exploration
        self.candidates, self.opp_candidates = candidates, opponent_candidates
        if rollout == "expert":
            from ..observation import encode as _enc
            _ex = ExpertAgent(self.rules)
            _r = np.random.default_rng(0)

            def rollout(st: GameState) -> int:
                return _ex.act(_enc(st, st.current_player), game.action_mask(st), _r)
        self.rollout, self.rollout_turns = rollout, rollout_turns
        self.halving = halving
        self.expert = ExpertAgent(self.rules) if prior == "expert" else None
        self.stats: dict = {}
        self.leaf = leaf
        self.close = close
        self._leaf_expert = ExpertAgent(self.rules)
        self._ctx = None

    # ------------------------------------------------------------------ the tree
    def _actions(self, s: GameState, root_seat: int, depth: int) -> list[int]:
        legal = game.legal_actions(s)
        if s.phase != PHASE_DISCARD or len(legal) <= 1:
            return legal
        k = self.candidates if s.current_player == root_seat else self.opp_candidates
        ranked = greedy_discards(s, s.hands[s.current_player], s.taken_this_turn)
        return [DISCARD_BASE + c for _, c in ranked[:k]]

    def _simulate(self, node: _Node, s: GameState, first_action: int | None) -> list[float]:
        """One iteration from ``node`` in world ``s`` (mutated); returns the rewards of every seat."""
        path: list[tuple[_Edge, int]] = []
        action = first_action
        depth = 0
        while True:
            seat = s.current_player
            if action is None:
                actions = self._actions(s, 0, depth)
                edges = node.edges
                best, best_score, fresh = None, -math.inf, None
                for a in actions:
                    e = edges.get(a)
                    if e is None:
                        e = edges[a] = _Edge()
                    e.avail += 1
                    if e.n == 0:
                        if fresh is None:
                            fresh = a
                        continue
                    score = e.w / e.n + self.c * math.sqrt(math.log(e.avail) / e.n)
                    if score > best_score:
                        best, best_score = a, score
                action = fresh if fresh is not None else best
            edge = node.edges.get(action)
            if edge is None:
                edge = node.edges[action] = _Edge()
                edge.avail += 1
            expand = edge.n == 0
            result = game.apply(s, action)
            path.append((edge, seat))
            if result.round_record is not None:
                rewards = relative_points(result.round_record.points)
                break
            if expand:
                rewards = self._rollout(s)
                break
            key = s.hands[0][-1] if (action == DRAW_STOCK and seat == 0) else None
            child = edge.children.get(key)
            if child is None:
                child = edge.children[key] = _Node()
            node = child
            action = None
            depth += 1
        for edge, seat in path:
            edge.n += 1
            edge.w += rewards[seat]
        return rewards

    def _rollout(self, s: GameState) -> list[float]:
        limit = 10_000 if self.rollout_turns is None else 2 * self.rollout_turns * s.rules.num_players
        for _ in range(limit):
            result = game.apply(s, self.rollout(s))
            if result.round_record is not None:
                return relative_points(result.round_record.points)
        if self.leaf == "expert":
            ex, ctx = self._leaf_expert, self._ctx
            vals = [0.0 if seat == s.went_out else ex.hand_value(s.hands[seat], ctx)[0]
                    for seat in range(s.rules.num_players)]
            return relative_points(vals)
        return relative_points(game.round_penalties(s))

    # ------------------------------------------------------------------ the decision
    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
        if legal.size == 1:
            return int(legal[0])
        worlds_rng = np.random.default_rng(rng.integers(2 ** 63))
        if self.leaf == "expert":
            from .observation_view import decode_observation
            self._ctx = self._leaf_expert.context(decode_observation(observation))
        base = determinize(observation, self.rules, worlds_rng, action_mask=action_mask)
        root_actions = self._actions(base, 0, 0)
        if self.expert is not None:
            prior = expert_scores(self.expert, observation, action_mask)
            if len(prior) == 1 or prior[1][1] - prior[0][1] > self.close:
                return prior[0][0]
            root_actions = [a for a, v in prior if v - prior[0][1] <= self.close][:self.candidates]
        if len(root_actions) == 1:
            return root_actions[0]
        root = _Node()
        seeds = rng.integers(2 ** 62, size=self.iterations)
        if not self.halving:
            for i in range(self.iterations):
                w = determinize(observation, self.rules, np.random.default_rng(seeds[i]), action_mask=action_mask)
                self._simulate(root, w, None)
            return max(root.edges.items(), key=lambda kv: kv[1].n)[0]
        alive = list(root_actions)
        rounds = max(1, math.ceil(math.log2(len(alive))))
        used = 0
        world_index = 0
        while len(alive) > 1:
            per = max(1, self.iterations // (rounds * len(alive)))
            for j in range(per):
                seed = seeds[(world_index + j) % len(seeds)]
                world = determinize(observation, self.rules, np.random.default_rng(seed), action_mask=action_mask)
                for a in alive:
                    self._simulate(root, world.copy(np.random.default_rng(seed + 1)), a)
                    used += 1
            world_index += per
            scored = sorted(alive, key=lambda a: -root.edges[a].w / root.edges[a].n)
            alive = scored[:max(1, len(alive) // 2)]
        self.stats = {"iterations": used}
        return alive[0]
