/* Channel blocks of the NC1HWC0 layout, moved in compiled loops (dump.channel_blocks).
 *
 * A logical (N, C, HW) array and its device layout (N, C1, HW, C0), C1 = ceil(C / C0), differ by
 * one transpose per (n, c1) block: the block's C0 channels of HW values each become HW rows of
 * C0 values. to_blocks writes the C channels into the device array and leaves the padding
 * channels of the last block as they are (the caller zeroes them); from_blocks reads the first
 * C channels back. Values are moved as bytes of their size (1, 2, 4 or 8): nothing is
 * converted, so every bit pattern (NaN payloads included) arrives as it left.
 *
 * numpy's strided copy of the same transpose takes ~0.6 ns a float16 value here (its inner loop
 * runs over the 16 channels of one position); these loops take whole 8x8 (2-byte) or 4x4
 * (4-byte) tiles through SSE2 registers, where the target has them, and every other size or
 * edge one value at a time. Both directions are one routine, transpose(): to_blocks has rows =
 * channels (stride HW) and columns = positions, from_blocks the reverse. The GIL is released
 * meanwhile.
 *
 * C1 is given, not derived: a device array may hold more blocks than ceil(C / C0) (a dump whose
 * original shape keeps fewer channels than its padded blocks hold). Buffers may start at any
 * address (tensors mapped from a dump file start where its header ends): every access goes
 * through memcpy or an unaligned SSE2 load/store on byte offsets, never a misaligned typed
 * pointer. The two buffers must not overlap.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* d[j * d_row + i] = s[i * s_row + j] for i in [i0, i1), j in [j0, j1), one value of SIZE
 * bytes at a time (strides in values; memcpy of a constant size compiles to one move). The
 * short side (a block's C0 channels) is the inner loop: each pass then reads or writes C0
 * nearby streams, never the whole block once per channel. */
#define SCALAR(SIZE)                                                                         \
    static void scalar_##SIZE(const char *s, Py_ssize_t s_row, char *d, Py_ssize_t d_row,    \
                              Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t j0, Py_ssize_t j1) {  \
        if (i1 - i0 <= j1 - j0) {                                                            \
            for (Py_ssize_t j = j0; j < j1; j++)                                             \
                for (Py_ssize_t i = i0; i < i1; i++)                                         \
                    memcpy(d + (j * d_row + i) * SIZE, s + (i * s_row + j) * SIZE, SIZE);    \
        } else {                                                                             \
            for (Py_ssize_t i = i0; i < i1; i++)                                             \
                for (Py_ssize_t j = j0; j < j1; j++)                                         \
                    memcpy(d + (j * d_row + i) * SIZE, s + (i * s_row + j) * SIZE, SIZE);    \
        }                                                                                    \
    }
SCALAR(1)
SCALAR(2)
SCALAR(4)
SCALAR(8)

#if defined(__SSE2__)
#define LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))

/* one 8x8 tile of 2-byte values; s_row and d_row in bytes */
static inline void tile2(const char *s, Py_ssize_t s_row, char *d, Py_ssize_t d_row) {
    __m128i r0 = LOAD(s + 0 * s_row), r1 = LOAD(s + 1 * s_row);
    __m128i r2 = LOAD(s + 2 * s_row), r3 = LOAD(s + 3 * s_row);
    __m128i r4 = LOAD(s + 4 * s_row), r5 = LOAD(s + 5 * s_row);
    __m128i r6 = LOAD(s + 6 * s_row), r7 = LOAD(s + 7 * s_row);
    __m128i t0 = _mm_unpacklo_epi16(r0, r1), t1 = _mm_unpackhi_epi16(r0, r1);
    __m128i t2 = _mm_unpacklo_epi16(r2, r3), t3 = _mm_unpackhi_epi16(r2, r3);
    __m128i t4 = _mm_unpacklo_epi16(r4, r5), t5 = _mm_unpackhi_epi16(r4, r5);
    __m128i t6 = _mm_unpacklo_epi16(r6, r7), t7 = _mm_unpackhi_epi16(r6, r7);
    __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
    __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
    __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
    __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
    STORE(d + 0 * d_row, _mm_unpacklo_epi64(u0, u4));
    STORE(d + 1 * d_row, _mm_unpackhi_epi64(u0, u4));
    STORE(d + 2 * d_row, _mm_unpacklo_epi64(u1, u5));
    STORE(d + 3 * d_row, _mm_unpackhi_epi64(u1, u5));
    STORE(d + 4 * d_row, _mm_unpacklo_epi64(u2, u6));
    STORE(d + 5 * d_row, _mm_unpackhi_epi64(u2, u6));
    STORE(d + 6 * d_row, _mm_unpacklo_epi64(u3, u7));
    STORE(d + 7 * d_row, _mm_unpackhi_epi64(u3, u7));
}

/* one 4x4 tile of 4-byte values (integer shuffles: bits move, nothing is read as a float) */
static inline void tile4(const char *s, Py_ssize_t s_row, char *d, Py_ssize_t d_row) {
    __m128i r0 = LOAD(s + 0 * s_row), r1 = LOAD(s + 1 * s_row);
    __m128i r2 = LOAD(s + 2 * s_row), r3 = LOAD(s + 3 * s_row);
    __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
    __m128i t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);
    STORE(d + 0 * d_row, _mm_unpacklo_epi64(t0, t2));
    STORE(d + 1 * d_row, _mm_unpackhi_epi64(t0, t2));
    STORE(d + 2 * d_row, _mm_unpacklo_epi64(t1, t3));
    STORE(d + 3 * d_row, _mm_unpackhi_epi64(t1, t3));
}

/* whole K x K tiles through TILE, in the order that keeps both sides' streams short, then the
 * right and bottom edges one value at a time (strides in values) */
#define TILED(SIZE, K)                                                                       \
    static void tiled_##SIZE(const char *s, Py_ssize_t s_row, char *d, Py_ssize_t d_row,     \
                             Py_ssize_t rows, Py_ssize_t cols) {                             \
        Py_ssize_t fr = rows - rows % K, fc = cols - cols % K;                               \
        if (rows <= cols) {                                                                  \
            for (Py_ssize_t j = 0; j < fc; j += K)                                           \
                for (Py_ssize_t i = 0; i < fr; i += K)                                       \
                    tile##SIZE(s + (i * s_row + j) * SIZE, s_row * SIZE,                     \
                               d + (j * d_row + i) * SIZE, d_row * SIZE);                    \
        } else {                                                                             \
            for (Py_ssize_t i = 0; i < fr; i += K)                                           \
                for (Py_ssize_t j = 0; j < fc; j += K)                                       \
                    tile##SIZE(s + (i * s_row + j) * SIZE, s_row * SIZE,                     \
                               d + (j * d_row + i) * SIZE, d_row * SIZE);                    \
        }                                                                                    \
        scalar_##SIZE(s, s_row, d, d_row, 0, fr, fc, cols);                                  \
        scalar_##SIZE(s, s_row, d, d_row, fr, rows, 0, cols);                                \
    }
TILED(2, 8)
TILED(4, 4)
#endif

static void transpose(const char *s, Py_ssize_t s_row, char *d, Py_ssize_t d_row,
                      Py_ssize_t rows, Py_ssize_t cols, int size) {
    switch (size) {
    case 1:
        scalar_1(s, s_row, d, d_row, 0, rows, 0, cols);
        break;
    case 2:
#if defined(__SSE2__)
        tiled_2(s, s_row, d, d_row, rows, cols);
#else
        scalar_2(s, s_row, d, d_row, 0, rows, 0, cols);
#endif
        break;
    case 4:
#if defined(__SSE2__)
        tiled_4(s, s_row, d, d_row, rows, cols);
#else
        scalar_4(s, s_row, d, d_row, 0, rows, 0, cols);
#endif
        break;
    default:
        scalar_8(s, s_row, d, d_row, 0, rows, 0, cols);
    }
}

/* the contiguous source ``so`` (s_len bytes) and writable destination ``doo`` (d_len bytes);
 * -1 with an exception set, and neither held, when either is not that */
static int buffers(PyObject *so, PyObject *doo, Py_ssize_t s_len, Py_ssize_t d_len,
                   Py_buffer *sv, Py_buffer *dv) {
    if (PyObject_GetBuffer(so, sv, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(doo, dv, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(sv);
        return -1;
    }
    if (sv->len != s_len || dv->len != d_len) {
        PyBuffer_Release(sv);
        PyBuffer_Release(dv);
        PyErr_SetString(PyExc_ValueError, "buffer sizes do not match the shapes");
        return -1;
    }
    return 0;
}

/* both directions: (n, c, hw) <-> (n, c1, hw, c0); ``blocks`` is the device side */
static PyObject *move(PyObject *args, int to_device) {
    PyObject *so, *doo;
    Py_ssize_t n, c, c1, hw, c0, size;
    if (!PyArg_ParseTuple(args, "OOnnnnnn", &so, &doo, &n, &c, &c1, &hw, &c0, &size)) return NULL;
    if (n < 0 || c < 0 || hw < 0 || c0 <= 0 || !(size == 1 || size == 2 || size == 4 || size == 8)) {
        PyErr_SetString(PyExc_ValueError, "n, c, hw >= 0, c0 > 0 and an item size of 1, 2, 4 or 8");
        return NULL;
    }
    if (c1 < 0 || c1 < c / c0 + (c % c0 != 0)) {
        PyErr_SetString(PyExc_ValueError, "c1 blocks of c0 channels cannot hold c channels");
        return NULL;
    }
    Py_ssize_t logical, device, t1, t2;
    if (__builtin_mul_overflow(n, c, &t1) || __builtin_mul_overflow(t1, hw, &logical) ||
        __builtin_mul_overflow(n, c1, &t1) || __builtin_mul_overflow(t1, hw, &t2) ||
        __builtin_mul_overflow(t2, c0, &device) || __builtin_mul_overflow(device, size, &t1)) {
        PyErr_SetString(PyExc_ValueError, "shapes too large");
        return NULL;
    }
    Py_buffer sv, dv;
    Py_ssize_t want_s = to_device ? logical : device, want_d = to_device ? device : logical;
    if (buffers(so, doo, want_s * size, want_d * size, &sv, &dv) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        for (Py_ssize_t b = 0; b * c0 < c; b++) {  /* blocks past the c channels: untouched */
            Py_ssize_t count = c - b * c0 < c0 ? c - b * c0 : c0;
            char *logical_at = (char *)(to_device ? sv.buf : dv.buf) + (i * c + b * c0) * hw * size;
            char *block_at = (char *)(to_device ? dv.buf : sv.buf) + (i * c1 + b) * hw * c0 * size;
            if (to_device)  /* rows: the block's channels; columns: the positions */
                transpose(logical_at, hw, block_at, c0, count, hw, (int)size);
            else            /* rows: the positions; columns: the block's channels */
                transpose(block_at, c0, logical_at, hw, hw, count, (int)size);
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&sv);
    PyBuffer_Release(&dv);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(to_blocks_doc,
"to_blocks(logical, device, n, c, c1, hw, c0, itemsize)\n\n"
"Copy the contiguous (n, c, hw) values of ``logical`` into the contiguous (n, c1, hw, c0) buffer\n"
"``device`` (c1 >= ceil(c/c0)), item by item (``itemsize`` bytes each); padding channels and\n"
"blocks past the c channels are not written.");

PyDoc_STRVAR(from_blocks_doc,
"from_blocks(device, logical, n, c, c1, hw, c0, itemsize)\n\n"
"Copy the first c channels of the contiguous (n, c1, hw, c0) buffer ``device`` into the\n"
"contiguous (n, c, hw) buffer ``logical``.");

static PyObject *to_blocks(PyObject *self, PyObject *args) {
    (void)self;
    return move(args, 1);
}

static PyObject *from_blocks(PyObject *self, PyObject *args) {
    (void)self;
    return move(args, 0);
}

PyDoc_STRVAR(block_positions_doc,
"block_positions(logical, device, count, hw, c0, p0, p1, itemsize)\n\n"
"Copy positions [p0, p1) of one block's ``count`` channels (the contiguous (count, hw) buffer\n"
"``logical``, count <= c0) into the contiguous (p1 - p0, c0) buffer ``device``: part of one\n"
"(n, c1) block of the device layout, for a block too big to make whole. Padding channels are\n"
"not written.");

static PyObject *block_positions(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *so, *doo;
    Py_ssize_t count, hw, c0, p0, p1, size;
    if (!PyArg_ParseTuple(args, "OOnnnnnn", &so, &doo, &count, &hw, &c0, &p0, &p1, &size))
        return NULL;
    if (count < 0 || hw < 0 || c0 <= 0 || count > c0 || p0 < 0 || p1 < p0 || p1 > hw ||
        !(size == 1 || size == 2 || size == 4 || size == 8)) {
        PyErr_SetString(PyExc_ValueError, "0 <= count <= c0, 0 <= p0 <= p1 <= hw and an item "
                                          "size of 1, 2, 4 or 8");
        return NULL;
    }
    Py_ssize_t logical, device, t1;
    if (__builtin_mul_overflow(count, hw, &t1) || __builtin_mul_overflow(t1, size, &logical) ||
        __builtin_mul_overflow(p1 - p0, c0, &t1) || __builtin_mul_overflow(t1, size, &device)) {
        PyErr_SetString(PyExc_ValueError, "shapes too large");
        return NULL;
    }
    Py_buffer sv, dv;
    if (buffers(so, doo, logical, device, &sv, &dv) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    /* rows: the channels (stride hw), from position p0; columns: the p1 - p0 positions */
    transpose((const char *)sv.buf + p0 * size, hw, (char *)dv.buf, c0, count, p1 - p0, (int)size);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&sv);
    PyBuffer_Release(&dv);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"to_blocks", to_blocks, METH_VARARGS, to_blocks_doc},
    {"from_blocks", from_blocks, METH_VARARGS, from_blocks_doc},
    {"block_positions", block_positions, METH_VARARGS, block_positions_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_channel_blocks",
    "NC1HWC0 channel blocks moved in compiled loops for dump.channel_blocks (C, optional).", -1,
    methods, NULL, NULL, NULL, NULL,
};

/* ABI: what the functions take; dump.channel_blocks uses a build only when it says 3 (the
 * first took no c1, the second had no block_positions) */
PyMODINIT_FUNC PyInit__channel_blocks(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", 3) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
