/*
 * The value of each possible draw, for expert-v0's one-draw lookahead (after_draw_values and
 * draw_gains in _meldsolver.c; the pure-Python twin computes the same in melds_py.py).
 *
 * The value of drawing u into a hand: solve hand + u; if its arrangement (the one solve()
 * lays out) leaves cards unmelded, its least penalty less the highest unmelded value (a wild
 * costs its own rank's value, min(rank, 10), ace 1); if every card melds, the exact least
 * penalty after the best discard. tt_search_outcome gives the first without laying the
 * arrangement out (meld_search.c explains why it is the same card).
 *
 * The hands hand + u of one call (of every hand of the call: draw_gains takes several, such
 * as the hands each candidate discard leaves) share one search memo: they are sub-hands of a
 * universe, each card as many times as any of those hands holds it, whose states are all
 * keys of one search. The draws are taken in order into groups, each as large as its
 * universe's key fits in TT_KEY_BITS; a single draw always fits (hand + u has at most 40
 * cards). In the game's hands (up to 14 cards plus the draw, one or two decks) one group
 * mostly takes every draw of a call.
 */
#include <stdlib.h>
#include <string.h>

#include "meldsolver.h"

/* The value of drawing into `full` (the hand with the drawn card added), a hand of universe `c`. */
static int draw_value(Ctx *c, Hand *full) {
    int top;
    int penalty = tt_search_outcome(c, full, &top);
    if (top > 0) return penalty - top;
    /* every card melds: the least penalty after the best discard, as in discard_penalties */
    int held[52] = {0}, best = -1;
    for (int card = 0; card < 52; card++) held[card] = full->counts[card] > 0;
    for (int i = 0; i < full->num_wilds; i++) held[full->wild_cards[i]] = 1;
    for (int card = 0; card < 52; card++) {
        if (!held[card]) continue;
        tt_hand_remove(full, card);   /* the order of wild cards does not matter to a penalty */
        int v = tt_fast_penalty(full);
        if (v < 0) v = tt_search_outcome(c, full, &top);   /* full less a card: in the universe */
        tt_hand_add(full, card);
        if (best < 0 || v < best) best = v;
    }
    return best;
}

/* A universe being built for a group of draws: naturals' counts, wilds, and the key bits
   the counts take (TT_KEY_BITS bounds them plus those of the wilds). */
typedef struct {
    int counts[52], max_wilds, bits;
    int merged;   /* the hand whose counts were merged in last (-1: none) */
} Universe;

static int universe_fits(const Universe *u) {
    return u->bits + 2 * tt_radix_bits(u->max_wilds + 1) <= TT_KEY_BITS;
}

/* Grows `u` to hold hand `h` (index `which`) plus the card `drawn`. */
static void universe_take(Universe *u, const Hand *h, int which, int drawn) {
    if (u->merged != which) {
        u->bits = 0;
        for (int card = 0; card < 52; card++) {
            if (h->counts[card] > u->counts[card]) u->counts[card] = h->counts[card];
            u->bits += tt_radix_bits(u->counts[card] + 1);
        }
        if (h->num_wilds > u->max_wilds) u->max_wilds = h->num_wilds;
        u->merged = which;
    }
    if (drawn % 13 + 1 == h->wild_rank) {
        if (u->max_wilds < h->num_wilds + 1) u->max_wilds = h->num_wilds + 1;
    } else if (u->counts[drawn] < h->counts[drawn] + 1) {
        u->bits += tt_radix_bits(h->counts[drawn] + 2) - tt_radix_bits(u->counts[drawn] + 1);
        u->counts[drawn] = h->counts[drawn] + 1;
    }
}

void tt_draw_values(const Hand *const *hands, const int *which, const int *drawn, int n, int *out) {
    Ctx c;
    int start = 0;
    while (start < n) {
        /* the group [start, end): grow its universe while the key fits (the first draw always does) */
        Universe u, before;
        memset(&u, 0, sizeof(u));
        u.merged = -1;
        int end = start;
        while (end < n) {
            before = u;
            universe_take(&u, hands[which[end]], which[end], drawn[end]);
            if (end > start && !universe_fits(&u)) { u = before; break; }
            end++;
        }
        tt_search_init_universe(&c, u.counts, u.max_wilds, hands[which[start]]);
        for (int i = start; i < end; i++) {
            Hand full = *hands[which[i]];
            tt_hand_add(&full, drawn[i]);
            out[i] = draw_value(&c, &full);
        }
        start = end;
    }
}

/* The float operations are those of the Python loop they replace, one at a time and in the
   same order: gain += w * (penalty - a + bonus), draw by draw in card order. The build turns
   off contraction into fused multiply-adds (-ffp-contract=off in setup.py), which would round
   differently. */
int tt_draw_gains(const Hand *const *hands, int num_hands, const double *weights, const uint64_t *draws,
                  double out_bonus, int *penalties, double *gains) {
    int *which = (int *)malloc(sizeof(int) * 3 * 52 * (size_t)(num_hands > 0 ? num_hands : 1));
    if (!which) return -1;
    int *drawn = which + 52 * num_hands, *values = drawn + 52 * num_hands, n = 0;
    for (int h = 0; h < num_hands; h++) {
        int penalty = tt_fast_penalty(hands[h]);
        if (penalty < 0) {
            Ctx c;
            tt_search_init(&c, hands[h]);
            penalty = tt_search_penalty(&c, -1);
        }
        penalties[h] = penalty;
        gains[h] = 0.0;
        if (penalty == 0) continue;
        for (int u = 0; u < 52; u++)   /* as the Python loop: skip w <= 0.0 (so a NaN weight counts) */
            if ((draws[h] >> u & 1u) && !(weights[u] <= 0.0)) { which[n] = h; drawn[n] = u; n++; }
    }
    if (n > 0) tt_draw_values(hands, which, drawn, n, values);
    for (int i = 0; i < n; i++) {
        int h = which[i], a = values[i];
        if (a < penalties[h]) {
            double improvement = (double)(penalties[h] - a) + (a == 0 ? out_bonus : 0.0);
            double term = weights[drawn[i]] * improvement;
            gains[h] += term;
        }
    }
    free(which);
    return 0;
}
