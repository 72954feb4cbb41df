/*
 * The batched engine's deals and stock refills on a CPU, as C loops over the tables that need
 * one, in place (tt_env/batch/deal.py holds the tensor code: the reference, and the path of every
 * other device).
 *
 *   deal_rows(num_players, seed32, first_dealer_salt, rows, fresh, rounds, hands, stock, stock_len,
 *             pile, pile_len, pile_counts, known_taken, discards, passed, round_index, dealer,
 *             current, phase, scores, went_out, turn, taken, game_over, counter) -> None
 *   reshuffle_rows(seed32, rows, stock, stock_len, pile, pile_len, pile_counts, counter) -> None
 *
 * deal_rows deals each table of `rows` its next round or, where `fresh`, a new game's first (the
 * scores cleared, the first dealer drawn from the table's stream first), as BatchGame._deal and
 * deal.dealt do; reshuffle_rows refills each table's stock from its discard pile under the top
 * card, as deal.reshuffle does. The random numbers are tt_env/batch/random_keys.py's, bit for bit:
 * its hash (mix32), its streams (stream_base) and its shuffles (32-bit keys with the position in
 * the low byte, sorted; the keys are distinct, so any sort gives the same order). That module
 * owns them; the tests play the same games through both.
 *
 * Buffers are C-contiguous, as in _kernels_observe.c: rows int64 (K,) table ids, fresh bool (K,),
 * rounds int64 (R,) the round numbers of the rules, the counts float32 ((B, N, 52), (B, 52)), the
 * cards int64 (B, S), every other field int64 (B,) or (B, N), game_over bool (B,). A table id or a
 * state value no game holds (a round index, a dealer, a pile length or card) raises ValueError
 * naming it before anything is changed.
 */
#include "_kernels.h"

#define MAX_SHOE 256   /* positions fit the keys' low byte: 4 decks are 208 cards */

/* random_keys.mix32 */
static inline uint32_t mix32(uint32_t x) {
    x = (x ^ (x >> 16)) * 0x7FEB352Du;
    x = (x ^ (x >> 15)) * 0x2C1B3C6Du;
    x = (x ^ (x >> 16)) * 0x297A2D39u;
    return x ^ (x >> 15);
}

/* random_keys.stream_base of one table */
static inline uint32_t stream_base(uint32_t seed32, int64_t table, int64_t counter) {
    uint32_t h = mix32(mix32((uint32_t)table * 0x1E3779B1u + seed32) ^ seed32);
    return mix32(h ^ ((uint32_t)counter * 0x05EBCA6Bu));
}

/* order[p]: random_keys.shuffle_prefix of one row (shuffle_order where length == size): the
 * positions below `length` in a random order, then the others in order. */
static void shuffled(uint32_t base, int size, int64_t length, int64_t *order) {
    uint64_t keys[MAX_SHOE];
    for (int p = 0; p < size; p++)
        keys[p] = p < length ? (uint64_t)mix32(base + (uint32_t)p * 0x42B2AE35u) * 256u + (uint64_t)p
                             : ((uint64_t)1 << 41) + (uint64_t)p;
    for (int p = 1; p < size; p++) {   /* insertion sort: a few hundred keys at most, on rare rows */
        uint64_t key = keys[p];
        int q = p;
        for (; q > 0 && keys[q - 1] > key; q--) keys[q] = keys[q - 1];
        keys[q] = key;
    }
    for (int p = 0; p < size; p++) order[p] = (int64_t)(keys[p] & 0xFFu);
}

/* 0 if every table id of rows is one of b tables, else -1 with a ValueError. */
static int check_rows(const int64_t *rows, Py_ssize_t k, Py_ssize_t b) {
    for (Py_ssize_t j = 0; j < k; j++)
        if (rows[j] < 0 || rows[j] >= b) {
            PyErr_Format(PyExc_ValueError, "rows[%zd]=%lld is not a table: use 0..%zd", j, (long long)rows[j], b - 1);
            return -1;
        }
    return 0;
}

#define DEAL_BUFFERS 22

PyObject *deal_rows(PyObject *self, PyObject *args) {
    static const BufferSpec specs[DEAL_BUFFERS] = {
        {"rows", 'q', 0}, {"fresh", '?', 0}, {"rounds", 'q', 0}, {"hands", 'f', 1}, {"stock", 'q', 1},
        {"stock_len", 'q', 1}, {"pile", 'q', 1}, {"pile_len", 'q', 1}, {"pile_counts", 'f', 1},
        {"known_taken", 'f', 1}, {"discards", 'f', 1}, {"passed", 'f', 1}, {"round_index", 'q', 1},
        {"dealer", 'q', 1}, {"current", 'q', 1}, {"phase", 'q', 1}, {"scores", 'q', 1}, {"went_out", 'q', 1},
        {"turn", 'q', 1}, {"taken", 'q', 1}, {"game_over", '?', 1}, {"counter", 'q', 1}};
    PyObject *objs[DEAL_BUFFERS];
    int n;
    unsigned long seed32, salt;
    if (!PyArg_ParseTuple(args, "ikkOOOOOOOOOOOOOOOOOOOOOO:deal_rows", &n, &seed32, &salt, &objs[0], &objs[1],
                          &objs[2], &objs[3], &objs[4], &objs[5], &objs[6], &objs[7], &objs[8], &objs[9], &objs[10],
                          &objs[11], &objs[12], &objs[13], &objs[14], &objs[15], &objs[16], &objs[17], &objs[18],
                          &objs[19], &objs[20], &objs[21]))
        return NULL;
    if (check_players(n) < 0) return NULL;
    Py_buffer views[DEAL_BUFFERS];
    memset(views, 0, sizeof views);
    PyObject *result = NULL;
    if (take_buffers(objs, specs, DEAL_BUFFERS, views, -1) < 0) goto done;
    Py_ssize_t k = views[0].len / 8, b = views[7].len / 8, rounds_n = views[2].len / 8;
    Py_ssize_t shoe = b ? views[4].len / 8 / b : 0, cards = b * n * CARDS;
    Py_ssize_t expected[DEAL_BUFFERS] = {k, k, rounds_n, cards, b * shoe, b, b * shoe, b, b * CARDS, cards, cards,
                                         cards, b, b, b, b, b * n, b, b, b, b, b};
    if (check_lengths(views, specs, expected, DEAL_BUFFERS, b, n) < 0) goto done;
    if (shoe < 1 || shoe > MAX_SHOE || rounds_n < 1) {
        PyErr_Format(PyExc_ValueError, "a shoe of %zd cards and %zd rounds: deal_rows takes 1..%d cards and a "
                     "round at least", shoe, rounds_n, MAX_SHOE);
        goto done;
    }
    const int64_t *rows = views[0].buf, *rounds = views[2].buf;
    const unsigned char *fresh = views[1].buf;
    float *hands = views[3].buf, *pile_counts = views[8].buf, *known = views[9].buf, *discards = views[10].buf;
    float *passed = views[11].buf;
    int64_t *stock = views[4].buf, *stock_len = views[5].buf, *pile = views[6].buf, *pile_len = views[7].buf;
    int64_t *round_index = views[12].buf, *dealer = views[13].buf, *current = views[14].buf, *phase = views[15].buf;
    int64_t *scores = views[16].buf, *went_out = views[17].buf, *turn = views[18].buf, *taken = views[19].buf;
    unsigned char *game_over = views[20].buf;
    int64_t *counter = views[21].buf;

    if (check_rows(rows, k, b) < 0) goto done;
    for (Py_ssize_t r = 0; r < rounds_n; r++)
        if (rounds[r] < 1 || n * (rounds[r] + 2) > shoe - 1) {
            PyErr_Format(PyExc_ValueError, "rounds[%zd]=%lld cannot be dealt to %d players from %zd cards", r,
                         (long long)rounds[r], n, shoe);
            goto done;
        }
    for (Py_ssize_t j = 0; j < k; j++) {   /* what a next round reads */
        int64_t i = rows[j];
        const char *bad = fresh[j] ? NULL : round_index[i] < 0 || round_index[i] >= rounds_n ? "round_index"
                        : dealer[i] < 0 || dealer[i] >= n ? "dealer" : NULL;
        if (bad) {
            PyErr_Format(PyExc_ValueError, "table %lld: its %s is outside what a game state holds", (long long)i, bad);
            goto done;
        }
    }
    int64_t order[MAX_SHOE];
    for (Py_ssize_t j = 0; j < k; j++) {
        int64_t i = rows[j], ctr = counter[i], deal_by;
        if (fresh[j]) {                     /* a new game: its first dealer, one draw of the stream */
            deal_by = (int64_t)(mix32(stream_base((uint32_t)seed32, i, ctr) + (uint32_t)salt) % (uint32_t)n);
            ctr += 1;
            for (int s = 0; s < n; s++) scores[i * n + s] = 0;
            game_over[i] = 0;
            round_index[i] = 0;
        } else {
            deal_by = (dealer[i] + 1) % n;
            round_index[i] = round_index[i] + 1 < rounds_n ? round_index[i] + 1 : rounds_n - 1;
        }
        shuffled(stream_base((uint32_t)seed32, i, ctr), (int)shoe, shoe, order);
        int64_t *cards = stock + i * shoe;  /* the shoe, in order: the stock is its first stock_len */
        for (Py_ssize_t p = 0; p < shoe; p++) cards[p] = order[p] % CARDS;
        int64_t dealt = n * (rounds[round_index[i]] + 2);
        float *hand = hands + i * n * CARDS;
        memset(hand, 0, (size_t)n * CARDS * sizeof(float));
        for (Py_ssize_t p = shoe - dealt; p < shoe; p++) {   /* from the end, one at a time from the left */
            int64_t from_end = shoe - 1 - p;
            hand[((deal_by + 1 + from_end % n) % n) * CARDS + cards[p]] += 1.0f;
        }
        int64_t up = cards[shoe - 1 - dealt];
        stock_len[i] = shoe - 1 - dealt;
        memset(pile + i * shoe, 0, (size_t)shoe * sizeof(int64_t));
        pile[i * shoe] = up;
        pile_len[i] = 1;
        memset(pile_counts + i * CARDS, 0, CARDS * sizeof(float));
        pile_counts[i * CARDS + up] = 1.0f;
        memset(known + i * n * CARDS, 0, (size_t)n * CARDS * sizeof(float));
        memset(discards + i * n * CARDS, 0, (size_t)n * CARDS * sizeof(float));
        memset(passed + i * n * CARDS, 0, (size_t)n * CARDS * sizeof(float));
        dealer[i] = deal_by;
        current[i] = (deal_by + 1) % n;
        phase[i] = 0;
        went_out[i] = -1;
        turn[i] = 0;
        taken[i] = -1;
        counter[i] = ctr + 1;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release_buffers(views, DEAL_BUFFERS);
    return result;
}

#define REFILL_BUFFERS 7

PyObject *reshuffle_rows(PyObject *self, PyObject *args) {
    static const BufferSpec specs[REFILL_BUFFERS] = {
        {"rows", 'q', 0}, {"stock", 'q', 1}, {"stock_len", 'q', 1}, {"pile", 'q', 1}, {"pile_len", 'q', 1},
        {"pile_counts", 'f', 1}, {"counter", 'q', 1}};
    PyObject *objs[REFILL_BUFFERS];
    unsigned long seed32;
    if (!PyArg_ParseTuple(args, "kOOOOOOO:reshuffle_rows", &seed32, &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &objs[5], &objs[6]))
        return NULL;
    Py_buffer views[REFILL_BUFFERS];
    memset(views, 0, sizeof views);
    PyObject *result = NULL;
    if (take_buffers(objs, specs, REFILL_BUFFERS, views, -1) < 0) goto done;
    Py_ssize_t k = views[0].len / 8, b = views[4].len / 8;
    Py_ssize_t shoe = b ? views[1].len / 8 / b : 0;
    Py_ssize_t expected[REFILL_BUFFERS] = {k, b * shoe, b, b * shoe, b, b * CARDS, b};
    if (check_lengths(views, specs, expected, REFILL_BUFFERS, b, 0) < 0) goto done;
    if (shoe < 1 || shoe > MAX_SHOE) {
        PyErr_Format(PyExc_ValueError, "a shoe of %zd cards: reshuffle_rows takes 1..%d", shoe, MAX_SHOE);
        goto done;
    }
    const int64_t *rows = views[0].buf;
    int64_t *stock = views[1].buf, *stock_len = views[2].buf, *pile = views[3].buf, *pile_len = views[4].buf;
    float *pile_counts = views[5].buf;
    int64_t *counter = views[6].buf;
    if (check_rows(rows, k, b) < 0) goto done;
    for (Py_ssize_t j = 0; j < k; j++) {   /* what a refill reads: the pile and its top */
        int64_t i = rows[j], len = pile_len[i];
        int64_t top = len >= 0 && len <= shoe ? pile[i * shoe + (len > 0 ? len - 1 : 0)] : 0;
        if (len < 0 || len > shoe || top < 0 || top >= CARDS) {
            PyErr_Format(PyExc_ValueError, "table %lld: its %s is outside what a game state holds", (long long)i,
                         len < 0 || len > shoe ? "pile_len" : "pile");
            goto done;
        }
    }
    int64_t order[MAX_SHOE];
    for (Py_ssize_t j = 0; j < k; j++) {
        int64_t i = rows[j], under = pile_len[i] > 0 ? pile_len[i] - 1 : 0;
        shuffled(stream_base((uint32_t)seed32, i, counter[i]), (int)shoe, under, order);
        counter[i] += 1;
        int64_t *cards = pile + i * shoe, top = cards[under];
        for (Py_ssize_t p = 0; p < shoe; p++) stock[i * shoe + p] = cards[order[p]];
        stock_len[i] = under;
        memset(cards, 0, (size_t)shoe * sizeof(int64_t));
        cards[0] = top;
        pile_len[i] = 1;
        memset(pile_counts + i * CARDS, 0, CARDS * sizeof(float));
        pile_counts[i * CARDS + top] = 1.0f;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release_buffers(views, REFILL_BUFFERS);
    return result;
}
