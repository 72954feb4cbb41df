/*
 * Exact least-penalty meld solver for Three Thirteen, as a CPython extension.
 *
 * The same algorithm as tt_env/engine/melds_py.py (the pure-Python fallback); the
 * docstring there explains it. In short: a memoised depth-first search over the natural
 * (non-wild) cards in card order. The first remaining card is either deadwood, or in a set
 * with other cards of its rank, or the lowest natural card of a run in its suit (with the
 * ace-high variant, also the top of a run ending in an ace). Wild cards are a budget: a set
 * of k naturals needs max(0, 3-k) wilds, a run needs one per empty slot plus padding to
 * three. Wilds left over at the end join any meld with room (a set always has room, a run
 * has 13 minus its length), or form an all-wild set of three or more, else they are
 * deadwood. The state is (remaining naturals as a mixed-radix index, wilds left, run room
 * saturated at the wild count), so the search is exact over every arrangement.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CARDS 40
#define MAX_TYPES 40

typedef struct {
    int kind;          /* 0 deadwood, 1 set, 2 run */
    int n;             /* naturals in the meld */
    int types[16];     /* type index of each natural (runs: in slot order) */
    int pos[16];       /* runs: slot position of each natural (1..14) */
    int need;          /* wilds the meld needs */
    int card;          /* deadwood: the type */
} Choice;

typedef struct {
    int T;
    int card[MAX_TYPES], cnt[MAX_TYPES], rem[MAX_TYPES], val[MAX_TYPES];
    int suit[MAX_TYPES], rank[MAX_TYPES];
    uint64_t stride[MAX_TYPES];
    int type_at[4][15];
    int same_rank[MAX_TYPES][4], n_same[MAX_TYPES];
    int W, vw, aces_high, needs_natural;
    uint64_t dim;      /* W + 1 */
} Ctx;

typedef struct {
    uint64_t state;
    int w, room;
    int recon, target, found, best;
    Choice cur, chosen;
    uint64_t child_state;
    int child_w, child_room;
} Level;

/* ---------------------------------------------------------------- memo table */
static uint64_t *memo_keys = NULL;
static int32_t *memo_vals = NULL;
static uint32_t *memo_stamp = NULL;
static size_t memo_cap = 0, memo_count = 0;
static uint32_t memo_gen = 0;

static int memo_alloc(size_t cap) {
    uint64_t *k = (uint64_t *)malloc(cap * sizeof(uint64_t));
    int32_t *v = (int32_t *)malloc(cap * sizeof(int32_t));
    uint32_t *s = (uint32_t *)calloc(cap, sizeof(uint32_t));
    if (!k || !v || !s) { free(k); free(v); free(s); return -1; }
    if (memo_keys) {
        for (size_t i = 0; i < memo_cap; i++) {
            if (memo_stamp[i] != memo_gen) continue;
            size_t j = (size_t)(memo_keys[i] * 0x9E3779B97F4A7C15ULL >> 20) & (cap - 1);
            while (s[j] == memo_gen) j = (j + 1) & (cap - 1);
            k[j] = memo_keys[i]; v[j] = memo_vals[i]; s[j] = memo_gen;
        }
        free(memo_keys); free(memo_vals); free(memo_stamp);
    }
    memo_keys = k; memo_vals = v; memo_stamp = s; memo_cap = cap;
    return 0;
}

static void memo_new_call(void) {
    memo_gen++;
    memo_count = 0;
    if (memo_gen == 0) { /* wrapped: clear stamps once */
        memset(memo_stamp, 0, memo_cap * sizeof(uint32_t));
        memo_gen = 1;
    }
}

static inline size_t memo_slot(uint64_t key) {
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ULL >> 20) & (memo_cap - 1);
    while (memo_stamp[j] == memo_gen && memo_keys[j] != key) j = (j + 1) & (memo_cap - 1);
    return j;
}

/* ---------------------------------------------------------------- search */
static int solve_state(Ctx *c, uint64_t state, int w, int room);

static int leaf_cost(const Ctx *c, int w, int room) {
    if (w == 0 || room >= w) return 0;
    if (!c->needs_natural && w >= 3) return 0;  /* an all-wild set */
    return (w - room) * c->vw;
}

static void consider(Ctx *c, Level *L, int local, uint64_t child, int cw, int croom) {
    if (L->found) return;
    int v = local + solve_state(c, child, cw, croom);
    if (L->recon) {
        if (v == L->target) {
            L->found = 1; L->chosen = L->cur;
            L->child_state = child; L->child_w = cw; L->child_room = croom;
        }
    } else if (v < L->best) {
        L->best = v;
    }
}

static inline int add_room(const Ctx *c, int room, int add) {
    int r = room + add;
    return r > c->W ? c->W : r;
}

/* Sets holding the first card t0: choose how many of each same-rank type join. */
static void set_enum(Ctx *c, Level *L, int idx, int total, uint64_t dec) {
    int t0 = L->cur.types[0];
    if (idx == c->n_same[t0]) {
        int need = total >= 3 ? 0 : 3 - total;
        if (need <= L->w) {
            L->cur.kind = 1; L->cur.need = need;
            consider(c, L, 0, L->state - dec, L->w - need, c->W);
        }
        return;
    }
    int t = c->same_rank[t0][idx];
    int base = L->cur.n;
    set_enum(c, L, idx + 1, total, dec);
    int k;
    for (k = 1; k <= c->rem[t] && !L->found; k++) {
        L->cur.types[base + k - 1] = t;
        L->cur.n = base + k;
        c->rem[t] -= k;
        set_enum(c, L, idx + 1, total + k, dec + (uint64_t)k * c->stride[t]);
        c->rem[t] += k;
    }
    L->cur.n = base;
}

static void set_first(Ctx *c, Level *L, int t0) {
    int k;
    for (k = 1; k <= c->rem[t0] + 0 && !L->found; k++) {
        int i;
        for (i = 0; i < k; i++) L->cur.types[i] = t0;
        L->cur.n = k;
        c->rem[t0] -= k;
        set_enum(c, L, 0, k, (uint64_t)k * c->stride[t0]);
        c->rem[t0] += k;
    }
}

/* Runs whose lowest natural sits at position `lo`; `last` is the highest natural so far. */
static void run_up(Ctx *c, Level *L, int s, int lo, int last, int gaps, uint64_t dec) {
    int len = last - lo + 1;
    if (len >= 2) {
        int need = gaps + (len < 3 ? 3 - len : 0);
        if (need <= L->w) {
            L->cur.kind = 2; L->cur.need = need;
            consider(c, L, 0, L->state - dec, L->w - need, add_room(c, L->room, 13 - (len < 3 ? 3 : len)));
        }
    }
    int p;
    for (p = last + 1; p <= 13 && !L->found; p++) {
        int g = gaps + (p - last - 1);
        if (g > L->w) break;
        int t = c->type_at[s][p];
        if (t < 0 || c->rem[t] == 0) continue;
        int n = L->cur.n;
        L->cur.types[n] = t; L->cur.pos[n] = p; L->cur.n = n + 1;
        c->rem[t]--;
        run_up(c, L, s, lo, p, g, dec + c->stride[t]);
        c->rem[t]++;
        L->cur.n = n;
    }
}

/* Runs ending in a high ace (position 14); `low` is the lowest natural so far. */
static void run_down(Ctx *c, Level *L, int s, int low, int gaps, uint64_t dec) {
    int len = 14 - low + 1;
    if (len >= 2) {
        int need = gaps + (len < 3 ? 3 - len : 0);
        if (need <= L->w) {
            L->cur.kind = 2; L->cur.need = need;
            consider(c, L, 0, L->state - dec, L->w - need, add_room(c, L->room, 13 - (len < 3 ? 3 : len)));
        }
    }
    int p;
    for (p = low - 1; p >= 2 && !L->found; p--) {
        int g = gaps + (low - p - 1);
        if (g > L->w) break;
        int t = c->type_at[s][p];
        if (t < 0 || c->rem[t] == 0) continue;
        int n = L->cur.n;
        L->cur.types[n] = t; L->cur.pos[n] = p; L->cur.n = n + 1;
        c->rem[t]--;
        run_down(c, L, s, p, g, dec + c->stride[t]);
        c->rem[t]++;
        L->cur.n = n;
    }
}

static void expand(Ctx *c, Level *L) {
    int t0 = 0;
    while (c->rem[t0] == 0) t0++;
    /* deadwood */
    L->cur.kind = 0; L->cur.card = t0; L->cur.n = 0;
    c->rem[t0]--;
    consider(c, L, c->val[t0], L->state - c->stride[t0], L->w, L->room);
    c->rem[t0]++;
    if (L->found) return;
    /* sets */
    set_first(c, L, t0);
    if (L->found) return;
    /* runs */
    int s = c->suit[t0], q = c->rank[t0];
    L->cur.types[0] = t0; L->cur.pos[0] = q; L->cur.n = 1;
    c->rem[t0]--;
    run_up(c, L, s, q, q, 0, c->stride[t0]);
    if (!L->found && c->aces_high && q == 1) {
        L->cur.types[0] = t0; L->cur.pos[0] = 14; L->cur.n = 1;
        run_down(c, L, s, 14, 0, c->stride[t0]);
    }
    c->rem[t0]++;
}

static int solve_state(Ctx *c, uint64_t state, int w, int room) {
    if (state == 0) return leaf_cost(c, w, room);
    uint64_t key = ((state * c->dim + (uint64_t)w) * c->dim + (uint64_t)room) + 1;
    size_t j = memo_slot(key);
    if (memo_stamp[j] == memo_gen) return memo_vals[j];
    Level L;
    L.state = state; L.w = w; L.room = room;
    L.recon = 0; L.target = 0; L.found = 0; L.best = 1 << 30;
    expand(c, &L);
    if (memo_count * 2 >= memo_cap) {
        if (memo_alloc(memo_cap * 2) < 0) return L.best; /* out of memory: stay correct, stop caching */
    }
    j = memo_slot(key);
    memo_keys[j] = key; memo_vals[j] = L.best; memo_stamp[j] = memo_gen; memo_count++;
    return L.best;
}

/* ---------------------------------------------------------------- Python glue */
static int card_value(int rank, int aces_high) {
    if (rank == 1) return aces_high ? 15 : 1;
    return rank < 10 ? rank : 10;
}

/* Parses the hand into the context; returns the number of cards or -1 with an exception set. */
static int setup(Ctx *c, PyObject *hand, int wild_rank, int aces_high, int needs_natural,
                 int *wild_cards) {
    PyObject *seq = PySequence_Fast(hand, "hand must be a sequence of card ints");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_CARDS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "hand has %zd cards: the solver takes at most %d", n, MAX_CARDS);
        return -1;
    }
    int counts[52];
    memset(counts, 0, sizeof(counts));
    int W = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(items[i]);
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(seq); return -1; }
        if (v < 0 || v > 51) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "%ld is not a card int: allowed 0..51", v);
            return -1;
        }
        if ((int)(v % 13) + 1 == wild_rank) wild_cards[W++] = (int)v;
        else counts[v]++;
    }
    Py_DECREF(seq);
    memset(c->type_at, -1, sizeof(c->type_at));
    int T = 0;
    uint64_t stride = 1;
    for (int card = 0; card < 52; card++) {
        if (!counts[card]) continue;
        c->card[T] = card; c->cnt[T] = counts[card]; c->rem[T] = counts[card];
        c->suit[T] = card / 13; c->rank[T] = card % 13 + 1;
        c->val[T] = card_value(c->rank[T], aces_high);
        c->stride[T] = stride;
        stride *= (uint64_t)(counts[card] + 1);
        c->type_at[c->suit[T]][c->rank[T]] = T;
        T++;
    }
    for (int t = 0; t < T; t++) {
        c->n_same[t] = 0;
        for (int u = t + 1; u < T; u++)
            if (c->rank[u] == c->rank[t]) c->same_rank[t][c->n_same[t]++] = u;
    }
    c->T = T; c->W = W; c->dim = (uint64_t)W + 1;
    c->vw = wild_rank >= 1 && wild_rank <= 13 ? card_value(wild_rank, 0) : 0;
    c->aces_high = aces_high; c->needs_natural = needs_natural;
    return (int)n;
}

static uint64_t full_state(const Ctx *c) {
    uint64_t s = 0;
    for (int t = 0; t < c->T; t++) s += (uint64_t)c->cnt[t] * c->stride[t];
    return s;
}

static int parse_args(PyObject *args, PyObject *kwargs, PyObject **hand, int *wild, int *ah, int *nn) {
    static char *kwlist[] = {"hand", "wild_rank", "aces_high", "meld_needs_natural", NULL};
    *ah = 0; *nn = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oi|pp", kwlist, hand, wild, ah, nn)) return -1;
    if (*wild < 0 || *wild > 13) {
        PyErr_Format(PyExc_ValueError, "wild_rank=%d is not allowed: use 1..13 (or 0 for no wilds)", *wild);
        return -1;
    }
    return 0;
}

static PyObject *py_least_penalty(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *hand; int wild, ah, nn;
    if (parse_args(args, kwargs, &hand, &wild, &ah, &nn) < 0) return NULL;
    Ctx c; int wilds[MAX_CARDS];
    if (setup(&c, hand, wild, ah, nn, wilds) < 0) return NULL;
    memo_new_call();
    return PyLong_FromLong(solve_state(&c, full_state(&c), c.W, 0));
}

static PyObject *build_list(const int *cards, int n) {
    PyObject *lst = PyList_New(n);
    if (!lst) return NULL;
    for (int i = 0; i < n; i++) PyList_SET_ITEM(lst, i, PyLong_FromLong(cards[i]));
    return lst;
}

/* Returns (deadwood, melds as lists of card ints, unmelded card ints). */
static PyObject *py_solve(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *hand; int wild, ah, nn;
    if (parse_args(args, kwargs, &hand, &wild, &ah, &nn) < 0) return NULL;
    Ctx c; int wilds[MAX_CARDS];
    if (setup(&c, hand, wild, ah, nn, wilds) < 0) return NULL;
    memo_new_call();
    uint64_t state = full_state(&c);
    int w = c.W, room = 0;
    int total = solve_state(&c, state, w, room);

    int melds[MAX_CARDS][MAX_CARDS + 2], mlen[MAX_CARDS], mkind[MAX_CARDS], mtop[MAX_CARDS], nmelds = 0;
    int dead[MAX_CARDS], ndead = 0, nextwild = 0;
    int target = total;
    while (state != 0) {
        Level L;
        L.state = state; L.w = w; L.room = room;
        L.recon = 1; L.target = target; L.found = 0; L.best = 0;
        expand(&c, &L);
        if (!L.found) { PyErr_SetString(PyExc_RuntimeError, "meld reconstruction failed"); return NULL; }
        Choice *ch = &L.chosen;
        if (ch->kind == 0) {
            dead[ndead++] = c.card[ch->card];
            target -= c.val[ch->card];
        } else if (ch->kind == 1) {
            int *m = melds[nmelds]; int k = 0;
            for (int i = 0; i < ch->n; i++) m[k++] = c.card[ch->types[i]];
            for (int i = 0; i < ch->need; i++) m[k++] = wilds[nextwild++];
            mlen[nmelds] = k; mkind[nmelds] = 1; nmelds++;
        } else {
            /* lay the run out slot by slot, lowest first; wilds fill the gaps, padding goes high */
            int lo = 99, hi = -1;
            for (int i = 0; i < ch->n; i++) {
                if (ch->pos[i] < lo) lo = ch->pos[i];
                if (ch->pos[i] > hi) hi = ch->pos[i];
            }
            int slot[16];
            for (int p = lo; p <= hi; p++) slot[p - lo] = -1;
            for (int i = 0; i < ch->n; i++) slot[ch->pos[i] - lo] = c.card[ch->types[i]];
            int *m = melds[nmelds]; int k = 0, used = 0;
            int pad;
            for (int p = lo; p <= hi; p++) {
                if (slot[p - lo] >= 0) m[k++] = slot[p - lo];
                else { m[k++] = wilds[nextwild++]; used++; }
            }
            pad = ch->need - used;
            int maxpos = c.aces_high ? 14 : 13;
            while (pad > 0 && hi < maxpos) { m[k++] = wilds[nextwild++]; hi++; pad--; }
            if (pad > 0) { /* pad below instead */
                memmove(m + pad, m, k * sizeof(int));
                for (int i = 0; i < pad; i++) m[i] = wilds[nextwild++];
                k += pad;
            }
            mlen[nmelds] = k; mkind[nmelds] = 2; mtop[nmelds] = hi; nmelds++;
        }
        state = L.child_state; w = L.child_w; room = L.child_room;
        for (int t = 0; t < c.T; t++) c.rem[t] = (int)((state / c.stride[t]) % (uint64_t)(c.cnt[t] + 1));
    }
    /* leftover wilds: into a set; else into runs with room if they all fit; else an all-wild
       set of three or more; else as many as fit into runs, the rest deadwood */
    int left = c.W - nextwild, has_set = 0, run_room = 0;
    for (int i = 0; i < nmelds; i++) {
        if (mkind[i] == 1) has_set = 1;
        else run_room += 13 - mlen[i];
    }
    if (left > 0 && has_set) {
        for (int i = 0; i < nmelds; i++) {
            if (mkind[i] != 1) continue;
            while (left > 0) { melds[i][mlen[i]++] = wilds[nextwild++]; left--; }
            break;
        }
    }
    if (left > 0 && run_room < left && left >= 3 && !c.needs_natural) {
        int *m = melds[nmelds]; int k = 0;
        while (left > 0) { m[k++] = wilds[nextwild++]; left--; }
        mlen[nmelds] = k; mkind[nmelds] = 1; nmelds++;
    }
    for (int i = 0; i < nmelds && left > 0; i++) {
        int maxpos = c.aces_high ? 14 : 13;
        while (mkind[i] == 2 && mlen[i] < 13 && left > 0) {
            if (mtop[i] < maxpos) { melds[i][mlen[i]++] = wilds[nextwild++]; mtop[i]++; }
            else {  /* the run ends at the top slot: the wild goes below its low end */
                memmove(melds[i] + 1, melds[i], mlen[i] * sizeof(int));
                melds[i][0] = wilds[nextwild++]; mlen[i]++;
            }
            left--;
        }
    }
    while (left > 0) { dead[ndead++] = wilds[nextwild++]; left--; }

    PyObject *mlist = PyList_New(nmelds);
    if (!mlist) return NULL;
    for (int i = 0; i < nmelds; i++) {
        PyObject *m = build_list(melds[i], mlen[i]);
        if (!m) { Py_DECREF(mlist); return NULL; }
        PyList_SET_ITEM(mlist, i, m);
    }
    PyObject *dl = build_list(dead, ndead);
    if (!dl) { Py_DECREF(mlist); return NULL; }
    return Py_BuildValue("(iNN)", total, mlist, dl);
}

static PyMethodDef methods[] = {
    {"least_penalty", (PyCFunction)(void (*)(void))py_least_penalty, METH_VARARGS | METH_KEYWORDS,
     "least_penalty(hand, wild_rank, aces_high=False, meld_needs_natural=False) -> int"},
    {"solve", (PyCFunction)(void (*)(void))py_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(hand, wild_rank, aces_high=False, meld_needs_natural=False) -> (deadwood, melds, unmelded)"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_meldsolver", "Exact Three Thirteen meld solver (C accelerator).", -1, methods
};

PyMODINIT_FUNC PyInit__meldsolver(void) {
    if (memo_alloc(1 << 12) < 0) return PyErr_NoMemory();
    memo_gen = 1;
    return PyModule_Create(&moduledef);
}
