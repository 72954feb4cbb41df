"""``BatchGame``: thousands of whole Three Thirteen games as tensors, advanced by one call.

The rules are those of :mod:`tt_env.engine.game` (the specification), move for move; the
differential tests play both side by side through :meth:`BatchGame.to_game_state`. A step is a
fixed sequence of tensor operations over every table. The rare, costly parts (a reshuffle, the
end of a round, a new deal, the go-out check) run on the tables that need them: on a CPU on
just those rows (picking them is free there), on other devices on every row with the result
selected by mask (or, by the fused Triton kernels, written into those rows only), so that
nothing waits on the host.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch

from ..engine.game import GameState
from ..engine.rules import Rules
from ..engine.scoring import REWARD_MODES
from ..env_checks import checked_flag, table_count
from ..observation import observation_size
from . import solver_triton
from .buffers import ReusedArrays
from .deal import deal_rows, deals_in_c, deals_in_triton, dealt, reshuffle, reshuffle_rows
from .deal_triton import deal_masked, reshuffle_masked
from .devices import checked_device
from .go_out import melds_completely, solve_discards_and_round_ends
from .graphs import step_graphs
from .kernels import KERNEL_BACKENDS, c_observe_and_mask, use_c, use_triton
from .moves import apply_moves, end_turns
from .observe import observe, observe_and_mask, seat_hand_bytes
from .random_keys import seed_words, stream_base, uniform_below
from .solver import BACKENDS as SOLVER_BACKENDS
from .solver import least_penalty
from .state import BatchState
from .step_inputs import checked_step, table_mask
from .timestep import TimeStep, step_rewards, win_rewards

__all__ = ["MAX_BATCH_DECKS", "SOLVING_MODES", "BatchGame", "TimeStep", "win_rewards"]

MAX_BATCH_DECKS = 4
"""Most decks the batched engine plays (its solver's tables are sized for up to 4)."""
SOLVING_MODES = ("auto", "gathered", "kept")
"""Values of ``BatchGame(solving=...)``: which hands the every-row (accelerator) path solves."""
_FIRST_DEALER_SALT = 0x632BE5AB
"""Salt of a new game's first-dealer draw (``random_keys.uniform_below``)."""


class BatchGame:
    """``num_tables`` games under one :class:`Rules`, held on ``device`` and stepped together.

    Args:
        rules: the rules of every table (2-8 players, up to :data:`MAX_BATCH_DECKS` decks).
        num_tables: tables in the batch (B).
        device: torch device of every tensor (``"cpu"``, ``"cuda"``, ``"cuda:1"`` ...).
        seed: root of every table's random stream (table ``i`` plays the same games for the
            same seed whatever the other tables do, on any device).
        reward_mode: ``"relative"``, ``"penalty"`` or ``"win"``, as in ``three_thirteen_v0``.
        autoreset: start a new game on a table as soon as its game ends.
        check_actions: raise ``ValueError`` for an illegal action (the one wait on the host in
            :meth:`step`). Off, for the fastest runs, an illegal action plays its table's first legal one.
        solver: backend of :func:`tt_env.batch.least_penalty` (``"auto"``: C on a CPU, the
            tensor program fused by Triton on CUDA when Triton is installed, else the plain
            tensor program; ``"torch"`` runs the tensor program on a CPU too, ``"triton"``
            forces the fused kernels).
        solving: which hands the every-row path (any device but a CPU) solves, with no wait on
            the host. ``"gathered"``: only those that need it, gathered to the front of the batch
            (the discarded hands that could meld completely, and the hands of the tables whose
            round ends), which the fused kernels stop after; ``"kept"``: the mover's hand at
            every discard, its penalty kept per seat to score the round (the plain tensor
            program solves every row anyway). ``"auto"``: gathered with the fused solver, else
            kept. A CPU solves just the hands that need it whatever this says.
        kernels: the code of the step's other parts (:data:`tt_env.batch.kernels.KERNEL_BACKENDS`):
            ``"auto"``, the C loops on a CPU and the fused Triton kernels on CUDA where Triton is
            installed, else the tensor code; ``"torch"``, the tensor code everywhere; ``"c"``, the
            C loops (a CPU only); ``"triton"``, the kernels (interpreted on a CPU: for tests).
        cuda_graphs: replay each lockstep step as a CUDA graph, one launch instead of a couple of
            hundred (:mod:`tt_env.batch.graphs`; CUDA only). Steps out of lockstep, and the first
            two of each phase, run as usual.
    """

    def __init__(self, rules: Rules, num_tables: int, device: str | torch.device = "cpu", seed: int = 0,
                 reward_mode: str = "relative", *, autoreset: bool = True, check_actions: bool = True,
                 solver: str = "auto", solving: str = "auto", kernels: str = "auto",
                 cuda_graphs: bool = False) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules={rules!r} is not a Rules: build one with tt_env.engine.rules.Rules(...)")
        if rules.num_decks > MAX_BATCH_DECKS:
            raise ValueError(f"decks={rules.num_decks} is not allowed in the batched engine: it plays 1 to "
                             f"{MAX_BATCH_DECKS} decks (use the scalar engine for more)")
        num_tables = table_count(num_tables, "num_tables")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode={reward_mode!r} is not allowed: use one of {list(REWARD_MODES)}")
        self.rules = rules
        self.num_tables = num_tables
        self.num_players = rules.num_players
        self.device = checked_device(device)
        self.reward_mode = reward_mode
        if solver not in SOLVER_BACKENDS:
            raise ValueError(f"solver={solver!r} is not allowed: use one of {list(SOLVER_BACKENDS)}")
        self.solver = solver
        if solving not in SOLVING_MODES:
            raise ValueError(f"solving={solving!r} is not allowed: use one of {list(SOLVING_MODES)}")
        if kernels not in KERNEL_BACKENDS:
            raise ValueError(f"kernels={kernels!r} is not allowed: use one of {list(KERNEL_BACKENDS)}")
        use_c(c_observe_and_mask, self.device, kernels)  # "c" off a CPU or unbuilt, "triton" without
        use_triton(self.device, kernels)                 # Triton: a ValueError saying so, here
        fused = solver == "triton" or (solver == "auto" and self.device.type == "cuda" and solver_triton.available())
        self._gathered = solving == "gathered" or (solving == "auto" and fused)
        """Every-row path: solve only the hands that need it, gathered to the front (see ``solving``)."""
        self.autoreset = checked_flag(autoreset, "autoreset")
        self.check_actions = checked_flag(check_actions, "check_actions")
        self.observation_size = observation_size(rules.num_players)
        self.shoe_size = rules.num_cards
        self._sparse = self.device.type == "cpu"
        """Whether the rare parts of a step run on the rows that need them (CPU) or on every row
        with a select (other devices; tests set it False to run the accelerator's path on a CPU)."""
        self._outputs = ReusedArrays() if self._sparse else None  # the observations' memory, on a CPU
        self._kernel_backend = kernels
        """``kernels``: tests and benchmarks set ``"torch"`` or ``"triton"`` with ``_sparse`` False
        to run a GPU's code on a CPU."""
        self._rows = torch.arange(num_tables, device=self.device)
        self._hand_penalty = torch.zeros(num_tables, self.num_players, dtype=torch.int64, device=self.device)
        """Accelerator path: each seat's least penalty after its last discard (see _cached_scoring)."""
        self._round_penalties: torch.Tensor | None = None
        """Gathered solving: this step's penalties of the hands a round's end scores (-1 elsewhere;
        ``go_out.solve_discards_and_round_ends``)."""
        self._rounds = torch.tensor(rules.rounds, dtype=torch.int64, device=self.device)
        self._seed32 = seed_words(seed)
        self.state = BatchState.empty(num_tables, self.num_players, self.shoe_size, self.device)
        self._mask: torch.Tensor | None = None
        self._lockstep_phase: int | None = None
        """0 or 1 when every table still playing is known (on the host, without reading a tensor)
        to be in that phase, else None: see :meth:`step`."""
        self._graphs = step_graphs(self, checked_flag(cuda_graphs, "cuda_graphs"))
        """The captured lockstep steps (``cuda_graphs``; tests give a CPU stand-in backend)."""

    def __repr__(self) -> str:
        return (f"BatchGame({self.rules!r}, num_tables={self.num_tables}, device={str(self.device)!r}, "
                f"reward_mode={self.reward_mode!r}, autoreset={self.autoreset}, check_actions={self.check_actions}, "
                f"solver={self.solver!r}, kernels={self._kernel_backend!r}, cuda_graphs={self._graphs is not None})")

    # ------------------------------------------------------------------ public calls
    def reset(self, seed: int | None = None) -> TimeStep:
        """Start a new game on every table; ``seed`` restarts every table's random stream."""
        if seed is not None:
            self._seed32 = seed_words(seed)
            self.state.counter.zero_()
        self._deal(self.state, self._rows, torch.ones(self.num_tables, dtype=torch.bool, device=self.device))
        self._lockstep_phase = 0
        return self._quiet_timestep()

    def step(self, actions: torch.Tensor, active: torch.Tensor | None = None,
             final_seat: torch.Tensor | None = None) -> TimeStep:
        """Play ``actions`` ((B,) int64 action ids, one per table, for its seat to move).

        ``active`` ((B,) bool) limits the step to some tables (the others stay as they are and
        their actions are ignored): multi-agent loops step only the tables waiting on one agent.
        ``final_seat`` ((B,) seats) picks whose view a finished game's ``final_observation`` is
        (default: the seat that made the last move).

        Tables stepped together stay in lockstep: every table still playing draws, then
        discards (a round, and a game, end on a discard and the next starts with a draw). The
        engine follows that on the host after ``reset()`` while every step moves every table
        (``active=None``), and skips the parts of a step no table needs: the go-out check and
        the round's end on a draw step, the reshuffle on a discard step. (They are selects on
        the every-row path, so this halves a GPU step's solving.) ``active``,
        ``reset_tables`` of tables that are discarding, and loading tables in different phases
        (``from_game_states``, ``load_state``) end the lockstep until the next ``reset()``.
        With ``cuda_graphs`` the lockstep steps are replayed graphs."""
        actions, active, final_seat = self._checked(actions, active, final_seat)
        if self._graphs is not None and active is None and final_seat is None and self._lockstep_phase is not None:
            return self._graphs.step(actions, self._advance)
        return self._advance(actions, active, final_seat)

    def _advance(self, actions: torch.Tensor, active: torch.Tensor | None = None,
                 final_seat: torch.Tensor | None = None) -> TimeStep:
        """:meth:`step`'s work, after its checks (what a CUDA graph captures)."""
        lockstep = self._lockstep_phase if active is None else None
        self._lockstep_phase = None if lockstep is None else 1 - lockstep
        s = self.state
        n = self.num_players
        seat = s.current  # (read before end_turns passes the turn on)
        discard = apply_moves(s, actions, active, self._refill_stocks,
                              may_draw=lockstep != 1, backend=self._kernel_backend)

        # going out: the first discard that leaves a fully melded hand
        checking = discard & (s.went_out < 0)
        if lockstep == 0:  # nobody discards: nobody goes out, no round ends
            zero = torch.zeros_like(checking)
        else:
            zero = self._penalty_is_zero(checking, seat, discard)
        went_now, ends = end_turns(s, discard, checking & zero, self.rules.max_turns_per_round,
                                   backend=self._kernel_backend)

        points = torch.zeros(self.num_tables, n, dtype=torch.int64, device=self.device)
        ended_round = torch.where(ends, self._round_number(s), 0)
        if lockstep != 0:
            self._on_rows(ends, self._score_round, points, ends)
        scores = s.scores.clone()
        over = ends & s.game_over
        rewards = step_rewards(self.reward_mode, points, ends, over, s.scores, self._sparse)
        final = None
        if lockstep != 0:
            # one deal per table whose round ended: its next round, or (auto-reset) a new game
            if self.autoreset or final_seat is not None:  # (without auto-reset: the finished game's own table)
                final = self._final_observations(over, final_seat)
            fresh = over if self.autoreset else torch.zeros_like(over)
            self._deal_tables(ends if self.autoreset else ends & ~over, fresh)
        return self._timestep(rewards, ends, over, scores, points, final, went_now, ended_round)

    @property
    def round_number(self) -> torch.Tensor:
        """(B,) round number (1..11) of each table's current round."""
        return self._round_number(self.state)

    # ------------------------------------------------------------------ bridges
    def to_game_state(self, table: int) -> GameState:
        """Table ``table`` as a scalar-engine :class:`GameState` (see :mod:`tt_env.batch.bridge`)."""
        from .bridge import table_to_game_state

        return table_to_game_state(self, table)

    def from_game_states(self, states: Sequence[GameState]) -> TimeStep:
        """Load one scalar state per table (``len(states) == num_tables``) and return its TimeStep
        (a state that does not fit is refused, and the batch is left as it was)."""
        from .bridge import load_game_states

        return load_game_states(self, states)

    def load_state(self, fields: Mapping[str, torch.Tensor]) -> TimeStep:
        """Load a state saved from a game of the same rules and ``num_tables`` (copies of
        ``state.fields()``, say, kept for a resume) and return its TimeStep. Play goes on from
        there under this game's rules (a state does not hold them): the lockstep and the kept
        penalties are derived again from the loaded tables, and their random streams go on from
        the saved counters under this game's seed. A state refused leaves the batch as it was."""
        from .bridge import load_state_fields

        return load_state_fields(self, fields)

    # ------------------------------------------------------------------ internals
    def _round_number(self, s: BatchState) -> torch.Tensor:
        return self._rounds.index_select(0, s.round_index)

    def reset_tables(self, mask: torch.Tensor) -> TimeStep:
        """Start new games on the tables where ``mask`` ((B,) bool) holds; the others go on."""
        if self._mask is None:  # (the others would be undealt tables)
            raise RuntimeError("reset_tables() called before reset(): call reset() first")
        mask = table_mask(mask, self.num_tables, self.device, "mask", "the tables to deal new games on")
        self._deal_tables(mask, torch.ones_like(mask))
        if self._lockstep_phase != 0:  # a new game starts in the draw phase
            self._lockstep_phase = None
        return self._quiet_timestep()

    def _quiet_timestep(self) -> TimeStep:
        """The TimeStep of the state as it is, with no rewards and no events (after a deal or a load)."""
        zeros = torch.zeros(self.num_tables, self.num_players, device=self.device)
        flags = torch.zeros(self.num_tables, dtype=torch.bool, device=self.device)
        return self._timestep(zeros, flags, flags, self.state.scores.clone(), zeros.long(), None)

    def _checked(self, actions: torch.Tensor, active: torch.Tensor | None = None,
                 final_seat: torch.Tensor | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """:meth:`step`'s inputs checked and on the device (:func:`tt_env.batch.step_inputs.checked_step`)."""
        if self._mask is None:
            raise RuntimeError("step() called before reset(): call reset() first")
        return checked_step(actions, active, final_seat, self._mask, self.state.current, self.state.game_over,
                            self.num_players, self.check_actions)

    def _on_rows(self, mask: torch.Tensor, fn: Callable[..., None], *outputs: torch.Tensor) -> None:
        """Run ``fn(part, rows, *output_parts)`` on the tables where ``mask`` holds and write them back.

        On a CPU ``part`` holds just those tables (copies); elsewhere every table, sharing the
        state's tensors (so ``fn`` must replace a field, never write into it), and only the
        masked tables of the fields it replaced are kept (no wait on the host). ``outputs`` are
        (B, ...) tensors ``fn`` fills for its rows (or reads: one left unchanged is written back
        as it was).
        """
        if self._sparse:
            rows = mask.nonzero().squeeze(1)  # host: CPU only (self._sparse), no device to wait for
            if rows.numel() == 0:
                return
            part = self.state.rows_on_read(rows)  # gathers only the fields fn reads
            outs = [o[rows] for o in outputs]
            fn(part, rows, *outs)
            part.write_back()  # and writes back only those it replaced
            for o, p in zip(outputs, outs, strict=True):
                o[rows] = p
            return
        part = self.state.shared()  # fn replaces the fields it changes: nothing to copy
        outs = [o.clone() for o in outputs]
        fn(part, self._rows, *outs)
        self.state.select(mask, part)
        for o, p in zip(outputs, outs, strict=True):
            o.copy_(torch.where(mask.view(-1, *([1] * (o.dim() - 1))), p, o))

    def _final_observations(self, over: torch.Tensor, seat: torch.Tensor | None
                            ) -> tuple[torch.Tensor, torch.Tensor] | torch.Tensor | None:
        """Observations of the finished games (``over``) before they restart: on a CPU (rows,
        their observations), None when there are none; elsewhere every row's."""
        s = self.state
        if self._sparse:
            rows = over.nonzero().squeeze(1)  # host: CPU only (self._sparse), no device to wait for
            if rows.numel() == 0:
                return None
            part = s.rows(rows)
            return rows, observe(part, self._round_number(part), self.shoe_size, self.rules.max_turns_per_round,
                                 None if seat is None else seat[rows], backend=self._kernel_backend)
        return observe(s, self._round_number(s), self.shoe_size, self.rules.max_turns_per_round, seat,
                       backend=self._kernel_backend)

    @property
    def _cached_scoring(self) -> bool:
        """Whether a round's scores come from the penalties kept at each discard (accelerator path).

        On the every-row path the go-out check solves the mover's hand on every row anyway, so
        keeping that penalty per seat makes scoring a round free, instead of solving all N hands
        of every table at every step. It is exact when every seat discards in a round before it
        ends: after someone goes out every other seat takes a turn, and a round ended by
        ``max_turns_per_round`` saw that many discards in seat order, so ``max_turns_per_round
        >= num_players`` suffices (the hand that went out scores 0). Otherwise the hands are solved."""
        return not self._sparse and not self._gathered and self.rules.max_turns_per_round >= self.num_players

    def _penalty_is_zero(self, mask: torch.Tensor, seat: torch.Tensor, discard: torch.Tensor) -> torch.Tensor:
        """(B,) whether the hand of ``seat`` melds completely, meaningful where ``mask`` holds (the
        caller keeps only those rows; on a CPU every row is answered, the filter makes that cheap).
        On the every-row path the penalty of every ``discard`` row is also kept for scoring."""
        wild = self._round_number(self.state) + 2
        if self._sparse:  # only the hands that could meld completely are solved (melds_completely)
            hands = seat_hand_bytes(self.state.hands, seat, backend=self._kernel_backend)
            return melds_completely(hands, wild, self.rules, backend=self.solver, check=False)
        hands = self.state.hands[self._rows, seat].to(torch.uint8)
        if self._gathered:  # as on a CPU, but gathered to the front instead of picked out
            zero, self._round_penalties = solve_discards_and_round_ends(
                self.state, mask, seat, discard, hands, wild, self.rules, self.solver, self._kernel_backend)
            return zero
        pen = least_penalty(hands, wild, self.rules, backend=self.solver, check=False)
        kept = self._hand_penalty.gather(1, seat.unsqueeze(1)).squeeze(1)
        self._hand_penalty.scatter_(1, seat.unsqueeze(1), torch.where(discard, pen, kept).unsqueeze(1))
        return mask & (pen == 0)

    def _solve_every_hand(self) -> None:
        """Fill the kept penalties from the hands as they are (after a load: the seats that do not
        discard again before their round ends are scored with these)."""
        b, n = self.num_tables, self.num_players
        wild = self._round_number(self.state).repeat_interleave(n) + 2
        hands = self.state.hands.reshape(b * n, 52).to(torch.uint8)
        self._hand_penalty = least_penalty(hands, wild, self.rules, backend=self.solver, check=False).view(b, n).long()

    def _score_round(self, part: BatchState, rows: torch.Tensor, points: torch.Tensor, ending: torch.Tensor) -> None:
        """Score every hand of the ``part`` tables whose round is ``ending`` (all of them on a CPU)
        into ``points``, add to the totals, and mark the games whose last round it was."""
        k, n = part.hands.shape[0], self.num_players
        seats = torch.arange(n, device=self.device)
        if self._cached_scoring:  # every row here (the every-row path), kept at each discard
            pen = self._hand_penalty.clone()
        elif self._gathered and not self._sparse:  # every row here, solved with this step's go-out check
            pen = self._round_penalties
        else:
            wild = (self._rounds[part.round_index] + 2).repeat_interleave(n)
            hands = part.hands.reshape(k * n, 52).to(torch.uint8)
            pen = least_penalty(hands, wild, self.rules, backend=self.solver, check=False).view(k, n).long()
        pen = torch.where(seats.unsqueeze(0) == part.went_out.unsqueeze(1), 0, pen)
        points.copy_(pen)
        part.scores = part.scores + pen
        part.game_over = part.game_over | (part.round_index + 1 >= len(self.rules.rounds))

    def _deal(self, part: BatchState, rows: torch.Tensor, fresh: torch.Tensor) -> None:
        """Deal the ``part`` tables (table ids ``rows``) their next round, or where ``fresh`` holds
        a new game's first: scores cleared and the first dealer drawn from the table's stream
        (one draw of its counter before the deal's). The tensor code of every deal, so that a
        table's counter moves the same way on every path and device (a CPU's C loop,
        :func:`tt_env.batch.deal.deal_rows`, does the same bit for bit)."""
        n = self.num_players
        first_dealer = uniform_below(stream_base(self._seed32, rows, part.counter), n, _FIRST_DEALER_SALT)
        part.counter = part.counter + fresh.long()
        part.scores = torch.where(fresh.unsqueeze(1), 0, part.scores)
        part.game_over = part.game_over & ~fresh
        # (a finished game that is not dealt again has no next round: its index is clamped here
        # and the row is not kept)
        nxt = torch.where(fresh, 0, (part.round_index + 1).clamp(max=len(self.rules.rounds) - 1))
        new_round = dealt(part, stream_base(self._seed32, rows, part.counter), nxt, self._rounds[nxt] + 2,
                          torch.where(fresh, first_dealer, (part.dealer + 1) % n), n, self.shoe_size)
        for name, value in new_round.fields().items():
            setattr(part, name, value)

    def _deal_tables(self, mask: torch.Tensor, fresh: torch.Tensor) -> None:
        """:meth:`_deal` of the tables where ``mask`` holds (``fresh``, (B,) bool: a new game's first
        deal there); on a CPU one C loop over them, in place (:func:`tt_env.batch.deal.deal_rows`),
        with Triton one kernel (:mod:`tt_env.batch.deal_triton`)."""
        if self._sparse and deals_in_c(self.state.hands.device, self._kernel_backend):
            rows = mask.nonzero().squeeze(1)  # host: CPU only (self._sparse), no device to wait for
            if rows.numel():
                deal_rows(self.state, rows, fresh.index_select(0, rows), self._seed32, self._rounds,
                          _FIRST_DEALER_SALT)
        elif deals_in_triton(self.device, self._kernel_backend):  # one kernel, on the masked rows only
            deal_masked(self.state, mask, fresh, self._seed32, self._rounds, _FIRST_DEALER_SALT)
        else:
            self._on_rows(mask, self._deal, fresh)

    def _refill_stocks(self, empty: torch.Tensor) -> None:
        """:meth:`_reshuffle` of the tables where ``empty`` holds; on a CPU one C loop over them, in
        place (:func:`tt_env.batch.deal.reshuffle_rows`), with Triton one kernel."""
        if self._sparse and deals_in_c(self.state.hands.device, self._kernel_backend):
            rows = empty.nonzero().squeeze(1)  # host: CPU only (self._sparse), no device to wait for
            if rows.numel():
                reshuffle_rows(self.state, rows, self._seed32)
        elif deals_in_triton(self.device, self._kernel_backend):
            reshuffle_masked(self.state, empty, self._seed32)
        else:
            self._on_rows(empty, self._reshuffle)

    def _reshuffle(self, part: BatchState, rows: torch.Tensor) -> None:
        """Refill an empty stock (:func:`tt_env.batch.deal.reshuffle`)."""
        reshuffle(part, stream_base(self._seed32, rows, part.counter), self.shoe_size)

    def _timestep(self, rewards: torch.Tensor, ends: torch.Tensor, over: torch.Tensor, scores: torch.Tensor,
                  points: torch.Tensor, final: tuple[torch.Tensor, torch.Tensor] | torch.Tensor | None,
                  went_now: torch.Tensor | None = None, ended_round: torch.Tensor | None = None) -> TimeStep:
        s = self.state
        # on a CPU, memory no earlier TimeStep holds (ReusedArrays: no fresh pages to fault in each step)
        shape = (self.num_tables, self.observation_size)
        out = None if self._outputs is None else self._outputs.empty(shape, np.float32)
        obs, self._mask = observe_and_mask(s, self._round_number(s), self.shoe_size, self.rules.max_turns_per_round,
                                           self.rules.discard_drawn_discard, backend=self._kernel_backend, out=out)
        if final is None:
            final = obs
        elif isinstance(final, tuple):
            rows, values = final
            final = obs.clone() if self._outputs is None else self._outputs.empty(shape, np.float32).copy_(obs)
            final[rows] = values
        else:
            final = torch.where(over.unsqueeze(1), final, obs)
        if went_now is None:
            went_now = torch.full_like(s.current, -1)
        if ended_round is None:
            ended_round = torch.zeros_like(s.current)
        return TimeStep(obs, self._mask, s.current.clone(), rewards, ends, over, scores, points, final, went_now,
                        ended_round)

