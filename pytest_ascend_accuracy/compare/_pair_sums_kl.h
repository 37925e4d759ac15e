/* The KL pass of _pair_sums.c, included by it after its vector helpers and PASS (one
 * translation unit: one extension, the same TARGETS and inlined helpers). */

/* -- KL (msaccucmp's, as compare.kernel computes it) -------------------------------------------
 * u = max(x - xmin, cx), v = max(y - ymin, cy) (x itself where the range is 0), with the clamps
 * cx = float32(eps32 * range) (1 for a range of 0); for a guess k of Σu/Σv (that of the first
 * ~65,536 values), e = u ln(u/(kv)) - u + kv >= 0 per value, and then in Python
 * KL = Σe/Σu + ln r + 1 - r with r = k Σv/Σu (compare.kernel explains the form). u, v, kv and
 * e are float32 as in the numpy kernel, the log a vector float32 log (Cephes' logf, <= 0.83
 * ulp over every positive float32),
 * the sums float32 lanes per block added in double. A zero clamp (a subnormal range) or a
 * ratio u/(kv) that overflows or underflows float32 returns None: the numpy kernel's float64
 * fallback takes those. */
VINLINE vf vlogf(vf x) { /* x > 0 and finite (normal or subnormal) */
    vi sub = x < vsplat(1.17549435e-38f);
    x = sel(sub, x * vsplat(8388608.0f), x); /* subnormals scaled by 2**23 */
    vu bits;
    memcpy(&bits, &x, sizeof bits);
    vi e = (vi)((bits >> 23) & 0xFFu) - 126;  /* the exponent, for a mantissa in [0.5, 1) */
    bits = (bits & 0x807FFFFFu) | 0x3F000000u;
    vf m, ef;
    memcpy(&m, &bits, sizeof m);
    for (int k = 0; k < W; k++) ef[k] = (float)e[k];
    ef = ef - sel(sub, vsplat(23.0f), vsplat(0.0f));
    vi small = m < vsplat(0.707106781186547524f);
    ef = sel(small, ef - vsplat(1.0f), ef);
    m = sel(small, m + m - vsplat(1.0f), m - vsplat(1.0f));
    vf z = m * m;
    vf y = vsplat(7.0376836292E-2f);
    y = y * m + vsplat(-1.1514610310E-1f);
    y = y * m + vsplat(1.1676998740E-1f);
    y = y * m + vsplat(-1.2420140846E-1f);
    y = y * m + vsplat(1.4249322787E-1f);
    y = y * m + vsplat(-1.6668057665E-1f);
    y = y * m + vsplat(2.0000714765E-1f);
    y = y * m + vsplat(-2.4999993993E-1f);
    y = y * m + vsplat(3.3333331174E-1f);
    y = y * m * z;
    y = y + vsplat(-2.12194440e-4f) * ef;
    y = y - vsplat(0.5f) * z;
    return m + y + vsplat(0.693359375f) * ef;
}

static inline float shift_clamp1(float v, float lo, int ranged, float clamp) {
    float u = ranged ? v - lo : v;
    return u > clamp ? u : clamp;
}

enum { KSU, KSV, KE, KK, NKL };

#define KL_PASS(NAME, TX, LOADX, ONEX, TY, LOADY, ONEY)                                          \
    TARGETS static int NAME(const TX *restrict x, const TY *restrict y, Py_ssize_t n,         \
                            const double *st, double *restrict out) {                        \
        double rx = st[XMAX] - st[XMIN], ry = st[YMAX] - st[YMIN];                           \
        float cx = (float)(1.1920928955078125e-07 * (rx != 0 ? rx : 1.0));                   \
        float cy = (float)(1.1920928955078125e-07 * (ry != 0 ? ry : 1.0));                   \
        if (!(cx > 0.0f) || !(cy > 0.0f)) return 0;                                          \
        float xlo = (float)st[XMIN], ylo = (float)st[YMIN];                                   \
        int xr = rx != 0, yr = ry != 0;                                                      \
        /* k: Σu/Σv of the first ~65,536 values, as the numpy kernel takes it from its first    \
         * chunk (pass one's Σy - n ymin loses a spread under a float32 ulp of Σy: a golden     \
         * constant but for 1-ulp noise gave a k 1e2-1e7 too large, and KL 0.15 off) */        \
        vf vcx = vsplat(cx), vcy = vsplat(cy), vxlo = vsplat(xr ? xlo : 0.0f);               \
        vf vylo = vsplat(yr ? ylo : 0.0f);                                                   \
        double su0 = 0, sv0 = 0;                                                             \
        Py_ssize_t whole = n - n % L, first = whole < 65536 ? whole : 65536;                 \
        for (Py_ssize_t j = 0; j < first;) { /* vectors, L float32 lanes per block */        \
            Py_ssize_t end = j + (Py_ssize_t)L * BLOCK < first ? j + L * BLOCK : first;      \
            double s_u = 0, s_v = 0;                                                         \
            for (int h = 0; h < L; h += W) {                                                 \
                vf bu = {0}, bv = {0};                                                       \
                for (Py_ssize_t q = j + h; q < end; q += L) {                                \
                    bu += vmax(LOADX(x + q) - vxlo, vcx);                                    \
                    bv += vmax(LOADY(y + q) - vylo, vcy);                                    \
                }                                                                            \
                s_u = hadd(s_u, bu);                                                         \
                s_v = hadd(s_v, bv);                                                         \
            }                                                                                \
            su0 += s_u;                                                                      \
            sv0 += s_v;                                                                      \
            j = end;                                                                         \
        }                                                                                    \
        for (Py_ssize_t j = whole; j < n && whole < 65536; j++) { /* and a short tail */    \
            su0 += shift_clamp1(ONEX(x + j), xlo, xr, cx);                                   \
            sv0 += shift_clamp1(ONEY(y + j), ylo, yr, cy);                                   \
        }                                                                                    \
        double kd = su0 > 0 && sv0 > 0 ? su0 / sv0 : 1.0;                                    \
        if (!(kd > 0) || !isfinite(kd) || fabs(kd - 1.0) < 1e-2) kd = 1.0;                  \
        float k32 = (float)kd;                                                               \
        if (!(k32 > 0.0f) || !isfinite(k32)) k32 = 1.0f;                                     \
        vf vk = vsplat(k32);                                                                 \
        vf wmin = vsplat(INFINITY), wmax = vsplat(0.0f);                                     \
        double su = 0, sv = 0, se = 0;                                                       \
        Py_ssize_t i = 0;                                                                    \
        while (i < whole) {                                                                  \
            Py_ssize_t end = i + (Py_ssize_t)L * BLOCK;                                      \
            if (end > whole) end = whole;                                                    \
            double s_u = 0, s_v = 0, s_e = 0; /* the block's L lane sums */                  \
            for (int h = 0; h < L; h += W) {                                                 \
            vf bu = {0}, bv = {0}, be = {0};                                                 \
            for (Py_ssize_t q = i + h; q < end; q += L) {                                    \
                vf u = LOADX(x + q) - vxlo, v = LOADY(y + q) - vylo;                         \
                u = vmax(u, vcx);                                                            \
                v = vmax(v, vcy);                                                            \
                vf kv = v * vk, w = u / kv;                                                  \
                wmin = vmin(wmin, w);                                                        \
                wmax = vmax(wmax, w);                                                        \
                w = vmax(w, vsplat(1e-30f)); /* keeps the log defined; such w is refused */  \
                w = vmin(w, vsplat(3e38f));                                                  \
                bu += u;                                                                     \
                bv += v;                                                                     \
                be += u * vlogf(w) + (kv - u);                                               \
            }                                                                                \
            s_u = hadd(s_u, bu);                                                             \
            s_v = hadd(s_v, bv);                                                             \
            s_e = hadd(s_e, be);                                                             \
            }                                                                                \
            su += s_u;                                                                       \
            sv += s_v;                                                                       \
            se += s_e;                                                                       \
            i = end;                                                                         \
        }                                                                                    \
        float wlo = INFINITY, whi = 0.0f;                                                    \
        for (int k = 0; k < W; k++) {                                                        \
            wlo = wmin[k] < wlo ? wmin[k] : wlo;                                             \
            whi = wmax[k] > whi ? wmax[k] : whi;                                             \
        }                                                                                    \
        for (; i < n; i++) {                                                                 \
            float u = shift_clamp1(ONEX(x + i), xlo, xr, cx);                                \
            float v = shift_clamp1(ONEY(y + i), ylo, yr, cy);                                \
            float kv = v * k32, w = u / kv;                                                  \
            wlo = w < wlo ? w : wlo;                                                         \
            whi = w > whi ? w : whi;                                                         \
            vf wv = vsplat(w > 1e-30f ? (w < 3e38f ? w : 3e38f) : 1e-30f);                   \
            su += u;                                                                         \
            sv += v;                                                                         \
            se += u * vlogf(wv)[0] + (kv - u);                                               \
        }                                                                                    \
        /* a ratio that under- or overflowed float32 is the numpy kernel's float64 fallback */ \
        if (!(wlo >= 1e-30f) || !(whi <= 3e38f)) return 0;                                   \
        out[KSU] = su;                                                                       \
        out[KSV] = sv;                                                                       \
        out[KE] = se;                                                                        \
        out[KK] = k32;                                                                       \
        return isfinite(su) && isfinite(sv) && isfinite(se);                                 \
    }

KL_PASS(kl_hh, uint16_t, load_f16, one_f16, uint16_t, load_f16, one_f16)
KL_PASS(kl_hf, uint16_t, load_f16, one_f16, float, load_f32, one_f32)
KL_PASS(kl_fh, float, load_f32, one_f32, uint16_t, load_f16, one_f16)
KL_PASS(kl_ff, float, load_f32, one_f32, float, load_f32, one_f32)
