/*
 * The batched engine's moves on a CPU, as C loops over the tables (tt_env/batch/moves.py).
 *
 *   apply_moves(num_players, refilled, actions, active, hands, pile_counts, known_taken, discards,
 *               passed, stock, stock_len, pile, pile_len, current, phase, game_over, taken, turn,
 *               discarded, refill) -> int
 *   end_turns(num_players, max_turns, discarded, goes_out, current, phase, went_out, turn,
 *             went_now, ends) -> None
 *
 * They change the state in place as tt_env/batch/moves.py's tensor code does (the reference,
 * and the path of every other device): apply_moves plays each live table's draw (from the stock,
 * passing over the top discard, or the top discard taken) or discard, and marks `discarded`;
 * end_turns, given which discards went out (`goes_out`: the round's first discard that leaves a
 * hand melding completely, which the caller asks the solver), records it, ends the round where it
 * ends and passes the turn on where it does not.
 *
 * A stock draw from an empty stock needs the stock refilled first, which is random and done by
 * the caller: unless `refilled`, apply_moves then changes nothing, marks those tables in `refill`
 * and returns how many; the caller refills them and calls again with refilled = 1.
 *
 * Buffers are C-contiguous (torch CPU tensors through .numpy(), no copy), as in
 * _kernels_observe.c; `active` may be None (every table). Actions are taken as the tensor code
 * takes them, unchecked (the engine checks them first unless told not to); a state value no game
 * holds (a seat, a phase, a length or a card out of range) raises ValueError naming the table and
 * the field before anything is changed. (So an illegal action played unchecked that leaves such a
 * state, a stock draw from a stock that even a refill leaves empty, is refused at the next step,
 * where the tensor code goes on with the state it made.)
 */
#include "_kernels.h"

#define MOVE_BUFFERS 18

PyObject *apply_moves(PyObject *self, PyObject *args) {
    static const BufferSpec specs[MOVE_BUFFERS] = {
        {"actions", 'q', 0}, {"active", '?', 0}, {"hands", 'f', 1}, {"pile_counts", 'f', 1},
        {"known_taken", 'f', 1}, {"discards", 'f', 1}, {"passed", 'f', 1}, {"stock", 'q', 0},
        {"stock_len", 'q', 1}, {"pile", 'q', 1}, {"pile_len", 'q', 1}, {"current", 'q', 0}, {"phase", 'q', 1},
        {"game_over", '?', 0}, {"taken", 'q', 1}, {"turn", 'q', 1}, {"discarded", '?', 1}, {"refill", '?', 1}};
    PyObject *objs[MOVE_BUFFERS];
    int n, refilled;
    if (!PyArg_ParseTuple(args, "ipOOOOOOOOOOOOOOOOOO:apply_moves", &n, &refilled, &objs[0], &objs[1], &objs[2],
                          &objs[3], &objs[4], &objs[5], &objs[6], &objs[7], &objs[8], &objs[9], &objs[10],
                          &objs[11], &objs[12], &objs[13], &objs[14], &objs[15], &objs[16], &objs[17]))
        return NULL;
    if (check_players(n) < 0) return NULL;
    Py_buffer views[MOVE_BUFFERS];
    memset(views, 0, sizeof views);
    PyObject *result = NULL;
    if (take_buffers(objs, specs, MOVE_BUFFERS, views, 1) < 0) goto done;
    Py_ssize_t b = views[0].len / 8;                        /* one action per table */
    Py_ssize_t shoe = b ? views[7].len / 8 / b : 0;
    Py_ssize_t cards = b * n * CARDS;
    Py_ssize_t expected[MOVE_BUFFERS] = {b, b, cards, b * CARDS, cards, cards, cards, b * shoe,
                                             b, b * shoe, b, b, b, b, b, b, b, b};
    if (check_lengths(views, specs, expected, MOVE_BUFFERS, b, n) < 0) goto done;
    const int64_t *actions = views[0].buf, *stock = views[7].buf, *current = views[11].buf;
    const unsigned char *active = views[1].buf, *game_over = views[13].buf;
    float *hands = views[2].buf, *pile_counts = views[3].buf, *known = views[4].buf;
    float *discards = views[5].buf, *passed = views[6].buf;
    int64_t *stock_len = views[8].buf, *pile = views[9].buf, *pile_len = views[10].buf, *phase = views[12].buf;
    int64_t *taken = views[14].buf, *turn = views[15].buf;
    unsigned char *discarded = views[16].buf, *refill = views[17].buf;

    /* first pass: check what will be read, and find the stock draws from an empty stock */
    long need = 0;
    for (Py_ssize_t i = 0; i < b; i++) {
        if (i + PREFETCH_ROWS < b) {
            prefetch_top(pile, shoe, pile_len, i + PREFETCH_ROWS);
            prefetch_top(stock, shoe, stock_len, i + PREFETCH_ROWS);
        }
        refill[i] = 0;
        if (game_over[i] || (active && !active[i])) continue;
        int64_t s = current[i], p = phase[i], sl = stock_len[i], pl = pile_len[i];
        const char *bad = s < 0 || s >= n ? "current" : p < 0 || p > 1 ? "phase"
                        : sl < 0 || sl > shoe ? "stock_len" : pl < 0 || pl > shoe ? "pile_len" : NULL;
        int64_t top = !bad && pl > 0 ? pile[i * shoe + pl - 1] : -1;
        if (!bad && pl > 0 && (top < 0 || top >= CARDS)) bad = "pile";
        if (!bad && p == 0 && actions[i] != 1) {          /* a draw that is not a take reads the stock */
            if (actions[i] == 0 && sl == 0 && !refilled) {
                refill[i] = 1;
                need++;
                continue;
            }
            int64_t drawn = stock[i * shoe + (sl > 0 ? sl - 1 : 0)];
            if (drawn < 0 || drawn >= CARDS) bad = "stock";
        }
        if (bad) {
            PyErr_Format(PyExc_ValueError, "table %zd: its %s is outside what a game state holds", i, bad);
            goto done;
        }
    }
    if (need) {
        result = PyLong_FromLong(need);
        goto done;
    }
    /* second pass: the moves */
    for (Py_ssize_t i = 0; i < b; i++) {
        Py_ssize_t ahead = i + PREFETCH_ROWS;
        if (ahead < b && !game_over[ahead] && (!active || active[ahead])) {
            /* the cards a step reads and writes, one place per row of each state field */
            int64_t a = actions[ahead], s = current[ahead];
            if (phase[ahead] == 0) {
                prefetch_top(pile, shoe, pile_len, ahead);
                prefetch_top(stock, shoe, stock_len, ahead);
            } else if (a >= 2 && a < 2 + CARDS && s >= 0 && s < n) {
                Py_ssize_t at = (ahead * n + s) * CARDS + a - 2;
                __builtin_prefetch(hands + at, 1);
                __builtin_prefetch(discards + at, 1);
                __builtin_prefetch(known + at, 1);
                __builtin_prefetch(pile_counts + ahead * CARDS + a - 2, 1);
                prefetch_top(pile, shoe, pile_len, ahead);
            }
        }
        discarded[i] = 0;
        if (game_over[i] || (active && !active[i])) continue;
        int64_t a = actions[i], s = current[i], sl = stock_len[i], pl = pile_len[i];
        int64_t top = pl > 0 ? pile[i * shoe + pl - 1] : -1, top0 = top > 0 ? top : 0;
        Py_ssize_t seat_row = (i * n + s) * CARDS, table_row = i * CARDS;
        if (phase[i] == 0) {
            int64_t got;
            if (a == 1) {                                  /* take the top discard */
                pile_len[i] = pl - 1;
                pile_counts[table_row + top0] -= 1.0f;
                known[seat_row + top0] += 1.0f;
                taken[i] = top;
                got = top0;
            } else {                                       /* from the stock (any other action id) */
                got = stock[i * shoe + (sl > 0 ? sl - 1 : 0)];
                if (a == 0) {
                    if (top >= 0) passed[seat_row + top] += 1.0f;
                    stock_len[i] = sl - 1;
                }
            }
            hands[seat_row + got] += 1.0f;
            phase[i] = 1;
        } else {                                           /* discard */
            int64_t card = a - 2 < 0 ? 0 : a - 2 > CARDS - 1 ? CARDS - 1 : a - 2;
            pile[i * shoe + (pl < shoe - 1 ? pl : shoe - 1)] = card;
            pile_len[i] = pl + 1;
            hands[seat_row + card] -= 1.0f;
            pile_counts[table_row + card] += 1.0f;
            discards[seat_row + card] += 1.0f;
            if (known[seat_row + card] > 0.0f) known[seat_row + card] -= 1.0f;
            taken[i] = -1;
            turn[i] += 1;
            discarded[i] = 1;
        }
    }
    result = PyLong_FromLong(0);
done:
    release_buffers(views, MOVE_BUFFERS);
    return result;
}

#define END_BUFFERS 8

PyObject *end_turns(PyObject *self, PyObject *args) {
    static const BufferSpec specs[END_BUFFERS] = {
        {"discarded", '?', 0}, {"goes_out", '?', 0}, {"current", 'q', 1}, {"phase", 'q', 1},
        {"went_out", 'q', 1}, {"turn", 'q', 0}, {"went_now", 'q', 1}, {"ends", '?', 1}};
    PyObject *objs[END_BUFFERS];
    int n;
    long long max_turns;
    if (!PyArg_ParseTuple(args, "iLOOOOOOOO:end_turns", &n, &max_turns, &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &objs[5], &objs[6], &objs[7]))
        return NULL;
    if (check_players(n) < 0) return NULL;
    Py_buffer views[END_BUFFERS];
    memset(views, 0, sizeof views);
    PyObject *result = NULL;
    if (take_buffers(objs, specs, END_BUFFERS, views, -1) < 0) goto done;
    Py_ssize_t b = views[0].len;                           /* one bool per table */
    Py_ssize_t expected[END_BUFFERS] = {b, b, b, b, b, b, b, b};
    if (check_lengths(views, specs, expected, END_BUFFERS, b, n) < 0) goto done;
    const unsigned char *discarded = views[0].buf, *goes_out = views[1].buf;
    int64_t *current = views[2].buf, *phase = views[3].buf, *went_out = views[4].buf, *went_now = views[6].buf;
    const int64_t *turn = views[5].buf;
    unsigned char *ends = views[7].buf;
    for (Py_ssize_t i = 0; i < b; i++) {
        if (current[i] < 0 || current[i] >= n) {
            PyErr_Format(PyExc_ValueError, "table %zd: its current is outside what a game state holds", i);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < b; i++) {
        int64_t s = current[i], next = (s + 1) % n;
        int d = discarded[i];
        went_now[i] = goes_out[i] ? s : -1;
        if (goes_out[i]) went_out[i] = s;
        int end = d && (next == went_out[i] || (went_out[i] < 0 && turn[i] >= max_turns));
        ends[i] = end;
        if (d && !end) {
            current[i] = next;
            phase[i] = 0;
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release_buffers(views, END_BUFFERS);
    return result;
}
