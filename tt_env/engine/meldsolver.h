/*
 * Shared declarations of the C meld solver (the extension tt_env.engine._meldsolver).
 *
 * _meldsolver.c   Python glue: argument parsing and input checks, the entry points; the
 *                 draw entry points' glue in _meldsolver_draws.c (shared parts: meldsolver_py.h).
 * meld_fast.c     the fast exact path for least penalties (per-suit tables plus sets).
 * meld_search.c   the general exact search (any hand), and the arrangement of best_melds.
 * meld_draws.c    the value of each possible draw (after_draw_values, draw_gains).
 *
 * Vocabulary as in melds_py.py: a natural is a card not of the wild rank; a card int is
 * suit * 13 + rank - 1.
 */
#ifndef TT_MELDSOLVER_H
#define TT_MELDSOLVER_H

#include <stdint.h>

#define MAX_CARDS 40
#define MAX_TYPES 52   /* a universe of after_draw_values may hold every natural */

/* A checked hand: natural-card counts by card int, and the wild cards in hand order. The
   fast path's view is kept alongside (hand_add/hand_remove keep both in step): per suit the
   ranks held once or more (once) and twice or more (twice), as 13-bit masks (bit r-1 for
   rank r), how many natural cards are held three times or more, and the naturals' value. */
typedef struct {
    int counts[52];
    int wild_cards[MAX_CARDS];
    int num_wilds;
    int wild_rank, aces_high, needs_natural;
    unsigned once[4], twice[4];
    int num_triples, natural_value;
} Hand;

/* A best arrangement: melds (card ints, runs in slot order) and unmelded cards. */
typedef struct {
    int total;
    int nmelds, ndead;
    int mlen[MAX_CARDS];
    int melds[MAX_CARDS][MAX_CARDS + 2];
    int dead[MAX_CARDS];
} Arrangement;

/* One choice at a search node: the first remaining natural is deadwood, or in a set, or in a run. */
typedef struct {
    int kind;          /* 0 deadwood, 1 set, 2 run */
    int n;             /* naturals in the meld */
    int types[MAX_CARDS];  /* type index of each natural (runs: in slot order; a set may hold them all) */
    int pos[16];           /* runs: slot position of each natural (1..14) */
    int need;          /* wilds the meld needs */
    int card;          /* deadwood: the type */
} Choice;

/* The general search's view of a hand: card types (distinct naturals) and a mixed-radix state. */
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

/* The memo key of a search, ((state * dim + w) * dim + room) + 1 with dim = wilds + 1 and the
   state a mixed-radix number (radix: a type's count + 1), is below 2^TT_KEY_BITS when the
   bits of every radix (tt_radix_bits) and twice those of dim add up to at most TT_KEY_BITS. */
#define TT_KEY_BITS 63

static inline int tt_radix_bits(int radix) {   /* ceil(log2(radix)) */
    int bits = 0;
    while ((1 << bits) < radix) bits++;
    return bits;
}

static inline int tt_card_value(int rank, int aces_high) {
    if (rank == 1) return aces_high ? 15 : 1;
    return rank < 10 ? rank : 10;
}

void tt_hand_clear(Hand *h, int wild_rank, int aces_high, int needs_natural);
void tt_hand_add(Hand *h, int card);
void tt_hand_remove(Hand *h, int card);   /* one copy of a card the hand holds */

/* fast path (meld_fast.c): the least penalty, or -1 where the hand is outside its scope */
int tt_fast_penalty(const Hand *h);

/* general search (meld_search.c) */
int tt_memo_init(void);
void tt_search_init(Ctx *c, const Hand *h);           /* also starts a fresh memo */
int tt_search_penalty(Ctx *c, int removed_card);       /* removed_card -1: the whole hand */
int tt_search_arrange(Ctx *c, const Hand *h, Arrangement *out);  /* 0, or -1: internal error */

/* One search, one memo, for many hands (after_draw_values): a universe holds counts[card]
   copies of each natural and max_wilds wilds (the most that any of its hands holds); its
   sub-hands share the memo. tt_search_outcome: the least penalty of the hand h of the
   universe, and in *top the highest unmelded value (a wild: its rank's value, ace 1) of the
   arrangement tt_search_arrange would lay out for h alone (0: every card melded). `rules`
   gives the wild rank and options. */
void tt_search_init_universe(Ctx *c, const int *counts, int max_wilds, const Hand *rules);
int tt_search_outcome(Ctx *c, const Hand *h, int *top);

/* draws (meld_draws.c): out[i] = the value of drawing drawn[i] into hands[which[i]] (each of
   at most 39 cards, all under the same rules). tt_draw_gains: per hand, its least penalty and
   the expected gain of one draw over the cards of draws[h] (draw_gains); -1: out of memory. */
void tt_draw_values(const Hand *const *hands, const int *which, const int *drawn, int n, int *out);
int tt_draw_gains(const Hand *const *hands, int num_hands, const double *weights, const uint64_t *draws,
                  double out_bonus, int *penalties, double *gains);

#endif
