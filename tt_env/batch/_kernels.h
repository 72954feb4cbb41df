/*
 * Shared by the batched engine's CPU kernels (tt_env.batch._kernels): the buffer arguments.
 *
 * Every kernel takes torch CPU tensors as numpy views (no copy): C-contiguous buffers whose
 * element kind ('f' float32, 'q' int64, 'B' uint8, '?' bool) and number of entries are checked before
 * anything is read, so that a wrong argument is a TypeError or ValueError naming it, never a
 * read out of bounds.
 */
#ifndef TT_BATCH_KERNELS_H
#define TT_BATCH_KERNELS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define CARDS 52
#define ACTIONS 54

/* One buffer argument: its name in errors, its element kind, and whether the kernel writes it. */
typedef struct {
    const char *name;
    char kind;
    int writable;
} BufferSpec;

static inline int format_matches(const Py_buffer *view, char kind) {
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    if (f[0] == 0 || f[1] != 0) return 0;
    if (kind == 'f') return f[0] == 'f' && view->itemsize == 4;
    if (kind == 'q') return (f[0] == 'q' || f[0] == 'l') && view->itemsize == 8;
    if (kind == 'B') return f[0] == 'B' && view->itemsize == 1;
    return f[0] == '?' && view->itemsize == 1;
}

static inline const char *kind_name(char kind) {
    return kind == 'f' ? "float32" : kind == 'q' ? "int64" : kind == 'B' ? "uint8" : "bool";
}

/* Fill views[k] from objs[k] for k < count (views must start zeroed; an object that is None and
 * `optional` is left empty, buf NULL). Returns 0, or -1 with an exception set. Release with
 * release_buffers whatever happened. */
static inline int take_buffers(PyObject *const *objs, const BufferSpec *specs, int count, Py_buffer *views,
                               int optional) {
    for (int k = 0; k < count; k++) {
        if (objs[k] == Py_None && k == optional) continue;
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (specs[k].writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[k], &views[k], flags) < 0) return -1;
        if (!format_matches(&views[k], specs[k].kind)) {
            PyErr_Format(PyExc_TypeError, "%s must be a contiguous %s buffer, not format '%s'", specs[k].name,
                         kind_name(specs[k].kind), views[k].format ? views[k].format : "B");
            return -1;
        }
    }
    return 0;
}

/* 0 if every taken buffer holds expected[k] entries, else -1 with a ValueError naming it. */
static inline int check_lengths(const Py_buffer *views, const BufferSpec *specs, const Py_ssize_t *expected,
                                int count, Py_ssize_t tables, int players) {
    for (int k = 0; k < count; k++) {
        if (views[k].obj == NULL) continue;
        Py_ssize_t entries = views[k].len / views[k].itemsize;
        if (entries != expected[k]) {
            PyErr_Format(PyExc_ValueError, "%s has %zd entries, expected %zd for %zd tables of %d players",
                         specs[k].name, entries, expected[k], tables, players);
            return -1;
        }
    }
    return 0;
}

static inline void release_buffers(Py_buffer *views, int count) {
    for (int k = 0; k < count; k++)
        if (views[k].obj != NULL) PyBuffer_Release(&views[k]);
}

static inline int check_players(int n) {
    if (n >= 2 && n <= 8) return 0;
    PyErr_Format(PyExc_ValueError, "num_players=%d is not allowed: use 2..8", n);
    return -1;
}

/* Rows ahead whose pile top (or stock top) a loop over the tables asks the cache for. The top of
 * a table's pile sits at a different place in each row of the (B, S) cards, a pattern no hardware
 * prefetcher follows: without this, waiting on that one load was about 40% of the observation
 * loop (perf, 16,384 tables). */
#define PREFETCH_ROWS 8

/* Ask for the cache line of the last card of row i of a (B, shoe) int64 pile whose lengths are
 * `len` (nothing when the row is empty or its length is not one a state holds). Always inlined:
 * gcc takes a function that only prefetches for one without effects and drops its calls. */
static inline __attribute__((always_inline)) void prefetch_top(const int64_t *cards, Py_ssize_t shoe, const int64_t *len, Py_ssize_t i) {
    int64_t l = len[i];
    if (l > 0 && l <= shoe) __builtin_prefetch(cards + i * shoe + l - 1);
}

PyObject *observe_and_mask(PyObject *self, PyObject *args);
PyObject *apply_moves(PyObject *self, PyObject *args);
PyObject *end_turns(PyObject *self, PyObject *args);
PyObject *nth_legal(PyObject *self, PyObject *args);
PyObject *seat_hands(PyObject *self, PyObject *args);
PyObject *deal_rows(PyObject *self, PyObject *args);
PyObject *reshuffle_rows(PyObject *self, PyObject *args);

#endif
