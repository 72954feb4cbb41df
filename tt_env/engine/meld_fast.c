/*
 * The fast exact path for least penalties: per-suit run tables, plus an enumeration of sets.
 *
 * Scope (else tt_fast_penalty returns -1 and the general search answers): at most two
 * copies of any natural card, at most TK - 1 wilds, at most MAX_SET_CHOICES ways to pick
 * the sets, and the room condition below. The game's hands (3..13 cards plus a draw, one
 * or two decks) are nearly all in scope. The hand is split into sets, runs and deadwood
 * exactly as the general search would; only the order of the work differs:
 *
 * - Room: where a suit's distinct naturals + W <= 13, any run of it can take every wild,
 *   and a set always can, so whenever the arrangement holds a meld, wilds left over join it
 *   for free. The least penalty is then D*, the least natural deadwood over arrangements
 *   whose melds need at most W wilds, unless no arrangement holds a meld (D* is then the
 *   value of every natural), where the wilds also cost their value unless they form an
 *   all-wild set. A suit past that bound is handled by a guard (see tt_fast_penalty).
 * - Sets: one set per rank at most (two sets of a rank merge into one that needs no more
 *   wilds). Only sets of two or more naturals are enumerated: one natural with two wilds is
 *   the same meld as a run of one natural with two wilds, which the run tables hold.
 * - Runs: what the sets leave of a suit is a 13-bit rank mask (bit r-1 for rank r). The
 *   table suit_table[aces_high][mask][k] is the least deadwood of those cards over every
 *   split into runs and deadwood whose runs need at most k wilds (a run of n naturals
 *   spanning s slots needs max(3, s) - n; with aces high an ace may sit below the 2 or
 *   above the king, whichever needs fewer). It is built on first use of each ace variant
 *   (8192 masks x 16 budgets, 128 KiB, 10-20 ms) by the same "lowest card is deadwood or in some run" recursion.
 * - A suit that still holds both copies of a card is split the same way by a small
 *   recursion (one copy of its lowest doubled card is deadwood or in a run), down to a
 *   mask without doubles, looked up in the table.
 * - The suits' vectors are combined by a (min, +) convolution over the wilds the sets left.
 */
#include <stdlib.h>
#include <string.h>

#include "meldsolver.h"

#define TK 16            /* wild budgets 0..TK-1 per suit mask */
#define NMASKS 8192
#define MAX_SET_CHOICES 4096   /* product over ranks of the ways to pick a set (an upper bound) */

static uint8_t *suit_table[2];

/* Set bits of a mask below 2^16 (__builtin_popcount is a library call without -mpopcnt). */
static inline int bits(unsigned x) {
    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0F0Fu;
    return (int)((x + (x >> 8)) & 0x1Fu);
}

void tt_hand_clear(Hand *h, int wild_rank, int aces_high, int needs_natural) {
    memset(h->counts, 0, sizeof(h->counts));
    memset(h->once, 0, sizeof(h->once));
    memset(h->twice, 0, sizeof(h->twice));
    h->num_wilds = 0; h->num_triples = 0; h->natural_value = 0;
    h->wild_rank = wild_rank; h->aces_high = aces_high; h->needs_natural = needs_natural;
}

void tt_hand_add(Hand *h, int card) {
    int rank = card % 13 + 1, s = card / 13;
    if (rank == h->wild_rank) { h->wild_cards[h->num_wilds++] = card; return; }
    int n = ++h->counts[card];
    if (n == 1) h->once[s] |= 1u << (rank - 1);
    else if (n == 2) h->twice[s] |= 1u << (rank - 1);
    else if (n == 3) h->num_triples++;
    h->natural_value += tt_card_value(rank, h->aces_high);
}

void tt_hand_remove(Hand *h, int card) {
    int rank = card % 13 + 1, s = card / 13;
    if (rank == h->wild_rank) {
        int j = 0;
        while (h->wild_cards[j] != card) j++;
        memmove(h->wild_cards + j, h->wild_cards + j + 1, sizeof(int) * (size_t)(h->num_wilds - j - 1));
        h->num_wilds--;
        return;
    }
    int n = h->counts[card]--;
    if (n == 1) h->once[s] &= ~(1u << (rank - 1));
    else if (n == 2) h->twice[s] &= ~(1u << (rank - 1));
    else if (n == 3) h->num_triples--;
    h->natural_value -= tt_card_value(rank, h->aces_high);
}

/* Wilds a run of the ranks in R (a rank mask, one suit) needs: max(3, span) - naturals. */
static inline int run_wilds(unsigned R, int aces_high) {
    int n = bits(R);
    int span = 32 - __builtin_clz(R) - __builtin_ctz(R);
    if (aces_high && (R & 1u)) {  /* the ace may instead sit in slot 14, above the king */
        unsigned others = R & ~1u;
        int span_high = others ? 14 - __builtin_ctz(others) : 1;
        if (span_high < span) span = span_high;
    }
    return (span < 3 ? 3 : span) - n;
}

static int build_suit_table(int aces_high) {
    uint8_t *T = (uint8_t *)malloc((size_t)NMASKS * TK);
    if (!T) return -1;
    memset(T, 0, TK);
    for (unsigned mask = 1; mask < NMASKS; mask++) {
        unsigned low = mask & -mask, rest = mask ^ low;
        int value = tt_card_value(__builtin_ctz(mask) + 1, aces_high);
        uint8_t *out = T + (size_t)mask * TK;
        const uint8_t *dead = T + (size_t)rest * TK;
        for (int k = 0; k < TK; k++) out[k] = (uint8_t)(dead[k] + value);
        /* every run holding the lowest card: it plus any subset of the others */
        for (unsigned sub = rest;; sub = (sub - 1) & rest) {
            unsigned R = sub | low;
            int need = run_wilds(R, aces_high);
            if (need < TK) {
                const uint8_t *after = T + (size_t)(mask ^ R) * TK;
                for (int k = need; k < TK; k++)
                    if (after[k - need] < out[k]) out[k] = after[k - need];
            }
            if (!sub) break;
        }
    }
    suit_table[aces_high] = T;
    return 0;
}

/* The unmelded value of the ranks in `mask`. */
static int mask_value(unsigned mask, int aces_high) {
    int v = 0;
    for (; mask; mask &= mask - 1) v += tt_card_value(__builtin_ctz(mask) + 1, aces_high);
    return v;
}

typedef struct {
    const uint8_t *T;
    int aces_high;
    unsigned m1[4], m2[4];   /* per suit: ranks held once or more, ranks held twice */
    int value[13];           /* unmelded value by rank bit */
    int set_ranks[13], num_set_ranks;
    int best, wilds;
    int num_cached;          /* vectors of suits holding a doubled card, for the whole budget */
    unsigned cached_m1[16], cached_m2[16];
    uint8_t cached[16][TK];
} Fast;

/* The naturals of `mask` that a run through `bit` could reach with at most `budget` wilds. */
static unsigned reach(unsigned mask, unsigned bit, int budget, int aces_high) {
    unsigned slots = mask, comp = bit;
    if (aces_high && (mask & 1u)) slots |= 1u << 13;   /* the ace also in slot 14 */
    if (aces_high && bit == 1u) comp |= 1u << 13;
    for (;;) {
        unsigned grow = comp;
        for (int d = 1; d <= budget + 1; d++) grow |= comp << d | comp >> d;
        grow &= slots;
        if (grow & (1u << 13)) grow |= 1u;
        if (grow & 1u && aces_high && (mask & 1u)) grow |= 1u << 13;
        if (grow == comp) break;
        comp = grow;
    }
    return comp & (NMASKS - 1);
}

/* out[k], k = 0..budget: the least deadwood of a suit (m1, m2) whose runs need at most k wilds. */
static void suit_vector(const Fast *F, unsigned m1, unsigned m2, int budget, uint8_t *out) {
    if (!m2) {
        const uint8_t *row = F->T + (size_t)m1 * TK;
        for (int k = 0; k <= budget; k++) out[k] = row[k];
        return;
    }
    unsigned low = m2 & -m2;
    uint8_t sub[TK];
    /* one copy of the lowest doubled card is deadwood ... */
    suit_vector(F, m1, m2 ^ low, budget, sub);
    int value = F->value[__builtin_ctz(low)];
    for (int k = 0; k <= budget; k++) out[k] = (uint8_t)(sub[k] + value);
    /* ... or in a run, with any subset of the cards it can reach */
    unsigned others = reach(m1, low, budget, F->aces_high) & ~low;
    for (unsigned s = others;; s = (s - 1) & others) {
        unsigned R = s | low;
        int need = run_wilds(R, F->aces_high);
        if (need <= budget) {
            suit_vector(F, m1 ^ (R & ~m2), m2 & ~R, budget - need, sub);
            for (int k = need; k <= budget; k++)
                if (sub[k - need] < out[k]) out[k] = sub[k - need];
        }
        if (!s) break;
    }
}

/* The vector of a suit holding a doubled card (entry k for every k up to the hand's wilds:
   the entries do not depend on the budget asked), computed once per hand. */
static const uint8_t *doubled_suit(Fast *F, unsigned m1, unsigned m2, uint8_t *spare) {
    for (int i = 0; i < F->num_cached; i++)
        if (F->cached_m1[i] == m1 && F->cached_m2[i] == m2) return F->cached[i];
    if (F->num_cached == 16) { suit_vector(F, m1, m2, F->wilds, spare); return spare; }
    int i = F->num_cached++;
    F->cached_m1[i] = m1; F->cached_m2[i] = m2;
    suit_vector(F, m1, m2, F->wilds, F->cached[i]);
    return F->cached[i];
}

/* Every suit's runs with `budget` wilds between them, given the sets chosen so far. */
static void leaf(Fast *F, int budget) {
    uint8_t bufs[4][TK];
    const uint8_t *vec[4];
    int n = 0;
    for (int s = 0; s < 4; s++) {
        if (!F->m1[s]) continue;
        if (!F->m2[s]) vec[n] = F->T + (size_t)F->m1[s] * TK;
        else vec[n] = doubled_suit(F, F->m1[s], F->m2[s], bufs[n]);
        n++;
    }
    /* (min, +) convolution of the suits' vectors; entry `budget` is the best split */
    int best = 0;
    if (budget == 0 || n <= 1) {
        for (int i = 0; i < n; i++) best += vec[i][budget == 0 ? 0 : budget];
    } else {
        int bufa[TK], bufb[TK], *acc = bufa, *next = bufb;
        for (int k = 0; k <= budget; k++) acc[k] = vec[0][k];
        for (int i = 1; i < n; i++) {
            const uint8_t *v = vec[i];
            for (int k = 0; k <= budget; k++) {
                int m = acc[k] + v[0];
                for (int j = 0; j < k; j++) {
                    int x = acc[j] + v[k - j];
                    if (x < m) m = x;
                }
                next[k] = m;
            }
            int *t = acc; acc = next; next = t;
        }
        best = acc[budget];
    }
    if (best < F->best) F->best = best;
}

/* Sets of rank set_ranks[i] and above: none, or two or more of the rank's naturals. */
static void sets_from(Fast *F, int i, int budget) {
    if (F->best == 0) return;
    if (i == F->num_set_ranks) { leaf(F, budget); return; }
    sets_from(F, i + 1, budget);
    int r = F->set_ranks[i];
    unsigned bit = 1u << r;
    int held[4];
    for (int s = 0; s < 4; s++) held[s] = (int)((F->m1[s] & bit) != 0) + (int)((F->m2[s] & bit) != 0);
    if (held[0] + held[1] + held[2] + held[3] + budget < 3) return;  /* no set fits */
    unsigned m1[4], m2[4];
    memcpy(m1, F->m1, sizeof(m1)); memcpy(m2, F->m2, sizeof(m2));
    int take[4];
    for (take[0] = 0; take[0] <= held[0]; take[0]++)
    for (take[1] = 0; take[1] <= held[1]; take[1]++)
    for (take[2] = 0; take[2] <= held[2]; take[2]++)
    for (take[3] = 0; take[3] <= held[3]; take[3]++) {
        int size = take[0] + take[1] + take[2] + take[3];
        int need = size >= 3 ? 0 : 3 - size;
        if (size < 2 || need > budget) continue;
        for (int s = 0; s < 4; s++) {
            int left = held[s] - take[s];
            F->m1[s] = left ? m1[s] : m1[s] & ~bit;
            F->m2[s] = left == 2 ? m2[s] : m2[s] & ~bit;
        }
        sets_from(F, i + 1, budget - need);
        if (F->best == 0) break;
    }
    memcpy(F->m1, m1, sizeof(m1)); memcpy(F->m2, m2, sizeof(m2));
}

int tt_fast_penalty(const Hand *h) {
    int W = h->num_wilds, ah = h->aces_high ? 1 : 0, all = h->natural_value;
    if (W >= TK || h->num_triples) return -1;
    Fast F;
    /* ranks held twice or more over the eight masks: candidates for a set */
    unsigned seen = 0, set_ranks = 0;
    int heavy = 0, light_value = 0;
    for (int s = 0; s < 4; s++) {
        if (bits(h->once[s]) + W > 13) heavy = 1;
        else light_value += mask_value(h->once[s], ah) + mask_value(h->twice[s], ah);
        F.m1[s] = h->once[s]; F.m2[s] = h->twice[s];
        set_ranks |= seen & h->once[s]; seen |= h->once[s];
        set_ranks |= h->twice[s];
    }
    if (!suit_table[ah] && build_suit_table(ah) < 0) return -1;
    F.T = suit_table[ah];
    F.aces_high = ah;
    for (int r = 0; r < 13; r++) F.value[r] = tt_card_value(r + 1, ah);
    /* the set choices multiply rank by rank: past MAX_SET_CHOICES the general search is faster */
    F.num_set_ranks = 0;
    long choices = 1;
    for (; set_ranks; set_ranks &= set_ranks - 1) {
        int r = __builtin_ctz(set_ranks), options = 1;
        for (int s = 0; s < 4; s++) options *= 1 + (int)((h->once[s] >> r) & 1u) + (int)((h->twice[s] >> r) & 1u);
        choices *= options;
        if (choices > MAX_SET_CHOICES) return -1;
        F.set_ranks[F.num_set_ranks++] = r;
    }
    F.best = all; F.wilds = W; F.num_cached = 0;
    sets_from(&F, 0, W);
    /* A heavy suit (distinct naturals + W > 13) may hold runs too long to take every wild.
       An arrangement short of room has only such runs, so its deadwood is at least the
       value of the other suits' naturals: a best below that has room. Otherwise the general
       search decides (a conservative guard: fuzzing found no hand where room changed the
       answer, since a long run can always be split, but that is not proven here). */
    if (F.best < all && (!heavy || F.best < light_value)) return F.best;
    if (F.best < all) return -1;
    /* no meld at all: the wilds are unmelded too, unless they make an all-wild set */
    if (W == 0 || (W >= 3 && !h->needs_natural)) return all;
    return all + W * tt_card_value(h->wild_rank, 0);
}
