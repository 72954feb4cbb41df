/*
 * The general exact meld search: any hand the solver takes (up to 40 cards, any number of
 * decks, any number of wilds), and the arrangement that best_melds returns.
 *
 * The same algorithm as melds_py.py (its docstring explains it): a memoised depth-first
 * search over the natural (non-wild) cards in card order. The first remaining card is
 * either deadwood, or in a set with other cards of its rank, or the lowest natural card of
 * a run in its suit (with the ace-high variant, also the top of a run ending in an ace).
 * Wild cards are a budget: a set of k naturals needs max(0, 3-k) wilds, a run needs one per
 * empty slot plus padding to three. Wilds left over at the end join any meld with room (a
 * set always has room, a run has 13 minus its length), or form an all-wild set of three or
 * more, else they are deadwood. The state is (remaining naturals as a mixed-radix index,
 * wilds left, run room saturated at the wild count), so the search is exact over every
 * arrangement. The memo is a generation-stamped open-addressing hash table: a new
 * generation forgets every entry at once. Sub-hands of one hand (the hand less one card,
 * for discard_penalties) are states of the same search, so they share its memo; so are the
 * hands of a universe (tt_search_init_universe: the draws of after_draw_values).
 *
 * Each state's memo entry also holds the highest unmelded value of the arrangement that
 * tt_search_arrange would lay out from it (see OUTCOME), which is what expert-v0 needs of
 * best_melds, without laying the arrangement out.
 */
#include <stdlib.h>
#include <string.h>

#include "meldsolver.h"

typedef struct {
    uint64_t state;
    int w, room;
    int first;         /* no type below it remains (children only lose cards) */
    int recon, target, found, best, best_top;
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
/* A state's outcome, packed in one int (the memo's value): its least penalty, and its "top",
   the highest unmelded value of the arrangement tt_search_arrange lays out from it (0: none
   unmelded). The arrangement follows, state by state, the first option in expand's order
   that reaches the least penalty, and the search records exactly that option (the first to
   improve the best), so the top follows the same path: the first card's value where that
   option is deadwood, then the top of its child; at the end, the wild rank's value when
   wilds are left over with no room and no all-wild set (the only way a wild is unmelded). */
#define OUTCOME(penalty, top) ((penalty) | (top) << 16)
#define PENALTY(outcome) ((outcome) & 0xFFFF)
#define TOP(outcome) ((outcome) >> 16)

static int solve_state(Ctx *c, uint64_t state, int w, int room, int first);

static int leaf_cost(const Ctx *c, int w, int room) {
    if (w == 0 || room >= w) return 0;
    if (!c->needs_natural && w >= 3) return 0;  /* an all-wild set */
    return (w - room) * c->vw;
}

static void consider(Ctx *c, Level *L, int local, uint64_t child, int cw, int croom) {
    if (L->found) return;
    int sub = solve_state(c, child, cw, croom, L->first);
    int v = local + PENALTY(sub);
    if (L->recon) {
        if (v == L->target) {
            L->found = 1; L->chosen = L->cur;
            L->child_state = child; L->child_w = cw; L->child_room = croom;
        }
    } else if (v < L->best) {   /* strictly: the first option reaching the least penalty */
        L->best = v;
        L->best_top = local > TOP(sub) ? local : TOP(sub);   /* local > 0: the first card is deadwood */
    }
}

static inline int add_room(const Ctx *c, int room, int add) {
    int r = room + add;
    return r > c->W ? c->W : r;
}

/* Sets holding the first card t0: choose how many of each same-rank type join. */
static void set_enum(Ctx *c, Level *L, int idx, int total, uint64_t dec) {
    int t0 = L->cur.types[0];
    while (idx < c->n_same[t0] && c->rem[c->same_rank[t0][idx]] == 0) idx++;  /* none left to join */
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
    int k, avail = c->rem[t0];
    for (k = 0; k < c->n_same[t0]; k++) avail += c->rem[c->same_rank[t0][k]];
    if (avail + L->w < 3) return;  /* no set fits: nothing to consider */
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
    int t0 = L->first;
    while (c->rem[t0] == 0) t0++;
    L->first = t0;
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

/* The outcome of a state. Room beyond the wilds left changes nothing (leaves compare room
   with wilds, and wilds only decrease while room only grows), so the key holds min(room, w). */
static int solve_state(Ctx *c, uint64_t state, int w, int room, int first) {
    if (state == 0) {
        int cost = leaf_cost(c, w, room);
        return OUTCOME(cost, cost > 0 ? c->vw : 0);
    }
    uint64_t key = ((state * c->dim + (uint64_t)w) * c->dim + (uint64_t)(room < w ? room : w)) + 1;
    size_t j = memo_slot(key);
    if (memo_stamp[j] == memo_gen) return memo_vals[j];
    Level L;
    L.state = state; L.w = w; L.room = room; L.first = first;
    L.recon = 0; L.target = 0; L.found = 0; L.best = 1 << 30; L.best_top = 0;
    expand(c, &L);
    int outcome = OUTCOME(L.best, L.best_top);
    if (memo_count * 2 >= memo_cap) {
        if (memo_alloc(memo_cap * 2) < 0) return outcome; /* out of memory: stay correct, stop caching */
    }
    j = memo_slot(key);
    memo_keys[j] = key; memo_vals[j] = outcome; memo_stamp[j] = memo_gen; memo_count++;
    return outcome;
}

int tt_memo_init(void) {
    if (memo_alloc(1 << 12) < 0) return -1;
    memo_gen = 1;
    return 0;
}

/* The search over a universe: card types are the naturals with counts[card] > 0, each with a
   radix of counts[card] + 1, and up to max_wilds wilds. */
static void init_universe(Ctx *c, const int *counts, int max_wilds, int wild_rank, int aces_high,
                          int needs_natural) {
    memset(c->type_at, -1, sizeof(c->type_at));
    int T = 0;
    uint64_t stride = 1;
    for (int card = 0; card < 52; card++) {
        if (!counts[card]) continue;
        c->card[T] = card; c->cnt[T] = counts[card]; c->rem[T] = counts[card];
        c->suit[T] = card / 13; c->rank[T] = card % 13 + 1;
        c->val[T] = tt_card_value(c->rank[T], aces_high);
        c->stride[T] = stride;
        stride *= (uint64_t)(counts[card] + 1);
        c->type_at[c->suit[T]][c->rank[T]] = T;
        T++;
    }
    /* same_rank[t]: the later types of t's rank (other suits), in type order */
    int by_rank[14][4], n_rank[14] = {0};
    for (int t = 0; t < T; t++) by_rank[c->rank[t]][n_rank[c->rank[t]]++] = t;
    for (int t = 0; t < T; t++) {
        int r = c->rank[t], i = 0;
        while (by_rank[r][i] != t) i++;
        c->n_same[t] = 0;
        for (i++; i < n_rank[r]; i++) c->same_rank[t][c->n_same[t]++] = by_rank[r][i];
    }
    c->T = T; c->W = max_wilds; c->dim = (uint64_t)max_wilds + 1;
    c->vw = wild_rank >= 1 && wild_rank <= 13 ? tt_card_value(wild_rank, 0) : 0;
    c->aces_high = aces_high; c->needs_natural = needs_natural;
    memo_new_call();
}

/* A hand of at most 40 cards always fits the key (TT_KEY_BITS: at most 40 bits of counts,
   as tt_radix_bits(k + 1) <= k, plus 2 x 6 bits of wilds). */
void tt_search_init(Ctx *c, const Hand *h) {
    init_universe(c, h->counts, h->num_wilds, h->wild_rank, h->aces_high, h->needs_natural);
}

void tt_search_init_universe(Ctx *c, const int *counts, int max_wilds, const Hand *rules) {
    init_universe(c, counts, max_wilds, rules->wild_rank, rules->aces_high, rules->needs_natural);
}

/* Sub-hands of a universe are states of its search; a type the hand lacks just has count 0
   (expand, the sets and the runs skip it), so every option, and its order, is the hand's own. */
int tt_search_outcome(Ctx *c, const Hand *h, int *top) {
    uint64_t state = 0;
    for (int t = 0; t < c->T; t++) {
        c->rem[t] = h->counts[c->card[t]];
        state += (uint64_t)c->rem[t] * c->stride[t];
    }
    int outcome = solve_state(c, state, h->num_wilds, 0, 0);
    for (int t = 0; t < c->T; t++) c->rem[t] = c->cnt[t];
    *top = TOP(outcome);
    return PENALTY(outcome);
}

static uint64_t full_state(const Ctx *c) {
    uint64_t s = 0;
    for (int t = 0; t < c->T; t++) s += (uint64_t)c->cnt[t] * c->stride[t];
    return s;
}

/* Room stays saturated at the whole hand's wild count: for a sub-hand with one wild less that
   changes no leaf (room >= wilds left either way), so its states can share the memo. */
int tt_search_penalty(Ctx *c, int removed_card) {
    uint64_t state = full_state(c);
    int w = c->W;
    for (int t = 0; t < c->T; t++) c->rem[t] = c->cnt[t];
    if (removed_card >= 0) {
        int t = c->type_at[removed_card / 13][removed_card % 13 + 1];
        if (t >= 0) { state -= c->stride[t]; c->rem[t]--; }
        else w--;  /* a wild */
    }
    int v = PENALTY(solve_state(c, state, w, 0, 0));
    for (int t = 0; t < c->T; t++) c->rem[t] = c->cnt[t];
    return v;
}

/* Walks one best path of the search, laying out each meld, then places the leftover wilds. */
int tt_search_arrange(Ctx *c, const Hand *h, Arrangement *out) {
    const int *wilds = h->wild_cards;
    uint64_t state = full_state(c);
    int w = c->W, room = 0;
    int total = PENALTY(solve_state(c, state, w, room, 0));

    int mkind[MAX_CARDS], mtop[MAX_CARDS], nmelds = 0;
    int (*melds)[MAX_CARDS + 2] = out->melds;
    int *mlen = out->mlen, *dead = out->dead;
    int ndead = 0, nextwild = 0;
    int target = total;
    while (state != 0) {
        Level L;
        L.state = state; L.w = w; L.room = room; L.first = 0;
        L.recon = 1; L.target = target; L.found = 0; L.best = 0;
        expand(c, &L);
        if (!L.found) return -1;
        Choice *ch = &L.chosen;
        if (ch->kind == 0) {
            dead[ndead++] = c->card[ch->card];
            target -= c->val[ch->card];
        } else if (ch->kind == 1) {
            int *m = melds[nmelds]; int k = 0;
            for (int i = 0; i < ch->n; i++) m[k++] = c->card[ch->types[i]];
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
            for (int i = 0; i < ch->n; i++) slot[ch->pos[i] - lo] = c->card[ch->types[i]];
            int *m = melds[nmelds]; int k = 0, used = 0;
            int pad;
            for (int p = lo; p <= hi; p++) {
                if (slot[p - lo] >= 0) m[k++] = slot[p - lo];
                else { m[k++] = wilds[nextwild++]; used++; }
            }
            pad = ch->need - used;
            int maxpos = c->aces_high ? 14 : 13;
            while (pad > 0 && hi < maxpos) { m[k++] = wilds[nextwild++]; hi++; pad--; }
            if (pad > 0) { /* pad below instead */
                memmove(m + pad, m, k * sizeof(int));
                for (int i = 0; i < pad; i++) m[i] = wilds[nextwild++];
                k += pad;
            }
            mlen[nmelds] = k; mkind[nmelds] = 2; mtop[nmelds] = hi; nmelds++;
        }
        state = L.child_state; w = L.child_w; room = L.child_room;
        /* the child's remaining counts: the chosen cards leave (expand restored rem) */
        if (ch->kind == 0) c->rem[ch->card]--;
        else for (int i = 0; i < ch->n; i++) c->rem[ch->types[i]]--;
    }
    /* leftover wilds: into a set; else into runs with room if they all fit; else an all-wild
       set of three or more; else as many as fit into runs, the rest deadwood */
    int left = c->W - nextwild, has_set = 0, run_room = 0;
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
    if (left > 0 && run_room < left && left >= 3 && !c->needs_natural) {
        int *m = melds[nmelds]; int k = 0;
        while (left > 0) { m[k++] = wilds[nextwild++]; left--; }
        mlen[nmelds] = k; mkind[nmelds] = 1; nmelds++;
    }
    for (int i = 0; i < nmelds && left > 0; i++) {
        int maxpos = c->aces_high ? 14 : 13;
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
    for (int t = 0; t < c->T; t++) c->rem[t] = c->cnt[t];
    out->total = total; out->nmelds = nmelds; out->ndead = ndead;
    return 0;
}
