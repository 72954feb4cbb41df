/*
 * tt_env.batch._kernels: the batched engine's CPU kernels, each one C loop over the tables.
 *
 * Optional (setup.py builds it where a compiler is found): without it every device runs the
 * tensor code, which is the reference these kernels are tested against.
 *   _kernels_observe.c  the observation and action mask, and a seat's hand as bytes (tt_env/batch/observe.py)
 *   _kernels_moves.c    the moves and the end of each turn (tt_env/batch/moves.py)
 *   _kernels_deal.c     the deals and stock refills (tt_env/batch/deal.py)
 *   _kernels_pick.c     random-v0's choice (tt_env/batch/agents.py)
 */
#include "_kernels.h"

static PyMethodDef methods[] = {
    {"observe_and_mask", observe_and_mask, METH_VARARGS,
     "observe_and_mask(num_players, hands, pile_counts, known_taken, discards, pile, pile_len, seat, current, "
     "phase, went_out, round_number, stock_len, scores, turn, game_over, taken, num_cards, max_turns, "
     "hand_scale, score_scale, discard_drawn_discard, obs, mask)\n--\n\n"
     "Write every table's observation of `seat` into obs and, unless mask is None, the legal actions "
     "of the seat to move into mask (tt_env/batch/observe.py)."},
    {"apply_moves", apply_moves, METH_VARARGS,
     "apply_moves(num_players, refilled, actions, active, hands, pile_counts, known_taken, discards, passed, "
     "stock, stock_len, pile, pile_len, current, phase, game_over, taken, turn, discarded, refill)\n--\n\n"
     "Play every live table's draw or discard in place; return how many tables need their stock refilled "
     "first (then nothing is changed), else 0 (tt_env/batch/moves.py)."},
    {"end_turns", end_turns, METH_VARARGS,
     "end_turns(num_players, max_turns, discarded, goes_out, current, phase, went_out, turn, went_now, ends)\n--\n\n"
     "Record who went out, end the rounds that end and pass the turn on elsewhere (tt_env/batch/moves.py)."},
    {"seat_hands", seat_hands, METH_VARARGS,
     "seat_hands(num_players, hands, seat, out)\n--\n\n"
     "Write the counts of each table's `seat` hand into out as uint8 (tt_env/batch/observe.py)."},
    {"deal_rows", deal_rows, METH_VARARGS,
     "deal_rows(num_players, seed32, first_dealer_salt, rows, fresh, rounds, hands, stock, stock_len, pile, "
     "pile_len, pile_counts, known_taken, discards, passed, round_index, dealer, current, phase, scores, "
     "went_out, turn, taken, game_over, counter)\n--\n\n"
     "Deal the tables of rows their next round, or where fresh a new game's first, in place "
     "(tt_env/batch/deal.py)."},
    {"reshuffle_rows", reshuffle_rows, METH_VARARGS,
     "reshuffle_rows(seed32, rows, stock, stock_len, pile, pile_len, pile_counts, counter)\n--\n\n"
     "Refill the stocks of the tables of rows from their discard piles, in place (tt_env/batch/deal.py)."},
    {"nth_legal", nth_legal, METH_VARARGS,
     "nth_legal(mask, u, actions)\n--\n\n"
     "Write each row's int(u * L)-th legal action (random-v0; tt_env/batch/agents.py)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_kernels", "The batched engine's CPU kernels (C accelerators).", -1, methods};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&moduledef); }
