/* The float16 tiny-value rule's pass (compare.tiny_values.normal_cosine) in one compiled loop.
 *
 * x (actual) is n float16 values, y (golden) n float16 or float32 values, both contiguous. A
 * position is "tiny" where both |x| and |y| lie below float16's smallest normal (2**-14), found
 * on the bit patterns (NaN and Inf never are). Of the tiny positions that are not 0 on both
 * sides, one is "close" where x and y have one sign (x*y >= 0) and |x - y| <= 2**-22 + |y|/8,
 * computed in double, where both values are exact; a close position whose values differ counts
 * as equal. The call returns (dxx, dxy, sdd, sum_rel, max_rel, equal, tiny, apart): what
 * replacing x by y at the equal positions adds to Σx² (y² - x²) and to Σxy (y² - xy), those
 * positions' Σ(x-y)², Σ|x/y - 1| (0 where |y| <= float64 eps, as msaccucmp) and its largest
 * term, and the counts of equal, tiny and tiny-but-not-close positions: the numpy loop's
 * figures, summed here in position order (the numpy loop sums a chunk's terms with np.dot, so
 * the sums agree to the last few bits).
 *
 * Most blocks of 16 positions hold no tiny position, or only 0 against 0 (a ReLU's zeros): they
 * take a branch-free test of the bit patterns only; the double arithmetic runs for the rest.
 * The numpy loop made ~8 array passes a chunk wherever x held a 0 or a subnormal (PP-OCRv4 det
 * 736, a warm check: 82 of 233 tensors, 0.04 s of the compare's CPU). The GIL is released. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define LANES 16
#define F16_TINY_BITS 0x0400u
#define F32_TINY_BITS 0x38800000u
#define TINY_ATOL (1.0 / 4194304.0) /* 2**-22: tiny_values.FP16_TINY_ATOL */
#define TINY_RTOL 0.125             /* tiny_values.FP16_TINY_RTOL */
#define F64_EPS 2.220446049250313e-16

typedef struct {
    double dxx, dxy, sdd, sum_rel, max_rel;
    Py_ssize_t equal, tiny, apart;
} tally;

/* a float16 pattern below 2**-14 (a subnormal or 0) as a double: exact */
static inline double tiny_f16(uint16_t h) {
    double v = (double)(h & 0x3FFu) * (1.0 / 16777216.0); /* 2**-24 */
    return (h & 0x8000u) ? -v : v;
}

static inline uint32_t f32_bits(const float *p) {
    uint32_t b;
    memcpy(&b, p, sizeof b);
    return b;
}

/* the rule's closeness of a tiny position's two values */
static inline int close_values(double a, double g) {
    return fabs(a - g) <= TINY_ATOL + TINY_RTOL * fabs(g) && a * g >= 0.0;
}

/* one tiny position that is not 0 against 0 */
static inline void position(double a, double g, tally *t) {
    double gap = fabs(a - g);
    if (!close_values(a, g)) {
        t->apart++;
        return;
    }
    if (gap == 0.0) return;
    t->equal++;
    t->dxx += g * g - a * a;
    t->dxy += g * g - a * g;
    t->sdd += (a - g) * (a - g);
    double rel = fabs(g) > F64_EPS ? fabs(a / g - 1.0) : 0.0;
    t->sum_rel += rel;
    if (rel > t->max_rel) t->max_rel = rel;
}

static inline uint32_t abs_f16(const uint16_t *p) { return *p & 0x7FFFu; }
static inline uint32_t abs_f32(const float *p) { return f32_bits(p) & 0x7FFFFFFFu; }
static inline double value_f16(const uint16_t *p) { return tiny_f16(*p); }
static inline double value_f32(const float *p) { return (double)*p; }

/* One loop per golden type: a block's x patterns are tested first, and y is read only where a
 * position of x is tiny (a block of normal values never touches y's memory). */
#define RUN(NAME, TY, YABS, YTINY_BITS, YVALUE)                                                 \
    static void NAME(const uint16_t *x, const TY *y, Py_ssize_t n, tally *t) {                \
        Py_ssize_t i = 0, whole = n - n % LANES;                                              \
        for (; i < whole; i += LANES) {                                                       \
            uint32_t xt = 0;                                                                  \
            for (int k = 0; k < LANES; k++) xt |= (uint32_t)((x[i + k] & 0x7FFFu) < F16_TINY_BITS); \
            if (!xt) continue;                                                                \
            uint32_t work = 0;                                                                \
            Py_ssize_t count = 0;                                                             \
            for (int k = 0; k < LANES; k++) {                                                 \
                uint32_t xb = x[i + k] & 0x7FFFu, yb = YABS(y + i + k);                        \
                uint32_t b = (uint32_t)(xb < F16_TINY_BITS) & (uint32_t)(yb < YTINY_BITS);     \
                count += b;                                                                   \
                work |= b & (uint32_t)((xb | yb) != 0);                                       \
            }                                                                                 \
            t->tiny += count;                                                                 \
            if (!work) continue;                                                              \
            for (int k = 0; k < LANES; k++) {                                                 \
                uint32_t xb = x[i + k] & 0x7FFFu, yb = YABS(y + i + k);                        \
                if (xb < F16_TINY_BITS && yb < YTINY_BITS && (xb | yb))                       \
                    position(tiny_f16(x[i + k]), YVALUE(y + i + k), t);                       \
            }                                                                                 \
        }                                                                                     \
        for (; i < n; i++) {                                                                  \
            uint32_t xb = x[i] & 0x7FFFu, yb = YABS(y + i);                                    \
            if (xb < F16_TINY_BITS && yb < YTINY_BITS) {                                      \
                t->tiny++;                                                                    \
                if (xb | yb) position(tiny_f16(x[i]), YVALUE(y + i), t);                      \
            }                                                                                 \
        }                                                                                     \
    }

RUN(run_h, uint16_t, abs_f16, F16_TINY_BITS, value_f16)
RUN(run_f, float, abs_f32, F32_TINY_BITS, value_f32)

/* out (x widened to float32 by the caller) with y's value at every close tiny position */
#define REPLACE(NAME, TY, YABS, YTINY_BITS, YVALUE)                                             \
    static void NAME(const uint16_t *x, const TY *y, float *out, Py_ssize_t n) {              \
        for (Py_ssize_t i = 0; i < n; i++) {                                                  \
            uint32_t xb = x[i] & 0x7FFFu;                                                     \
            if (xb >= F16_TINY_BITS) continue;                                                \
            uint32_t yb = YABS(y + i);                                                        \
            if (yb < YTINY_BITS && (xb | yb) && close_values(tiny_f16(x[i]), YVALUE(y + i))) \
                out[i] = (float)YVALUE(y + i);                                                \
        }                                                                                     \
    }

REPLACE(replace_h, uint16_t, abs_f16, F16_TINY_BITS, value_f16)
REPLACE(replace_f, float, abs_f32, F32_TINY_BITS, value_f32)

PyDoc_STRVAR(pass_doc,
"tiny(x, y, y_half, n) -> (dxx, dxy, sdd, sum_rel, max_rel, equal, tiny, apart)\n\n"
"The float16 tiny-value rule's pass over n float16 values x against n float16 (y_half true)\n"
"or float32 values y, contiguous buffers (compare.tiny_values.normal_cosine).");

static PyObject *tiny(PyObject *self, PyObject *args) {
    PyObject *xo, *yo;
    int yh;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOpn", &xo, &yo, &yh, &n)) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "n must not be negative");
        return NULL;
    }
    Py_buffer xv, yv;
    if (PyObject_GetBuffer(xo, &xv, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(yo, &yv, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    Py_ssize_t ys = yh ? 2 : 4;
    if (xv.len % 2 || yv.len % ys || xv.len / 2 != n || yv.len / ys != n) {
        PyBuffer_Release(&xv);
        PyBuffer_Release(&yv);
        PyErr_SetString(PyExc_ValueError, "buffer sizes do not match n values of their types");
        return NULL;
    }
    tally t = {0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0};
    Py_BEGIN_ALLOW_THREADS
    if (yh) run_h((const uint16_t *)xv.buf, (const uint16_t *)yv.buf, n, &t);
    else run_f((const uint16_t *)xv.buf, (const float *)yv.buf, n, &t);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&xv);
    PyBuffer_Release(&yv);
    return Py_BuildValue("dddddnnn", t.dxx, t.dxy, t.sdd, t.sum_rel, t.max_rel, t.equal, t.tiny,
                         t.apart);
}

PyDoc_STRVAR(replace_doc,
"replace(x, y, y_half, n, out)\n\n"
"Set out (n float32 values: x widened) to y's value at every position the rule counts as\n"
"equal: both below float16's smallest normal, one sign, within 2**-22 + |y|/8\n"
"(compare.tiny_values.judged_errors).");

static PyObject *replace(PyObject *self, PyObject *args) {
    PyObject *xo, *yo, *oo;
    int yh;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOpnO", &xo, &yo, &yh, &n, &oo)) return NULL;
    Py_buffer xv, yv, ov;
    if (PyObject_GetBuffer(xo, &xv, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(yo, &yv, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    if (PyObject_GetBuffer(oo, &ov, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&xv);
        PyBuffer_Release(&yv);
        return NULL;
    }
    Py_ssize_t ys = yh ? 2 : 4;
    int ok = n >= 0 && xv.len == 2 * n && yv.len == ys * n && ov.len == 4 * n;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        if (yh) replace_h((const uint16_t *)xv.buf, (const uint16_t *)yv.buf, (float *)ov.buf, n);
        else replace_f((const uint16_t *)xv.buf, (const float *)yv.buf, (float *)ov.buf, n);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&xv);
    PyBuffer_Release(&yv);
    PyBuffer_Release(&ov);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "buffer sizes do not match n values of their types");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"tiny", tiny, METH_VARARGS, pass_doc},
    {"replace", replace, METH_VARARGS, replace_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tiny_pass",
    "The float16 tiny-value rule's pass for compare.tiny_values (C, optional).", -1,
    methods, NULL, NULL, NULL, NULL,
};

/* ABI: what tiny() and replace() take and return; compare.tiny_values uses a build only when it
 * says 1 */
PyMODINIT_FUNC PyInit__tiny_pass(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
