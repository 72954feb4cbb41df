/*
 * The Python entry points of the draw values (expert-v0's lookahead): after_draw_values and
 * draw_gains, bound in _meldsolver.c's method table; the work is meld_draws.c's. Input checks
 * with the messages melds_py.py raises too (see each function).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>

#include "meldsolver.h"
#include "meldsolver_py.h"

/* A real number (what float() takes, less bools and strings) into *out: 0; 1 where `o` is not
   one (no exception set); -1 on another error (set: an int too large for a float). */
static int parse_real(PyObject *o, double *out) {
    if (PyBool_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o)) return 1;
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
        PyErr_Clear();
        return 1;
    }
    *out = v;
    return 0;
}

/* Both draw entry points add a card to a hand: it may hold at most 39. */
static int check_room_for_a_draw(int num_cards, const char *fname) {
    if (num_cards < MAX_CARDS) return 0;
    PyErr_Format(PyExc_ValueError, "hand has %d cards: %s adds one, and the solver takes at most %d",
                 MAX_CARDS, fname, MAX_CARDS);
    return -1;
}

static const char *const AFTER_DRAW_NAMES[5] = {"hand", "cards", "wild_rank", "aces_high", "meld_needs_natural"};

/* after_draw_values(hand, cards, wild_rank, aces_high=False, meld_needs_natural=False): the
   value of drawing each card of `cards` (tt_draw_values, meld_draws.c). The checks: those of
   the other entry points on (hand, wild_rank), a hand of at most 39 cards, then `cards` a
   sequence of card ints. */
PyObject *tt_py_after_draw_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
    PyObject *vals[5];
    Call call;
    if (tt_collect_args("after_draw_values", AFTER_DRAW_NAMES, 5, 3, args, nargs, kwnames, vals) < 0) return NULL;
    if (tt_parse_hand_call(vals[0], vals[2], vals[3], vals[4], &call) < 0) return NULL;
    if (check_room_for_a_draw(call.num_cards, "after_draw_values") < 0) return NULL;
    PyObject *seq = PySequence_Fast(vals[1], "cards must be a sequence of card ints");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > INT_MAX / 3) { Py_DECREF(seq); return PyErr_NoMemory(); }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    int *drawn = (int *)PyMem_Malloc(3 * sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!drawn) { Py_DECREF(seq); return PyErr_NoMemory(); }
    int *values = drawn + n, *which = values + n;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (tt_parse_card(items[i], &drawn[i]) < 0) { Py_DECREF(seq); PyMem_Free(drawn); return NULL; }
        which[i] = 0;
    }
    Py_DECREF(seq);
    const Hand *hands[1] = {&call.hand};
    tt_draw_values(hands, which, drawn, (int)n, values);
    PyObject *out = tt_build_list(values, (int)n);
    PyMem_Free(drawn);
    return out;
}

static const char *const DRAW_GAINS_NAMES[7] = {"hands", "weights", "wild_rank", "aces_high", "meld_needs_natural",
                                                "out_bonus", "draws"};
#define ALL_DRAWS ((1ULL << 52) - 1)
#define DRAWS_HINT "use a mask of card ints, bit u set to weigh drawing card u (0 <= draws < 2**52)"

/* Re-raises the exception being raised with "hands[i]: " before its message. */
static void prefix_hand_error(Py_ssize_t i) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *message = value ? PyObject_Str(value) : NULL;
    if (!message) { PyErr_Clear(); PyErr_Restore(type, value, tb); return; }
    PyErr_Format(type, "hands[%zd]: %U", i, message);
    Py_DECREF(message); Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(tb);
}

/* One mask of `draws` (the i-th) into *mask: 0, or -1 with the error set. */
static int parse_draws_mask(PyObject *o, Py_ssize_t i, uint64_t *mask) {
    PyObject *idx = tt_as_index(o);
    if (!idx) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "draws[%zd]=%R is not an int: " DRAWS_HINT, i, o);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (overflow || v < 0 || (unsigned long long)v > ALL_DRAWS) {
        PyErr_Format(PyExc_ValueError, "draws[%zd]=%R is not allowed: " DRAWS_HINT, i, o);
        return -1;
    }
    *mask = (uint64_t)v;
    return 0;
}

/* draw_gains(hands, weights, wild_rank, aces_high=False, meld_needs_natural=False, out_bonus=0.0,
   draws=None) -> [(least penalty, gain)] per hand: tt_draw_gains (meld_draws.c). The checks:
   the rules, then hands a sequence of hands, each as the other entry points check a hand and
   of at most 39 cards (errors start "hands[i]: "), weights a sequence of 52 real numbers,
   out_bonus a real number, draws None (every card) or one int mask per hand. */
PyObject *tt_py_draw_gains(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *vals[7];
    Hand rules;
    if (tt_collect_args("draw_gains", DRAW_GAINS_NAMES, 7, 3, args, nargs, kwnames, vals) < 0) return NULL;
    if (tt_parse_rules(vals[2], vals[3], vals[4], &rules) < 0) return NULL;
    PyObject *hseq = PySequence_Fast(vals[0], "hands must be a sequence of hands (each a sequence of card ints)");
    if (!hseq) return NULL;
    Py_ssize_t nh = PySequence_Fast_GET_SIZE(hseq);
    PyObject *dseq = NULL, *out = NULL;
    size_t per_hand = sizeof(Hand) + sizeof(Hand *) + sizeof(uint64_t) + sizeof(int) + sizeof(double);
    char *buf = nh < INT_MAX / 52 ? (char *)PyMem_Malloc(per_hand * (size_t)(nh > 0 ? nh : 1)) : NULL;
    if (!buf) { Py_DECREF(hseq); return PyErr_NoMemory(); }
    Hand *hands = (Hand *)buf;
    const Hand **hand_ptrs = (const Hand **)(hands + nh);
    uint64_t *draws = (uint64_t *)(hand_ptrs + nh);
    double *gains = (double *)(draws + nh);
    int *penalties = (int *)(gains + nh);
    PyObject **items = PySequence_Fast_ITEMS(hseq);
    for (Py_ssize_t i = 0; i < nh; i++) {
        int cards[MAX_CARDS], num_cards;
        hands[i] = rules;
        hand_ptrs[i] = &hands[i];
        draws[i] = ALL_DRAWS;
        if (tt_parse_hand(items[i], &hands[i], cards, &num_cards) < 0 ||
            check_room_for_a_draw(num_cards, "draw_gains") < 0) {
            prefix_hand_error(i);
            goto done;
        }
    }
    double weights[52], out_bonus = 0.0;
    PyObject *wseq = PySequence_Fast(vals[1], "weights must be a sequence of 52 numbers (one per card int)");
    if (!wseq) goto done;
    if (PySequence_Fast_GET_SIZE(wseq) != 52) {
        PyErr_Format(PyExc_ValueError, "weights has %zd entries: it takes one per card int, 52",
                     PySequence_Fast_GET_SIZE(wseq));
        Py_DECREF(wseq);
        goto done;
    }
    PyObject **witems = PySequence_Fast_ITEMS(wseq);
    for (int u = 0; u < 52; u++) {
        int status = parse_real(witems[u], &weights[u]);
        if (status > 0) PyErr_Format(PyExc_TypeError, "weights[%d] = %R is not a real number", u, witems[u]);
        if (status) { Py_DECREF(wseq); goto done; }
    }
    Py_DECREF(wseq);
    if (vals[5]) {
        int status = parse_real(vals[5], &out_bonus);
        if (status > 0) PyErr_Format(PyExc_TypeError, "out_bonus=%R is not a real number", vals[5]);
        if (status) goto done;
    }
    if (vals[6] && vals[6] != Py_None) {
        dseq = PySequence_Fast(vals[6], "draws must be None or a sequence of masks, one per hand");
        if (!dseq) goto done;
        if (PySequence_Fast_GET_SIZE(dseq) != nh) {
            PyErr_Format(PyExc_ValueError, "draws has %zd masks: it takes one per hand, %zd",
                         PySequence_Fast_GET_SIZE(dseq), nh);
            goto done;
        }
        PyObject **ditems = PySequence_Fast_ITEMS(dseq);
        for (Py_ssize_t i = 0; i < nh; i++)
            if (parse_draws_mask(ditems[i], i, &draws[i]) < 0) goto done;
    }
    if (tt_draw_gains(hand_ptrs, (int)nh, weights, draws, out_bonus, penalties, gains) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyList_New(nh);
    for (Py_ssize_t i = 0; out && i < nh; i++) {
        PyObject *pair = Py_BuildValue("(id)", penalties[i], gains[i]);
        if (!pair) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, pair);
    }
done:
    Py_XDECREF(dseq);
    Py_DECREF(hseq);
    PyMem_Free(buf);
    return out;
}

