/*
 * The value of each possible draw, for expert-v0's one-draw lookahead (after_draw_values and
 * draw_gain in _meldsolver.c; the pure-Python twin computes the same in melds_py.py).
 *
 * The value of drawing u into a hand: solve hand + u; if its arrangement (the one solve()
 * lays out) leaves cards unmelded, its least penalty less the highest unmelded value (a wild
 * costs its own rank's value, min(rank, 10), ace 1); if every card melds, the exact least
 * penalty after the best discard. tt_search_outcome gives the first without laying the
 * arrangement out (meld_search.c explains why it is the same card).
 *
 * The hands hand + u of one call share one search memo: they are sub-hands of a universe,
 * the hand plus one more copy of each drawn card, whose states are all keys of one search.
 * The draws are taken in order into groups, each as large as its universe's key fits in
 * TT_KEY_BITS; a single draw always fits (hand + u has at most 40 cards). In the game's
 * hands (up to 14 cards plus the draw, one or two decks) one group takes every draw.
 */
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

void tt_draw_values(const Hand *hand, const int *drawn, int n, int *out) {
    Ctx c;
    int hand_bits = 0;
    for (int card = 0; card < 52; card++) hand_bits += tt_radix_bits(hand->counts[card] + 1);
    int start = 0;
    while (start < n) {
        /* the group drawn[start:end]: grow its universe while the key fits (the first draw always does) */
        int counts[52], max_wilds = hand->num_wilds, bits = hand_bits;
        memcpy(counts, hand->counts, sizeof(counts));
        int end = start;
        while (end < n) {
            int card = drawn[end];
            if (card % 13 + 1 == hand->wild_rank) {
                if (max_wilds == hand->num_wilds) {
                    if (end > start && bits + 2 * tt_radix_bits(max_wilds + 2) > TT_KEY_BITS) break;
                    max_wilds++;
                }
            } else if (counts[card] == hand->counts[card]) {
                int more = tt_radix_bits(counts[card] + 2) - tt_radix_bits(counts[card] + 1);
                if (end > start && bits + more + 2 * tt_radix_bits(max_wilds + 1) > TT_KEY_BITS) break;
                counts[card]++;
                bits += more;
            }
            end++;
        }
        tt_search_init_universe(&c, counts, max_wilds, hand);
        for (int i = start; i < end; i++) {
            Hand full = *hand;
            tt_hand_add(&full, drawn[i]);
            out[i] = draw_value(&c, &full);
        }
        start = end;
    }
}

/* The float operations are those of the Python loop they replace, one at a time and in the
   same order: gain += w * (penalty - a + bonus). The build turns off contraction into fused
   multiply-adds (-ffp-contract=off in setup.py), which would round differently. */
double tt_draw_gain(const Hand *hand, const double *weights, uint64_t draws, double out_bonus,
                    int *penalty_out) {
    int penalty = tt_fast_penalty(hand);
    if (penalty < 0) {
        Ctx c;
        tt_search_init(&c, hand);
        penalty = tt_search_penalty(&c, -1);
    }
    *penalty_out = penalty;
    if (penalty == 0) return 0.0;
    int drawn[52], values[52], n = 0;
    for (int u = 0; u < 52; u++)   /* as the Python loop: skip w <= 0.0 (so a NaN weight counts) */
        if ((draws >> u & 1u) && !(weights[u] <= 0.0)) drawn[n++] = u;
    tt_draw_values(hand, drawn, n, values);
    double gain = 0.0;
    for (int i = 0; i < n; i++) {
        int a = values[i];
        if (a < penalty) {
            double improvement = (double)(penalty - a) + (a == 0 ? out_bonus : 0.0);
            double term = weights[drawn[i]] * improvement;
            gain += term;
        }
    }
    return gain;
}
