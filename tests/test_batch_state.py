"""``BatchState.rows_on_read``: some tables of a state, gathered field by field when read, written
back field by field when replaced (what a CPU step's round ends and reshuffles run on); and the
fields a kernel writes in place (``kernels.written_field``)."""

from __future__ import annotations

import pytest
import torch

from tt_env.batch import BatchGame
from tt_env.batch.kernels import written_field
from tt_env.batch.state import FIELD_NAMES, BatchState, RowsOnRead, field_dtype
from tt_env.engine.rules import Rules


@pytest.fixture
def state() -> BatchState:
    game = BatchGame(Rules(num_players=3), 16, seed=5)
    game.reset()
    return game.state


def test_a_field_is_gathered_on_its_first_read_only(state: BatchState) -> None:
    index = torch.tensor([9, 2, 14])
    part = state.rows_on_read(index)
    assert isinstance(part, RowsOnRead) and not FIELD_NAMES & set(vars(part))
    assert torch.equal(part.hands, state.hands[index]) and torch.equal(part.counter, state.counter[index])
    assert FIELD_NAMES & set(vars(part)) == {"hands", "counter"}
    assert part.hands is part.hands  # read once, then held


def test_write_back_writes_the_replaced_fields_in_index_order(state: BatchState) -> None:
    before = {name: value.clone() for name, value in state.fields().items()}
    index = torch.tensor([7, 0, 11])
    part = state.rows_on_read(index)
    part.scores = part.scores + torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    part.turn = torch.tensor([70, 0, 110])
    _ = part.hands  # read, not replaced
    part.write_back()
    expected_scores = before["scores"].clone()
    expected_scores[index] += torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    expected_turn = before["turn"].clone()
    expected_turn[index] = torch.tensor([70, 0, 110])
    assert torch.equal(state.scores, expected_scores) and torch.equal(state.turn, expected_turn)
    for name in FIELD_NAMES - {"scores", "turn"}:
        assert torch.equal(getattr(state, name), before[name]), name


def test_only_replaced_fields_go_back(state: BatchState) -> None:
    """The contract of ``BatchGame._on_rows``: code replaces a field, never writes into it. A field
    written into in place stays in the part (which is what makes reading a field cheap)."""
    before = state.hands.clone()
    part = state.rows_on_read(torch.tensor([3]))
    part.hands.zero_()
    part.write_back()
    assert torch.equal(state.hands, before)


def test_names_that_are_not_fields_are_refused(state: BatchState) -> None:
    part = state.rows_on_read(torch.tensor([1]))
    with pytest.raises(AttributeError, match="no attribute 'hand'"):
        _ = part.hand
    with pytest.raises(AttributeError, match="'stock_length' is not a field of BatchState: its fields are"):
        part.stock_length = torch.tensor([3])


def test_field_dtype_is_the_dtype_of_the_engine_s_states(state: BatchState) -> None:
    for name, value in state.fields().items():
        assert field_dtype(name) == value.dtype, name


def test_a_kernel_writes_into_the_state_itself(state: BatchState) -> None:
    """``written_field`` hands a kernel the state's own tensor, made contiguous and of the field's
    dtype first where it is not (a loaded or sliced state): a write into it lands in the state."""
    own = state.turn
    assert written_field(state, "turn") is own  # the engine's own fields as they are, no copy
    state.turn = torch.arange(32, dtype=torch.int32)[::2]  # strided, int32
    state.stock_len = torch.arange(32)[::2]  # strided, of the field's own dtype
    state.hands = state.hands.double()
    turn, hands, stock_len = (written_field(state, name) for name in ("turn", "hands", "stock_len"))
    assert turn is state.turn and turn.is_contiguous() and turn.dtype == torch.int64
    assert hands is state.hands and hands.dtype == torch.float32
    assert stock_len is state.stock_len and stock_len.is_contiguous()
    turn[3] = 99
    assert int(state.turn[3]) == 99 and state.turn.tolist()[:3] == [0, 2, 4]
