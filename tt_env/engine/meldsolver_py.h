/*
 * The Python glue's shared parts (_meldsolver.c defines them; _meldsolver_draws.c uses them
 * too): a parsed call, and the argument parsers, which raise the errors melds_py.py raises.
 */
#ifndef TT_MELDSOLVER_PY_H
#define TT_MELDSOLVER_PY_H

#include <Python.h>

#include "meldsolver.h"

/* A parsed (hand, wild_rank, aces_high, meld_needs_natural). */
typedef struct {
    Hand hand;
    int num_cards;
    int cards[MAX_CARDS];   /* the hand in its own order */
} Call;

/* A new reference to the int value of `o`; NULL for a bool or a non-int (no exception set) or an error (set). */
PyObject *tt_as_index(PyObject *o);
/* A card int 0..51 into *card: 0, or -1 with the error set. */
int tt_parse_card(PyObject *o, int *card);
/* The arguments named `names` (the first `required` required), positional then keyword, into vals. */
int tt_collect_args(const char *fname, const char *const *names, int nnames, int required,
                    PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **vals);
/* The rules (wild_rank, aces_high, meld_needs_natural) into the empty hand `h`. */
int tt_parse_rules(PyObject *wild, PyObject *aces_high, PyObject *natural, Hand *h);
/* The cards of `hand` into `h` (empty, with the rules) and, in hand order, into cards[]. */
int tt_parse_hand(PyObject *hand, Hand *h, int *cards, int *num_cards);
/* Both: the call of (hand, wild_rank, aces_high, meld_needs_natural). */
int tt_parse_hand_call(PyObject *hand, PyObject *wild, PyObject *aces_high, PyObject *natural, Call *call);
/* A new list of the ints cards[0..n). */
PyObject *tt_build_list(const int *cards, int n);

/* _meldsolver_draws.c */
PyObject *tt_py_after_draw_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *tt_py_draw_gains(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

#endif
