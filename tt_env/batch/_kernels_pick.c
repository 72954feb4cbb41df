/*
 * random-v0's choice on a CPU (tt_env/batch/agents.py: nth_legal, for BatchRandom):
 *
 *   nth_legal(mask, u, actions) -> None
 *
 * For each row of `mask` (bool (B, 54)), with L legal actions, the k-th legal action (from 0)
 * where k = int(u * L) in float32, at most L - 1, as the tensor code computes it (a cumulative
 * count and a binary search, which cost a CPU more than the whole row loop); 0 where L is 0.
 * `mask` holds 0 or 1 per entry (torch and numpy bools), `u` is float32 (B,), `actions` int64
 * (B,), written.
 */
#include "_kernels.h"

#define PICK_BUFFERS 3
#define WORDS ((ACTIONS + 7) / 8)

PyObject *nth_legal(PyObject *self, PyObject *args) {
    static const BufferSpec specs[PICK_BUFFERS] = {{"mask", '?', 0}, {"u", 'f', 0}, {"actions", 'q', 1}};
    PyObject *objs[PICK_BUFFERS];
    if (!PyArg_ParseTuple(args, "OOO:nth_legal", &objs[0], &objs[1], &objs[2])) return NULL;
    Py_buffer views[PICK_BUFFERS];
    memset(views, 0, sizeof views);
    PyObject *result = NULL;
    if (take_buffers(objs, specs, PICK_BUFFERS, views, -1) < 0) goto done;
    Py_ssize_t b = views[1].len / 4;                       /* one u per row */
    Py_ssize_t expected[PICK_BUFFERS] = {b * ACTIONS, b, b};
    if (check_lengths(views, specs, expected, PICK_BUFFERS, b, 0) < 0) goto done;
    const unsigned char *mask = views[0].buf;
    const float *u = views[1].buf;
    int64_t *actions = views[2].buf;
    for (Py_ssize_t i = 0; i < b; i++) {
        const unsigned char *m = mask + i * ACTIONS;
        /* the row as 7 words of 8 bools (0 or 1 each): a word's count is the sum of its bytes */
        uint64_t words[WORDS] = {0};
        memcpy(words, m, ACTIONS);
        int counts[WORDS], legal = 0;
        for (int j = 0; j < WORDS; j++) legal += counts[j] = (int)((words[j] * 0x0101010101010101ULL) >> 56);
        int k = (int)(u[i] * (float)legal);
        if (k > legal - 1) k = legal - 1;
        int64_t action = 0;
        if (k >= 0) {
            int j = 0;
            for (; k >= counts[j]; j++) k -= counts[j];  /* the word holding it, then the byte */
            int c = 8 * j;
            for (; !m[c] || k-- > 0; c++) {}
            action = c;
        }
        actions[i] = action;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release_buffers(views, PICK_BUFFERS);
    return result;
}
