/*
 * The batched engine's observation and action mask on a CPU, as one C loop over the tables.
 *
 *   observe_and_mask(num_players, hands, pile_counts, known_taken, discards, pile, pile_len,
 *                    seat, current, phase, went_out, round_number, stock_len, scores, turn,
 *                    game_over, taken, num_cards, max_turns, hand_scale, score_scale,
 *                    discard_drawn_discard, obs, mask) -> None
 *
 * It writes what tt_env/batch/observe.py's tensor code computes (the reference, and the path of
 * every other device), which is tt_env.observation.encode (layout version 1) and
 * tt_env.engine.game.action_mask for each table: `obs` gets `seat`'s observation, `mask` (None
 * for the observation alone) the legal actions of the seat to move, read from `seat`'s hand
 * (the caller passes seat = current with a mask). The tensor code builds a dozen pieces and joins
 * them; here each row is written once, in order, which is what makes it several times faster.
 *
 * Buffers are C-contiguous (torch CPU tensors through .numpy(), no copy): the counts float32
 * (hands, known_taken, discards (B, N, 52); pile_counts (B, 52)), the cards of the pile int64
 * (B, S), game_over bool (B,), every other per-table field int64 (B,) and scores int64 (B, N);
 * obs float32 (B, 107N + 80), mask bool (B, 54). A scaled piece is the float64 quotient rounded
 * once to float32, as the scalar encoder's Python floats are. A value no game state holds (a
 * seat out of range, a card id outside 0..51) raises ValueError naming the table and the field,
 * before anything is read out of bounds.
 */
#include "_kernels.h"

#define NUM_BUFFERS 18

PyObject *observe_and_mask(PyObject *self, PyObject *args) {
    static const BufferSpec specs[NUM_BUFFERS] = {
        {"hands", 'f', 0}, {"pile_counts", 'f', 0}, {"known_taken", 'f', 0}, {"discards", 'f', 0},
        {"pile", 'q', 0}, {"pile_len", 'q', 0}, {"seat", 'q', 0}, {"current", 'q', 0}, {"phase", 'q', 0},
        {"went_out", 'q', 0}, {"round_number", 'q', 0}, {"stock_len", 'q', 0}, {"scores", 'q', 0},
        {"turn", 'q', 0}, {"game_over", '?', 0}, {"taken", 'q', 0}, {"obs", 'f', 1}, {"mask", '?', 1}};
    PyObject *objs[NUM_BUFFERS];
    int n, discard_drawn_discard;
    double num_cards, max_turns, hand_scale, score_scale;
    if (!PyArg_ParseTuple(args, "iOOOOOOOOOOOOOOOOddddpOO:observe_and_mask", &n,
                          &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5], &objs[6], &objs[7],
                          &objs[8], &objs[9], &objs[10], &objs[11], &objs[12], &objs[13], &objs[14], &objs[15],
                          &num_cards, &max_turns, &hand_scale, &score_scale, &discard_drawn_discard,
                          &objs[16], &objs[17]))
        return NULL;
    if (check_players(n) < 0) return NULL;
    if (!(num_cards > 0 && max_turns > 0 && hand_scale > 0 && score_scale > 0)) {
        PyErr_SetString(PyExc_ValueError, "num_cards, max_turns, hand_scale and score_scale must be above 0");
        return NULL;
    }
    Py_buffer views[NUM_BUFFERS];
    memset(views, 0, sizeof views);
    PyObject *result = NULL;
    if (take_buffers(objs, specs, NUM_BUFFERS, views, NUM_BUFFERS - 1) < 0) goto done;
    int with_mask = views[17].obj != NULL;
    Py_ssize_t b = views[6].len / 8;                       /* one seat per table */
    Py_ssize_t width = 107 * (Py_ssize_t)n + 80;
    Py_ssize_t shoe = b ? views[4].len / 8 / b : 0;
    Py_ssize_t expected[NUM_BUFFERS] = {b * n * CARDS, b * CARDS, b * n * CARDS, b * n * CARDS, b * shoe, b, b, b, b,
                                        b, b, b, b * n, b, b, b, b * width, b * ACTIONS};
    if (check_lengths(views, specs, expected, NUM_BUFFERS, b, n) < 0) goto done;
    const float *hands = views[0].buf, *pile_counts = views[1].buf, *known = views[2].buf, *discards = views[3].buf;
    const int64_t *pile = views[4].buf, *pile_len = views[5].buf, *seat = views[6].buf, *current = views[7].buf;
    const int64_t *phase = views[8].buf, *went_out = views[9].buf, *round_number = views[10].buf;
    const int64_t *stock_len = views[11].buf, *scores = views[12].buf, *turn = views[13].buf, *taken = views[15].buf;
    const unsigned char *game_over = views[14].buf;
    float *obs = views[16].buf;
    unsigned char *mask = with_mask ? views[17].buf : NULL;
    for (Py_ssize_t i = 0; i < b; i++) {
        if (i + PREFETCH_ROWS < b) prefetch_top(pile, shoe, pile_len, i + PREFETCH_ROWS);
        int64_t s = seat[i], cur = current[i], p = phase[i], wo = went_out[i], r = round_number[i];
        int64_t plen = pile_len[i], tk = taken[i];
        const char *bad = s < 0 || s >= n ? "seat" : cur < 0 || cur >= n ? "current" : p < 0 || p > 1 ? "phase"
                        : wo < -1 || wo >= n ? "went_out" : r < 1 || r > 11 ? "round_number"
                        : plen < 0 || plen > shoe ? "pile_len" : tk < -1 || tk >= CARDS ? "taken" : NULL;
        int64_t top = plen > 0 ? pile[i * shoe + plen - 1] : -1;
        if (!bad && (top < -1 || top >= CARDS || (plen > 0 && top < 0))) bad = "pile";
        if (bad) {
            PyErr_Format(PyExc_ValueError, "table %zd: its %s is outside what a game state holds", i, bad);
            goto done;
        }
        const float *hand = hands + (i * n + s) * CARDS;
        float *o = obs + i * width;
        memcpy(o, hand, CARDS * sizeof(float));                             /* the hand */
        float *top_hot = o + CARDS, *below = o + 2 * CARDS;
        memset(top_hot, 0, CARDS * sizeof(float));                         /* the top discard */
        if (top >= 0) top_hot[top] = 1.0f;
        const float *pc = pile_counts + i * CARDS;
        memcpy(below, pc, CARDS * sizeof(float));                           /* the pile below it */
        if (top >= 0) below[top] -= 1.0f;
        float *taken_out = o + 3 * CARDS, *discarded_out = taken_out + (n - 1) * CARDS;
        for (int k = 1; k < n; k++) {                                      /* opponents from the left */
            Py_ssize_t row = (i * n + (s + k) % n) * CARDS;
            memcpy(taken_out + (k - 1) * CARDS, known + row, CARDS * sizeof(float));
            memcpy(discarded_out + (k - 1) * CARDS, discards + row, CARDS * sizeof(float));
        }
        float *hot = discarded_out + (n - 1) * CARDS;                      /* wild rank, round, phase, out */
        memset(hot, 0, (26 + n) * sizeof(float));
        hot[r + 1] = 1.0f;
        hot[13 + r - 1] = 1.0f;
        hot[24 + p] = 1.0f;
        if (wo >= 0) hot[26 + (wo - s + n) % n] = 1.0f;
        float *scaled = hot + 26 + n;
        int holding = p == 1 && !game_over[i];
        for (int k = 0; k < n; k++) {
            int64_t who = (s + k) % n;
            scaled[k] = (float)((double)(r + 2 + (who == cur && holding)) / hand_scale);
            scaled[n + 1 + k] = (float)((double)scores[i * n + who] / score_scale);
        }
        scaled[n] = (float)((double)stock_len[i] / num_cards);
        scaled[2 * n + 1] = (float)((double)turn[i] / max_turns);
        if (!mask) continue;
        unsigned char *m = mask + i * ACTIONS;
        int live = !game_over[i], draw = live && p == 0, discard = live && p == 1;
        m[0] = draw && (stock_len[i] > 0 || plen > 1);
        m[1] = draw && plen > 0;
        for (int c = 0; c < CARDS; c++) m[2 + c] = discard && hand[c] != 0.0f;
        if (!discard_drawn_discard && tk >= 0) {
            /* the card just taken may not go back unless it is all the hand holds */
            float total = 0.0f;
            for (int c = 0; c < CARDS; c++) total += hand[c];
            if (total - hand[tk] > 0.0f) m[2 + tk] = 0;
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release_buffers(views, NUM_BUFFERS);
    return result;
}

/*
 *   seat_hands(num_players, hands, seat, out) -> None
 *
 * out[i] = the counts of seat[i]'s hand at table i as bytes: what observe.py's
 * seat_counts(hands, seat).to(torch.uint8) computes, in one pass that reads only those rows
 * (the go-out check's input; the solver reads uint8 counts without conversion). hands float32
 * (B, N, 52), seat int64 (B,), out uint8 (B, 52). A seat out of range, or a count that is not a
 * whole number of copies 0..255, raises ValueError naming the table.
 */
PyObject *seat_hands(PyObject *self, PyObject *args) {
    static const BufferSpec specs[3] = {{"hands", 'f', 0}, {"seat", 'q', 0}, {"out", 'B', 1}};
    PyObject *objs[3];
    int n;
    if (!PyArg_ParseTuple(args, "iOOO:seat_hands", &n, &objs[0], &objs[1], &objs[2])) return NULL;
    if (check_players(n) < 0) return NULL;
    Py_buffer views[3];
    memset(views, 0, sizeof views);
    PyObject *result = NULL;
    if (take_buffers(objs, specs, 3, views, -1) < 0) goto done;
    Py_ssize_t b = views[1].len / 8;                       /* one seat per table */
    Py_ssize_t expected[3] = {b * n * CARDS, b, b * CARDS};
    if (check_lengths(views, specs, expected, 3, b, n) < 0) goto done;
    const float *hands = views[0].buf;
    const int64_t *seat = views[1].buf;
    unsigned char *out = views[2].buf;
    for (Py_ssize_t i = 0; i < b; i++) {
        if (i + PREFETCH_ROWS < b && seat[i + PREFETCH_ROWS] >= 0 && seat[i + PREFETCH_ROWS] < n)
            __builtin_prefetch(hands + ((i + PREFETCH_ROWS) * n + seat[i + PREFETCH_ROWS]) * CARDS);
        int64_t s = seat[i];
        if (s < 0 || s >= n) {
            PyErr_Format(PyExc_ValueError, "table %zd: its seat is outside what a game state holds", i);
            goto done;
        }
        const float *restrict hand = hands + (i * n + s) * CARDS;
        unsigned char *restrict o = out + i * CARDS;
        unsigned bad = 0;
        for (int c = 0; c < CARDS; c++) {   /* no branch and no conversion call, so that it vectorises: */
            float shifted = hand[c] + 8388608.0f;          /* adding 2**23 leaves a whole number 0..255 */
            uint32_t bits;                                 /* in the low bits of the float's bits */
            memcpy(&bits, &shifted, sizeof bits);
            uint32_t k = bits - 0x4B000000u;               /* (the bits of 2**23) */
            bad |= (k > 255u) | (shifted - 8388608.0f != hand[c]);   /* a fraction, NaN, or out of range */
            o[c] = (unsigned char)k;
        }
        if (bad) {
            int c = 0;
            while (hand[c] >= 0.0f && hand[c] <= 255.0f && hand[c] == (float)(int)hand[c]) c++;   /* the first bad one */
            PyErr_Format(PyExc_ValueError, "table %zd: its hand's count of card %d is not a whole number "
                         "of copies 0..255", i, c);
            goto done;
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release_buffers(views, 3);
    return result;
}
