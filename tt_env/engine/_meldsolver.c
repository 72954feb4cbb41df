/*
 * Exact least-penalty meld solver for Three Thirteen, as a CPython extension: the glue.
 *
 * Entry points (the pure-Python twin tt_env/engine/melds_py.py has the same five, with the
 * same answers and the same input errors):
 *
 *   least_penalty(hand, wild_rank, aces_high=False, meld_needs_natural=False) -> int
 *   discard_penalties(hand, wild_rank, aces_high=False, meld_needs_natural=False)
 *       -> [(card, least penalty of the hand less one copy of card)] for each distinct card
 *   solve(hand, wild_rank, aces_high=False, meld_needs_natural=False)
 *       -> (deadwood, melds as lists of card ints, unmelded card ints)
 *   after_draw_values(hand, cards, wild_rank, aces_high=False, meld_needs_natural=False)
 *       -> [expert-v0's value of drawing each card of cards]
 *   draw_gains(hands, weights, wild_rank, aces_high=False, meld_needs_natural=False,
 *              out_bonus=0.0, draws=None) -> [(least penalty, expected gain of one draw)]
 *   least_penalty_counts(counts, wild_ranks, aces_high, meld_needs_natural, out) -> None
 *   melds_completely_counts(counts, wild_ranks, aces_high, meld_needs_natural, out) -> None
 *       (C only: least_penalty of many hands given as card-count buffers, or whether it is 0;
 *       tt_env.batch uses them)
 *
 * after_draw_values and draw_gains live in _meldsolver_draws.c (their work in meld_draws.c);
 * this file has the argument parsers they share (meldsolver_py.h) and the method table.
 *
 * Penalties come from the fast path (meld_fast.c) where the hand is in its scope, else from
 * the general search (meld_search.c), which also builds solve's arrangement. Two test
 * hooks, _fast_penalty (None outside the fast path's scope) and _search_penalty, run one
 * path each; a third, _could_meld_completely_counts, answers the go-out filter alone. The arguments are parsed by hand (METH_FASTCALL) and the hand is read straight
 * from a list or tuple: least_penalty is called millions of times by the agents and the
 * solver features.
 *
 * Input checks, in this order, with the messages melds_py.py raises too: wild_rank an int
 * (not a bool) in 0..13; hand an iterable of at most 40 cards; each card an int (not a
 * bool) in 0..51; for the draw entry points, hands of at most 39 cards, then their own
 * arguments (see _meldsolver_draws.c).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "meldsolver.h"
#include "meldsolver_py.h"

/* ---------------------------------------------------------------- arguments */
static const char *const ARG_NAMES[4] = {"hand", "wild_rank", "aces_high", "meld_needs_natural"};

/* A new reference to the int value of `o`; NULL for a bool or a non-int (no exception set) or an error (set). */
PyObject *tt_as_index(PyObject *o) {
    if (PyLong_CheckExact(o)) { Py_INCREF(o); return o; }
    if (PyBool_Check(o)) return NULL;
    PyObject *idx = PyNumber_Index(o);
    if (!idx && PyErr_ExceptionMatches(PyExc_TypeError)) PyErr_Clear();
    return idx;
}

static int parse_wild(PyObject *o, int *wild) {
    PyObject *idx = tt_as_index(o);
    if (!idx) {
        if (PyErr_Occurred()) return -1;
        if (PyBool_Check(o))
            PyErr_Format(PyExc_TypeError, "wild_rank=%R is a bool, not an int: use 1..13 (or 0 for no wilds)", o);
        else
            PyErr_Format(PyExc_TypeError, "wild_rank=%R is not an int: use 1..13 (or 0 for no wilds)", o);
        return -1;
    }
    int overflow = 0;
    long v = PyLong_AsLongAndOverflow(idx, &overflow);
    if (overflow || v < 0 || v > 13) {
        PyErr_Format(PyExc_ValueError, "wild_rank=%S is not allowed: use 1..13 (or 0 for no wilds)", idx);
        Py_DECREF(idx);
        return -1;
    }
    Py_DECREF(idx);
    *wild = (int)v;
    return 0;
}

int tt_parse_card(PyObject *o, int *card) {
    if (PyLong_CheckExact(o)) {
        int overflow = 0;
        long v = PyLong_AsLongAndOverflow(o, &overflow);
        if (!overflow && v >= 0 && v <= 51) { *card = (int)v; return 0; }
    }
    PyObject *idx = tt_as_index(o);
    if (!idx) {
        if (PyErr_Occurred()) return -1;
        if (PyBool_Check(o))
            PyErr_Format(PyExc_TypeError, "card %R is a bool, not a card int: cards are ints 0..51", o);
        else
            PyErr_Format(PyExc_TypeError, "card %R is not an int: cards are ints 0..51", o);
        return -1;
    }
    int overflow = 0;
    long v = PyLong_AsLongAndOverflow(idx, &overflow);
    if (overflow || v < 0 || v > 51) {
        PyErr_Format(PyExc_ValueError, "%S is not a card int: allowed 0..51", idx);
        Py_DECREF(idx);
        return -1;
    }
    Py_DECREF(idx);
    *card = (int)v;
    return 0;
}

/* Collects the arguments named `names` (the first `required` of them required), positional
   then keyword, into `vals` (NULL where one was not given). */
int tt_collect_args(const char *fname, const char *const *names, int nnames, int required,
                    PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **vals) {
    for (int i = 0; i < nnames; i++) vals[i] = NULL;
    if (nargs > nnames) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fname, nnames, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = args[i];
    if (kwnames) {
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(kwnames); j++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, j);
            int i = 0;
            while (i < nnames && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) i++;
            if (i == nnames) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, key);
                return -1;
            }
            if (vals[i]) {
                PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname, names[i]);
                return -1;
            }
            vals[i] = args[nargs + j];
        }
    }
    for (int i = 0; i < required; i++) {
        if (!vals[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, names[i]);
            return -1;
        }
    }
    return 0;
}

/* The rules of a call (wild_rank, aces_high, meld_needs_natural) into the empty hand `h`. */
int tt_parse_rules(PyObject *wild, PyObject *aces_high, PyObject *natural, Hand *h) {
    int wild_rank, ah = 0, nat = 0;
    if (parse_wild(wild, &wild_rank) < 0) return -1;
    if (aces_high && (ah = PyObject_IsTrue(aces_high)) < 0) return -1;
    if (natural && (nat = PyObject_IsTrue(natural)) < 0) return -1;
    tt_hand_clear(h, wild_rank, ah, nat);
    return 0;
}

/* The cards of `hand` into `h` (empty, with the rules) and, in hand order, into cards[]. */
int tt_parse_hand(PyObject *hand, Hand *h, int *cards, int *num_cards) {
    PyObject *seq = PySequence_Fast(hand, "hand must be a sequence of card ints");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_CARDS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "hand has %zd cards: the solver takes at most %d", n, MAX_CARDS);
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (tt_parse_card(items[i], &cards[i]) < 0) { Py_DECREF(seq); return -1; }
        tt_hand_add(h, cards[i]);
    }
    Py_DECREF(seq);
    *num_cards = (int)n;
    return 0;
}

/* Fills `call` from the values of (hand, wild_rank, aces_high, meld_needs_natural). */
int tt_parse_hand_call(PyObject *hand, PyObject *wild, PyObject *aces_high, PyObject *natural, Call *call) {
    if (tt_parse_rules(wild, aces_high, natural, &call->hand) < 0) return -1;
    return tt_parse_hand(hand, &call->hand, call->cards, &call->num_cards);
}

/* Parses (hand, wild_rank, aces_high=False, meld_needs_natural=False) into `call`. */
static int parse_call(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      Call *call) {
    PyObject *vals[4];
    if (tt_collect_args(fname, ARG_NAMES, 4, 2, args, nargs, kwnames, vals) < 0) return -1;
    return tt_parse_hand_call(vals[0], vals[1], vals[2], vals[3], call);
}

/* ---------------------------------------------------------------- entry points */
static int penalty_of_hand(const Hand *h) {
    int v = tt_fast_penalty(h);
    if (v >= 0) return v;
    Ctx c;
    tt_search_init(&c, h);
    return tt_search_penalty(&c, -1);
}

static PyObject *py_least_penalty(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Call call;
    if (parse_call("least_penalty", args, nargs, kwnames, &call) < 0) return NULL;
    return PyLong_FromLong(penalty_of_hand(&call.hand));
}

/* Each distinct card's sub-hand: the fast path where it is in scope, else the general search,
   whose sub-solves share one memo (they are states of the whole hand's search). */
static PyObject *py_discard_penalties(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
    Call call;
    if (parse_call("discard_penalties", args, nargs, kwnames, &call) < 0) return NULL;
    Hand *h = &call.hand;
    int held[52] = {0}, num_distinct = 0;
    for (int i = 0; i < call.num_cards; i++) num_distinct += held[call.cards[i]]++ == 0;
    PyObject *out = PyList_New(num_distinct);
    if (!out) return NULL;
    Ctx c;
    int search_ready = 0;
    Py_ssize_t k = 0;
    for (int card = 0; card < 52; card++) {
        if (!held[card]) continue;
        tt_hand_remove(h, card);   /* the sub-hand in place; the order of wild cards does not matter here */
        int v = tt_fast_penalty(h);
        tt_hand_add(h, card);
        if (v < 0) {
            if (!search_ready) { tt_search_init(&c, h); search_ready = 1; }
            v = tt_search_penalty(&c, card);
        }
        PyObject *pair = Py_BuildValue("(ii)", card, v);
        if (!pair) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k++, pair);
    }
    return out;
}

/* Test hooks: each path alone, so that tests can set one against the other. */
static PyObject *py_fast_penalty(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Call call;
    if (parse_call("_fast_penalty", args, nargs, kwnames, &call) < 0) return NULL;
    int v = tt_fast_penalty(&call.hand);
    if (v < 0) Py_RETURN_NONE;
    return PyLong_FromLong(v);
}

static PyObject *py_search_penalty(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Call call;
    if (parse_call("_search_penalty", args, nargs, kwnames, &call) < 0) return NULL;
    Ctx c;
    tt_search_init(&c, &call.hand);
    return PyLong_FromLong(tt_search_penalty(&c, -1));
}

/* A new list of the ints cards[0..n). */
PyObject *tt_build_list(const int *cards, int n) {
    PyObject *lst = PyList_New(n);
    if (!lst) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLong(cards[i]);
        if (!v) { Py_DECREF(lst); return NULL; }
        PyList_SET_ITEM(lst, i, v);
    }
    return lst;
}

static PyObject *py_solve(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Call call;
    if (parse_call("solve", args, nargs, kwnames, &call) < 0) return NULL;
    Ctx c;
    tt_search_init(&c, &call.hand);
    Arrangement *a = (Arrangement *)PyMem_Malloc(sizeof(Arrangement));
    if (!a) return PyErr_NoMemory();
    if (tt_search_arrange(&c, &call.hand, a) < 0) {
        PyMem_Free(a);
        PyErr_SetString(PyExc_RuntimeError, "meld reconstruction failed");
        return NULL;
    }
    PyObject *mlist = PyList_New(a->nmelds), *dl = NULL;
    if (!mlist) goto fail;
    for (int i = 0; i < a->nmelds; i++) {
        PyObject *m = tt_build_list(a->melds[i], a->mlen[i]);
        if (!m) goto fail;
        PyList_SET_ITEM(mlist, i, m);
    }
    dl = tt_build_list(a->dead, a->ndead);
    if (!dl) goto fail;
    int total = a->total;
    PyMem_Free(a);
    return Py_BuildValue("(iNN)", total, mlist, dl);
fail:
    Py_XDECREF(mlist);
    PyMem_Free(a);
    return NULL;
}

/* ---------------------------------------------------------------- batched least penalties */
/* An integer element of a buffer (format b B h H i I l L q Q n N), or -1 with a TypeError set
   for any other format. */
static int buffer_int_kind(const Py_buffer *view, const char *what) {
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    if (f[0] && !f[1] && strchr("bBhHiIlLqQnN", f[0])) return f[0];
    PyErr_Format(PyExc_TypeError, "%s must hold integers (format b B h H i I l L q Q), not format '%s'",
                 what, view->format ? view->format : "B");
    return -1;
}

static long long buffer_int_at(const Py_buffer *view, int kind, Py_ssize_t i) {
    const char *p = (const char *)view->buf + i * view->itemsize;
    switch (kind) {
    case 'b': return *(const signed char *)p;
    case 'B': return *(const unsigned char *)p;
    case 'h': return *(const short *)p;
    case 'H': return *(const unsigned short *)p;
    case 'i': return *(const int *)p;
    case 'I': return *(const unsigned int *)p;
    case 'l': return *(const long *)p;
    case 'L': return (long long)*(const unsigned long *)p;
    case 'n': return *(const Py_ssize_t *)p;
    case 'N': return (long long)*(const size_t *)p;
    case 'q': return *(const long long *)p;
    default:  return (long long)*(const unsigned long long *)p;
    }
}

/* The go-out check's cheap filter of tt_env/batch/go_out_filter.py (could_meld_completely), on
   the 52 card counts of a hand: 0 only where the hand surely holds unmelded cards (fewer wilds
   than a lower bound on those a complete arrangement needs; see that function for the bounds).
   Ranks are taken circularly, which allows more melds, so the bounds hold under both ace rules. */
static unsigned rotate13(unsigned x, int k) { return ((x << k) | (x >> (13 - k))) & 0x1FFFu; }

/* The counts are bytes (at most MAX_CARDS = 40 in all, so below 0x80 each, and each rank's sum
   of four suits too), read eight at a time: a byte's high bit after adding 0x80 - k says whether
   it is at least k, and one multiplication gathers eight such bits into a mask. No branch on a
   card: whether a card is held is what a branch predictor cannot guess. */
#define BYTES_HIGH 0x8080808080808080ULL
#define FIVE_BYTES 0x000000FFFFFFFFFFULL

static uint64_t load_bytes(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* Bit j set where byte j of w (each below 0x80) is at least k (1..127). */
static unsigned bytes_at_least(uint64_t w, int k) {
    uint64_t high = (w + (uint64_t)(0x80 - k) * 0x0101010101010101ULL) & BYTES_HIGH;
    return (unsigned)(((high >> 7) * 0x0102040810204080ULL) >> 56);
}

/* Bit r of the 13 ranks (bytes 0..12 of p) where the count is at least k. */
static unsigned ranks_at_least(const unsigned char *p, int k) {
    return bytes_at_least(load_bytes(p), k) | bytes_at_least(load_bytes(p + 8) & FIVE_BYTES, k) << 8;
}

/* The bits set in a 13-bit mask, without __builtin_popcount: built for any x86-64 (no POPCNT
   instruction assumed), that is a call into libgcc per use. */
static int popcount13(unsigned x) {
    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0F0Fu;
    return (int)((x + (x >> 8)) & 0x1Fu);
}

/* `counts`: the 52 counts of a hand as bytes, zero-padded to 64 (read eight at a time). */
static int could_meld_completely(const unsigned char *counts, int wild_rank) {
    unsigned once[4], twice[4], same_rank = 0, costly_ranks = 0;
    uint64_t rank_low = 0, rank_high = 0;      /* each rank's count over the suits, bytes 0..12 */
    for (int s = 0; s < 4; s++) {
        const unsigned char *suit = counts + s * 13;
        once[s] = ranks_at_least(suit, 1);
        twice[s] = ranks_at_least(suit, 2);
        rank_low += load_bytes(suit);
        rank_high += load_bytes(suit + 8) & FIVE_BYTES;
    }
    unsigned char of_rank[16];
    memcpy(of_rank, &rank_low, 8);
    memcpy(of_rank + 8, &rank_high, 8);
    unsigned tripled = bytes_at_least(rank_low, 3) | bytes_at_least(rank_high, 3) << 8;
    unsigned wild_bit = wild_rank > 0 ? 1u << (wild_rank - 1) : 0u;   /* the wild rank holds no naturals */
    int wilds = wild_rank > 0 ? of_rank[wild_rank - 1] : 0;
    tripled &= ~wild_bit;
    for (int s = 0; s < 4; s++) { once[s] &= ~wild_bit; twice[s] &= ~wild_bit; }
    for (int s = 0; s < 4; s++) {
        same_rank |= twice[s];
        for (int t = s + 1; t < 4; t++) same_rank |= once[s] & once[t];
    }
    int needed = 0, suits = 0;
    for (int s = 0; s < 4; s++) {
        unsigned held = once[s];
        unsigned near = rotate13(held, 1) | rotate13(held, 2) | rotate13(held, 11) | rotate13(held, 12);
        int isolated = popcount13(held & ~near & ~same_rank);
        needed += 2 * ((isolated + 1) / 2);
        unsigned in_three = held & rotate13(held, 12) & rotate13(held, 11);   /* bit r: r, r+1, r+2 held */
        unsigned costly = held & ~(in_three | rotate13(in_three, 1) | rotate13(in_three, 2) | tripled);
        suits += costly != 0;
        costly_ranks |= costly;
    }
    int melds = suits >= 2 && popcount13(costly_ranks) >= 2 ? 2 : suits >= 1;
    return wilds >= (needed > melds ? needed : melds);
}

/* The 52 counts of hand i of a counts buffer into `counts` (bytes, zero-padded to 64); -1 with a
   ValueError set where they are not a hand the solver takes. uint8 (the batched engine's) is read
   without conversion calls. */
static int read_counts(const Py_buffer *view, int kind, Py_ssize_t i, unsigned char *counts) {
    int total = 0;
    memset(counts + 52, 0, 12);
    if (kind == 'B') {
        memcpy(counts, (const unsigned char *)view->buf + i * 52, 52);
        for (int c = 0; c < 52; c++) total += counts[c];
        if (total <= MAX_CARDS) return 0;
        total = 0;   /* too many cards: the checked loop below names the card */
    }
    for (int c = 0; c < 52; c++) {
        long long k = buffer_int_at(view, kind, i * 52 + c);
        if (k < 0 || k > MAX_CARDS || (total += (int)k) > MAX_CARDS) {
            PyErr_Format(PyExc_ValueError, "counts[%zd] is not a hand the solver takes: counts 0..%d "
                         "per card and at most %d cards (card %d has %lld)", i, MAX_CARDS, MAX_CARDS, c, k);
            return -1;
        }
        counts[c] = (unsigned char)k;
    }
    return 0;
}

/* least_penalty_counts(counts, wild_ranks, aces_high, meld_needs_natural, out): for each hand i,
   out[i] = least_penalty of the hand holding counts[i*52 + c] copies of card c, with wild rank
   wild_ranks[i]. Contiguous integer buffers (numpy arrays, torch CPU tensors via .numpy());
   out int32 or int64. One C loop, no Python object per hand.
   melds_completely_counts(counts, wild_ranks, aces_high, meld_needs_natural, out): the same hands,
   out[i] = 1 where that least penalty is 0, else 0 (out bool or uint8): the go-out check. Only the
   hands the filter above keeps are solved. */
/* mode: LEAST_PENALTY (least_penalty_counts), ZERO_ONLY (melds_completely_counts) or FILTER_ONLY
   (_could_meld_completely_counts, a test hook: the filter's answer, nothing solved). */
enum { LEAST_PENALTY, ZERO_ONLY, FILTER_ONLY };

static PyObject *batched_counts(PyObject *args, int mode) {
    static const char *const formats[3] = {"OOppO:least_penalty_counts", "OOppO:melds_completely_counts",
                                           "OOppO:_could_meld_completely_counts"};
    int zero_only = mode != LEAST_PENALTY;
    PyObject *counts_obj, *wild_obj, *out_obj;
    int aces_high, needs_natural;
    if (!PyArg_ParseTuple(args, formats[mode],
                          &counts_obj, &wild_obj, &aces_high, &needs_natural, &out_obj))
        return NULL;
    Py_buffer counts, wilds, out;
    if (PyObject_GetBuffer(counts_obj, &counts, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(wild_obj, &wilds, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&counts);
        return NULL;
    }
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&counts); PyBuffer_Release(&wilds);
        return NULL;
    }
    PyObject *result = NULL;
    int ck = buffer_int_kind(&counts, "counts"), wk = ck < 0 ? -1 : buffer_int_kind(&wilds, "wild_ranks");
    if (ck < 0 || wk < 0) goto done;
    const char *of = out.format ? out.format : "B";
    if (*of == '@' || *of == '=' || *of == '<') of++;
    int out64 = (of[0] == 'q' || of[0] == 'l') && !of[1] && out.itemsize == 8;
    int out32 = (of[0] == 'i' || of[0] == 'l') && !of[1] && out.itemsize == 4;
    int out8 = (of[0] == '?' || of[0] == 'B') && !of[1] && out.itemsize == 1;
    if (zero_only ? !out8 : !out64 && !out32) {
        PyErr_Format(PyExc_TypeError, zero_only ? "out must be a bool or uint8 buffer, not format '%s'"
                                                : "out must be an int32 or int64 buffer, not format '%s'",
                     out.format ? out.format : "B");
        goto done;
    }
    Py_ssize_t n = wilds.len / wilds.itemsize;
    if (counts.len / counts.itemsize != n * 52 || out.len / out.itemsize != n) {
        PyErr_Format(PyExc_ValueError, "counts has %zd entries, wild_ranks %zd and out %zd: they must be "
                     "52 per hand, one per hand and one per hand", counts.len / counts.itemsize, n,
                     out.len / out.itemsize);
        goto done;
    }
    Hand h;
    unsigned char hand_counts[64];
    for (Py_ssize_t i = 0; i < n; i++) {
        long long wild = buffer_int_at(&wilds, wk, i);
        if (wild < 0 || wild > 13) {
            PyErr_Format(PyExc_ValueError, "wild_ranks[%zd]=%lld is not allowed: use 1..13 (or 0 for no wilds)", i, wild);
            goto done;
        }
        if (read_counts(&counts, ck, i, hand_counts) < 0) goto done;
        if (zero_only) {
            int could = could_meld_completely(hand_counts, (int)wild);
            if (mode == FILTER_ONLY || !could) {   /* the filter's answer, or a hand it drops */
                ((unsigned char *)out.buf)[i] = (unsigned char)could;
                continue;
            }
        }
        tt_hand_clear(&h, (int)wild, aces_high, needs_natural);
        for (int c = 0; c < 52; c++)
            for (int j = 0; j < hand_counts[c]; j++) tt_hand_add(&h, c);
        int v = penalty_of_hand(&h);
        if (zero_only) ((unsigned char *)out.buf)[i] = v == 0;
        else if (out64) ((int64_t *)out.buf)[i] = v;
        else ((int32_t *)out.buf)[i] = v;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&counts); PyBuffer_Release(&wilds); PyBuffer_Release(&out);
    return result;
}

static PyObject *py_least_penalty_counts(PyObject *self, PyObject *args) { return batched_counts(args, LEAST_PENALTY); }

static PyObject *py_melds_completely_counts(PyObject *self, PyObject *args) {
    return batched_counts(args, ZERO_ONLY);
}

static PyObject *py_could_meld_completely_counts(PyObject *self, PyObject *args) {
    return batched_counts(args, FILTER_ONLY);
}

#define SIGNATURE "(hand, wild_rank, aces_high=False, meld_needs_natural=False)\n--\n\n"

static PyMethodDef methods[] = {
    {"least_penalty", (PyCFunction)(void (*)(void))py_least_penalty, METH_FASTCALL | METH_KEYWORDS,
     "least_penalty" SIGNATURE "The least penalty of the hand (card ints) over every arrangement."},
    {"discard_penalties", (PyCFunction)(void (*)(void))py_discard_penalties, METH_FASTCALL | METH_KEYWORDS,
     "discard_penalties" SIGNATURE
     "[(card, least penalty of the hand less one copy of card)] for each distinct card, by card."},
    {"solve", (PyCFunction)(void (*)(void))py_solve, METH_FASTCALL | METH_KEYWORDS,
     "solve" SIGNATURE "(deadwood, melds as lists of card ints, unmelded card ints) of one best arrangement."},
    {"after_draw_values", (PyCFunction)(void (*)(void))tt_py_after_draw_values, METH_FASTCALL | METH_KEYWORDS,
     "after_draw_values(hand, cards, wild_rank, aces_high=False, meld_needs_natural=False)\n--\n\n"
     "For each card of cards: the least penalty of hand plus that card less the highest unmelded value\n"
     "of solve()'s arrangement (a wild costs min(its rank, 10)), or, when that arrangement melds\n"
     "every card, the least penalty after the best discard (what expert-v0 calls after_draw)."},
    {"draw_gains", (PyCFunction)(void (*)(void))tt_py_draw_gains, METH_FASTCALL | METH_KEYWORDS,
     "draw_gains(hands, weights, wild_rank, aces_high=False, meld_needs_natural=False, out_bonus=0.0, "
     "draws=None)\n--\n\n"
     "[(least penalty of the hand, expected gain of one draw)] per hand: the sum over the cards u of\n"
     "its draws mask (None: every card) with weights[u] not <= 0 whose after_draw value a is below\n"
     "the penalty of weights[u] * (penalty - a, plus out_bonus when a == 0), in card order;\n"
     "(0, 0.0) for a hand whose penalty is already 0. The hands' draws share one search."},
    {"least_penalty_counts", (PyCFunction)py_least_penalty_counts, METH_VARARGS,
     "least_penalty_counts(counts, wild_ranks, aces_high, meld_needs_natural, out)\n--\n\n"
     "Batched least_penalty: counts a contiguous integer buffer of 52 card counts per hand, wild_ranks\n"
     "one wild rank (0..13) per hand, out a writable int32/int64 buffer of one penalty per hand."},
    {"melds_completely_counts", (PyCFunction)py_melds_completely_counts, METH_VARARGS,
     "melds_completely_counts(counts, wild_ranks, aces_high, meld_needs_natural, out)\n--\n\n"
     "Batched go-out check: as least_penalty_counts, with out a writable bool/uint8 buffer set to 1\n"
     "where the least penalty is 0 (the hand melds completely), else 0."},
    {"_could_meld_completely_counts", (PyCFunction)py_could_meld_completely_counts, METH_VARARGS,
     "_could_meld_completely_counts(counts, wild_ranks, aces_high, meld_needs_natural, out)\n--\n\n"
     "Test hook: the go-out filter's answer for each hand (melds_completely_counts solves only those it keeps)."},
    {"_fast_penalty", (PyCFunction)(void (*)(void))py_fast_penalty, METH_FASTCALL | METH_KEYWORDS,
     "_fast_penalty" SIGNATURE "Test hook: the fast path's least penalty, or None outside its scope."},
    {"_search_penalty", (PyCFunction)(void (*)(void))py_search_penalty, METH_FASTCALL | METH_KEYWORDS,
     "_search_penalty" SIGNATURE "Test hook: the general search's least penalty."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_meldsolver", "Exact Three Thirteen meld solver (C accelerator).", -1, methods
};

PyMODINIT_FUNC PyInit__meldsolver(void) {
    if (tt_memo_init() < 0) return PyErr_NoMemory();
    return PyModule_Create(&moduledef);
}
