/* The sums behind the metrics of one tensor pair, in one pass over both sides, and the KL terms
 * in a second (compare.pair_sums).
 *
 * x (actual) and y (golden) are contiguous float16 or float32 vectors of n values. One call
 * returns, over all n positions: Σx², Σy², Σxy and Σ(x-y)² (exact products summed in double),
 * Σ|x-y|, max |x-y|, Σr and max r with r = |x-y| / |y| where |y| > eps (float64 eps, as
 * msaccucmp) and 0 elsewhere, both sides' min and max, Σx, Σy and both sides' Σ(v - mean)².
 *
 * |x-y|, r, Σ|x-y|, Σr, Σx and Σy are float32 values summed in 16 float32 lanes (L) for blocks
 * of 256 values, each block's lane sums then added in double, in lane order: as the numpy kernel
 * (compare.kernel). The lanes are worked in two halves of W = 8 (lanes 0-7 over the block, then
 * 8-15), whose accumulators fit in AVX2's 16 registers, with the same sums;
 * whose float32 |x-y| and r it reproduces bit for bit, so max |x-y| and max r are identical.
 * Σx², Σy², Σxy and Σ(x-y)² are summed in double throughout (the cosine needs them to ~1e-14,
 * not the numpy kernel's ~1e-7). Σ(v - mean)² comes from Σv² - (Σv)²/n when that keeps at least
 * a tenth of Σv² (relative error ~2e-5 at worst, from Σv's float32 lanes, ~1e-7 typically: as
 * the numpy kernel's chunk_m2), otherwise from a second pass.
 *
 * A NaN or an infinity on either side, or a float32 sum that overflows, returns None: the
 * caller then runs the numpy kernel, which counts and masks them. A float32 NaN or Inf makes a
 * double sum of squares NaN or Inf; float16 is widened with the integer trick of
 * compare.fp16.widen_f16, whose Inf/NaN patterns come out finite but >= 65536 in magnitude,
 * which the min/max show. The order of every addition is fixed by the code
 * (L lanes in two halves, then lane order; the double sums in W/2 lanes), and contraction into
 * fused multiply-adds is off, so every instruction set target_clones picks gives the same bits
 * (an SSE2-only build and this one's AVX2 copy: the same bits over float16/float32 pairs of
 * 1 to 300,000 values, KL included). The GIL is released meanwhile.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* isfinite must mean it, and float32 arithmetic must round to float32 (the tail's |x-y| and r
 * are the numpy kernel's bits): refuse to build otherwise, and the install falls back on numpy */
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "_pair_sums needs IEEE NaN/Inf semantics: build without -ffast-math/-ffinite-math-only"
#endif
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "_pair_sums needs float arithmetic in float (FLT_EVAL_METHOD 0, e.g. SSE2, not x87)"
#endif

#define L 16      /* float32 lanes of the sums the numpy kernel has too (compare.kernel) */
#define W 8       /* float lanes of a vector: half of L, each pass's accumulators fit in the 16
                   * registers of AVX2 (with W = 16 they spilled: 3.3x slower than the numpy
                   * kernel on a CPU without AVX-512, benchmarks/bench_compare.py) */
#define BLOCK 16  /* L-value steps summed in float32 before their sums go into doubles */
#define F32_EPS_OF_F64 2.220446049250313e-16f  /* float64 eps, exact in float32 */
#define NONFINITE_LIMIT 65536.0f  /* a widened float16 Inf/NaN pattern is at least this */

typedef float vf __attribute__((vector_size(W * 4)));
typedef int32_t vi __attribute__((vector_size(W * 4)));
typedef uint32_t vu __attribute__((vector_size(W * 4)));
typedef int16_t vs __attribute__((vector_size(W * 2)));
typedef double vd __attribute__((vector_size(W * 4)));  /* W/2 doubles */

/* one copy per instruction set, picked at load time: needs GCC on x86-64 with glibc (ifunc) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) && \
    defined(__GLIBC__)
/* by feature: "arch=haswell" is chosen by CPU model (__builtin_cpu_is), so no AMD CPU and no
 * other Intel model ran it, only the SSE2 default */
#define TARGETS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TARGETS
#endif

/* every helper taking or returning a vector is inlined into its caller: called out of line from
 * a target_clones copy, a 64-byte vector would pass by another ABI than the callee expects */
#define VINLINE static inline __attribute__((always_inline))

VINLINE vf sel(vi mask, vf a, vf b) {
    vi ia, ib, r;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    r = (mask & ia) | (~mask & ib);
    vf f;
    memcpy(&f, &r, sizeof f);
    return f;
}
VINLINE vf vmax(vf a, vf b) { return sel(a > b, a, b); }
VINLINE vf vmin(vf a, vf b) { return sel(a < b, a, b); }

/* float16 bits -> float32 (compare.fp16.widen_f16): the sign-extended pattern shifted into
 * place (unsigned: no shift of a negative value), its stray bits 28..30 cleared, then scaled by
 * 2**112 (fp16 exponent bias 15 -> fp32 bias 127; normalises subnormals) */
VINLINE vf load_f16(const uint16_t *p) {
    vs h;
    memcpy(&h, p, sizeof h);
    vu b;
    for (int k = 0; k < W; k++) b[k] = (uint32_t)(int32_t)h[k];
    b = (b << 13) & 0x8FFFFFFFu;
    vf f;
    memcpy(&f, &b, sizeof f);
    return f * 5.192296858534828e+33f;
}
VINLINE vf load_f32(const float *p) {
    vf f;
    memcpy(&f, p, sizeof f);
    return f;
}
static inline float one_f16(const uint16_t *p) {
    int16_t h;
    memcpy(&h, p, sizeof h);
    uint32_t b = ((uint32_t)(int32_t)h << 13) & 0x8FFFFFFFu;
    float f;
    memcpy(&f, &b, sizeof f);
    return f * 5.192296858534828e+33f;
}
static inline float one_f32(const float *p) {
    float f;
    memcpy(&f, p, sizeof f);  /* the buffer need not be aligned */
    return f;
}

VINLINE vf vsplat(float a) {
    vf r;
    for (int k = 0; k < W; k++) r[k] = a;
    return r;
}

/* s plus the lanes of v, in lane order: a block's L lane sums are its two halves' in turn */
VINLINE double hadd(double s, vf v) {
    for (int k = 0; k < W; k++) s += v[k];
    return s;
}
/* the low and high halves widened to double (loops: __builtin_shufflevector needs GCC 12) */
VINLINE vd lo(vf v) {
    vd r;
    for (int k = 0; k < W / 2; k++) r[k] = v[k];
    return r;
}
VINLINE vd hi(vf v) {
    vd r;
    for (int k = 0; k < W / 2; k++) r[k] = v[k + W / 2];
    return r;
}

enum { SXX, SYY, SXY, SDD, SABS, MABS, SREL, MREL, XMIN, XMAX, YMIN, YMAX, SX, SY, M2X, M2Y, NOUT };

/* One pass; the second-pass M2 is done by the caller (m2_pass). */
#define PASS(NAME, TX, LOADX, ONEX, TY, LOADY, ONEY)                                             \
    TARGETS static void NAME(const TX *restrict x, const TY *restrict y, Py_ssize_t n,        \
                             double *restrict out) {                                         \
        double tabs = 0, trel = 0, tx = 0, ty = 0; /* the float32 lanes' block sums */      \
        vd dxx = {0}, dyy = {0}, dxy = {0}, ddd = {0};                                       \
        vf mabs = vsplat(0.0f), mrel = mabs, inf = vsplat(INFINITY), eps = vsplat(F32_EPS_OF_F64); \
        vf xmin = inf, ymin = inf, xmax = -inf, ymax = -inf;                                 \
        Py_ssize_t i = 0, whole = n - n % L;                                                 \
        while (i < whole) {                                                                  \
            Py_ssize_t end = i + (Py_ssize_t)L * BLOCK;                                      \
            if (end > whole) end = whole;                                                    \
            double babs = 0, brel = 0, bx = 0, by = 0; /* the block's L lane sums */         \
            for (int h = 0; h < L; h += W) { /* lanes h..h+W-1 of every L values */          \
            vf sabs = {0}, srel = {0}, sx = {0}, sy = {0};                                   \
            for (Py_ssize_t j = i + h; j < end; j += L) {                                    \
                vf a = LOADX(x + j), g = LOADY(y + j);                                       \
                vf d = a - g;                                                                \
                vf ad = vmax(d, -d), ag = vmax(g, -g);                                       \
                vf r = ad / sel(ag > eps, ag, inf);                                          \
                vd al = lo(a), ah = hi(a), gl = lo(g), gh = hi(g);                           \
                vd dl = al - gl, dh = ah - gh;                                               \
                dxx += al * al;                                                              \
                dxx += ah * ah;                                                              \
                dyy += gl * gl;                                                              \
                dyy += gh * gh;                                                              \
                dxy += al * gl;                                                              \
                dxy += ah * gh;                                                              \
                ddd += dl * dl;                                                              \
                ddd += dh * dh;                                                              \
                sabs += ad;                                                                  \
                srel += r;                                                                   \
                sx += a;                                                                     \
                sy += g;                                                                     \
                mabs = vmax(mabs, ad);                                                       \
                mrel = vmax(mrel, r);                                                        \
                xmin = vmin(xmin, a);                                                        \
                xmax = vmax(xmax, a);                                                        \
                ymin = vmin(ymin, g);                                                        \
                ymax = vmax(ymax, g);                                                        \
            }                                                                                \
            babs = hadd(babs, sabs);                                                         \
            brel = hadd(brel, srel);                                                         \
            bx = hadd(bx, sx);                                                               \
            by = hadd(by, sy);                                                               \
            }                                                                                \
            tabs += babs;                                                                    \
            trel += brel;                                                                    \
            tx += bx;                                                                        \
            ty += by;                                                                        \
            i = end;                                                                         \
        }                                                                                    \
        double txx = 0, tyy = 0, txy = 0, tdd = 0;                                           \
        for (int k = 0; k < W / 2; k++) {                                                    \
            txx += dxx[k];                                                                   \
            tyy += dyy[k];                                                                   \
            txy += dxy[k];                                                                   \
            tdd += ddd[k];                                                                   \
        }                                                                                    \
        float m[6] = {0.0f, 0.0f, INFINITY, -INFINITY, INFINITY, -INFINITY};                 \
        for (int k = 0; k < W; k++) {                                                        \
            m[0] = mabs[k] > m[0] ? mabs[k] : m[0];                                          \
            m[1] = mrel[k] > m[1] ? mrel[k] : m[1];                                          \
            m[2] = xmin[k] < m[2] ? xmin[k] : m[2];                                          \
            m[3] = xmax[k] > m[3] ? xmax[k] : m[3];                                          \
            m[4] = ymin[k] < m[4] ? ymin[k] : m[4];                                          \
            m[5] = ymax[k] > m[5] ? ymax[k] : m[5];                                          \
        }                                                                                    \
        for (; i < n; i++) { /* the last n % L values, one at a time, in the same arithmetic */ \
            float a = ONEX(x + i), g = ONEY(y + i);                                          \
            float d = a - g, ad = fabsf(d), ag = fabsf(g);                                   \
            float r = ad / (ag > F32_EPS_OF_F64 ? ag : INFINITY);                            \
            double da = a, dg = g, dd = da - dg;                                             \
            txx += da * da;                                                                  \
            tyy += dg * dg;                                                                  \
            txy += da * dg;                                                                  \
            tdd += dd * dd;                                                                  \
            tabs += ad;                                                                      \
            trel += r;                                                                       \
            tx += a;                                                                         \
            ty += g;                                                                         \
            m[0] = ad > m[0] ? ad : m[0];                                                    \
            m[1] = r > m[1] ? r : m[1];                                                      \
            m[2] = a < m[2] ? a : m[2];                                                      \
            m[3] = a > m[3] ? a : m[3];                                                      \
            m[4] = g < m[4] ? g : m[4];                                                      \
            m[5] = g > m[5] ? g : m[5];                                                      \
        }                                                                                    \
        out[SXX] = txx;                                                                      \
        out[SYY] = tyy;                                                                      \
        out[SXY] = txy;                                                                      \
        out[SDD] = tdd;                                                                      \
        out[SABS] = tabs;                                                                    \
        out[MABS] = m[0];                                                                    \
        out[SREL] = trel;                                                                    \
        out[MREL] = m[1];                                                                    \
        out[XMIN] = m[2];                                                                    \
        out[XMAX] = m[3];                                                                    \
        out[YMIN] = m[4];                                                                    \
        out[YMAX] = m[5];                                                                    \
        out[SX] = tx;                                                                        \
        out[SY] = ty;                                                                        \
    }

PASS(pass_hh, uint16_t, load_f16, one_f16, uint16_t, load_f16, one_f16)
PASS(pass_hf, uint16_t, load_f16, one_f16, float, load_f32, one_f32)
PASS(pass_fh, float, load_f32, one_f32, uint16_t, load_f16, one_f16)
PASS(pass_ff, float, load_f32, one_f32, float, load_f32, one_f32)

/* Σ(v - mean)² in double, for a side whose mean is large against its spread. */
static double m2_pass(const void *v, int half, Py_ssize_t n, double mean) {
    double s = 0;
    if (half) {
        const uint16_t *p = (const uint16_t *)v;
        for (Py_ssize_t i = 0; i < n; i++) {
            double d = (double)one_f16(p + i) - mean;
            s += d * d;
        }
    } else {
        const float *p = (const float *)v;
        for (Py_ssize_t i = 0; i < n; i++) {
            double d = (double)one_f32(p + i) - mean;
            s += d * d;
        }
    }
    return s;
}

static double m2_of(const void *v, int half, Py_ssize_t n, double svv, double sv) {
    double naive = svv - sv * sv / (double)n;
    if (naive >= 0.1 * svv) return naive;
    return m2_pass(v, half, n, sv / (double)n);
}

static int all_finite(const double *out, int x_half, int y_half) {
    for (int k = 0; k < M2X; k++)
        if (!isfinite(out[k])) return 0;
    if (x_half && (out[XMAX] >= NONFINITE_LIMIT || out[XMIN] <= -NONFINITE_LIMIT)) return 0;
    if (y_half && (out[YMAX] >= NONFINITE_LIMIT || out[YMIN] <= -NONFINITE_LIMIT)) return 0;
    return 1;
}

#include "_pair_sums_kl.h"  /* KL: vlogf, KL_PASS and its four copies */

PyDoc_STRVAR(sums_doc,
"sums(x, x_half, y, y_half, n, kl=False) -> tuple or None\n\n"
"The pair sums of n float16 (``*_half`` true) or float32 values in the contiguous buffers x\n"
"and y: (sxx, syy, sxy, sdd, sum_abs, max_abs, sum_rel, max_rel, xmin, xmax, ymin, ymax, sx,\n"
"sy, m2x, m2y), with kl also (kl_su, kl_sv, kl_e, k) from a second pass; None when a side\n"
"holds NaN or Inf, a float32 sum overflows, or (kl) a clamp or ratio leaves float32.");

static PyObject *sums(PyObject *self, PyObject *args) {
    PyObject *xo, *yo;
    int xh, yh;
    Py_ssize_t n;
    int kl = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OpOpn|p", &xo, &xh, &yo, &yh, &n, &kl)) return NULL;
    if (n <= 0) {
        PyErr_SetString(PyExc_ValueError, "n must be positive");
        return NULL;
    }
    Py_buffer xv, yv;
    if (PyObject_GetBuffer(xo, &xv, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(yo, &yv, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    Py_ssize_t xs = xh ? 2 : 4, ys = yh ? 2 : 4;  /* compared by division: n * size can overflow */
    if (xv.len % xs || yv.len % ys || xv.len / xs != n || yv.len / ys != n) {
        PyBuffer_Release(&xv);
        PyBuffer_Release(&yv);
        PyErr_SetString(PyExc_ValueError, "buffer sizes do not match n values of their types");
        return NULL;
    }
    double out[NOUT + NKL];
    int finite;
    Py_BEGIN_ALLOW_THREADS
    if (xh && yh) pass_hh(xv.buf, yv.buf, n, out);
    else if (xh) pass_hf(xv.buf, yv.buf, n, out);
    else if (yh) pass_fh(xv.buf, yv.buf, n, out);
    else pass_ff(xv.buf, yv.buf, n, out);
    finite = all_finite(out, xh, yh);
    if (finite) {
        out[M2X] = m2_of(xv.buf, xh, n, out[SXX], out[SX]);
        out[M2Y] = m2_of(yv.buf, yh, n, out[SYY], out[SY]);
    }
    if (finite && kl) {
        double *k_out = out + NOUT;
        if (xh && yh) finite = kl_hh(xv.buf, yv.buf, n, out, k_out);
        else if (xh) finite = kl_hf(xv.buf, yv.buf, n, out, k_out);
        else if (yh) finite = kl_fh(xv.buf, yv.buf, n, out, k_out);
        else finite = kl_ff(xv.buf, yv.buf, n, out, k_out);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&xv);
    PyBuffer_Release(&yv);
    if (!finite) Py_RETURN_NONE;
    int count = kl ? NOUT + NKL : NOUT;
    PyObject *t = PyTuple_New(count);
    if (t == NULL) return NULL;
    for (int k = 0; k < count; k++) {
        PyObject *f = PyFloat_FromDouble(out[k]);
        if (f == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, f);
    }
    return t;
}

static PyMethodDef methods[] = {
    {"sums", sums, METH_VARARGS, sums_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pair_sums",
    "One-pass sums of a float16/float32 tensor pair for compare.pair_sums (C, optional).", -1,
    methods, NULL, NULL, NULL, NULL,
};

/* ABI: what sums() takes and returns; compare.pair_sums uses a build only when it says 2 (an
 * editable install not rebuilt after an update keeps the old .so, which took 5 arguments) */
PyMODINIT_FUNC PyInit__pair_sums(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", 2) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
