/* The fixed route's hot loop in plain C: the yardstick of `make bench` (docs/model.md §10).
 *
 * Semi-implicit Euler on the push-only penalty drop with the forward-mode tangent, written
 * exactly as crates/ferromotion-core/src/integrate/fixed.rs::euler_with_tangent writes it
 * (same operations in the same order), so both produce the same bits and the benchmark
 * compares code generation, not algorithms:
 *
 *   f = -k·y - c·v;  (acc, a_y, a_v) = y < 0 && f > 0 ? (f/m - g, -k/m, -c/m) : (-g, 0, 0)
 *   v += dt·acc;  y += dt·v;  J <- A·J  with  A = [[1 + dt²·a_y, dt·(1 + dt·a_v)], [dt·a_y, 1 + dt·a_v]]
 *
 * Built by scripts/bench.sh with `gcc -O2` (no -march, no -ffast-math: baseline x86-64, no
 * FMA contraction, as rustc's default target). Prints one JSON object on stdout.
 *
 *   fixed_loop K DT [tight|literal] [SAMPLES]   (tight, the default: flight steps specialised)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The docs/model.md §1 drop: h = 1 m from rest, T = 0.8 s, g = 9.81 m/s², m = 1 kg, zeta = 0.1606. */
static volatile double HEIGHT = 1.0, VELOCITY = 0.0, T_FINAL = 0.8, GRAVITY = 9.81, MASS = 1.0, ZETA = 0.1606;

typedef struct { double y, v, j00, j01, j10, j11; } Out;

static Out rollout(double k, double c, double inv_m, double g, double dt, long n, double y, double v) {
    double j00 = 1.0, j01 = 0.0, j10 = 0.0, j11 = 1.0;
    for (long i = 0; i < n; i++) {
        double f = -k * y - c * v;
        double acc, a_y, a_v;
        if (y < 0.0 && f > 0.0) {
            acc = f * inv_m - g;
            a_y = -k * inv_m;
            a_v = -c * inv_m;
        } else {
            acc = -g;
            a_y = 0.0;
            a_v = 0.0;
        }
        v += dt * acc;
        y += dt * v;
        double d10 = j10 + dt * (a_y * j00 + a_v * j10);
        double d11 = j11 + dt * (a_y * j01 + a_v * j11);
        j00 += dt * d10;
        j01 += dt * d11;
        j10 = d10;
        j11 = d11;
    }
    Out o = {y, v, j00, j01, j10, j11};
    return o;
}

/* The same map and tangent as a C programmer would write it: in flight (no force) the step's
 * Jacobian is [[1, dt], [0, 1]], so the tangent update is J00 += dt·J10, J01 += dt·J11 (the
 * general update would only add dt·(0·J..) terms, which change nothing for finite tangents
 * started from the identity). Same bits as `rollout`; the yardstick of docs/model.md §10. */
static Out rollout_tight(double k, double c, double inv_m, double g, double dt, long n, double y, double v) {
    double j00 = 1.0, j01 = 0.0, j10 = 0.0, j11 = 1.0;
    for (long i = 0; i < n; i++) {
        double f = -k * y - c * v;
        if (y < 0.0 && f > 0.0) {
            double a_y = -k * inv_m, a_v = -c * inv_m;
            v += dt * (f * inv_m - g);
            y += dt * v;
            double d10 = j10 + dt * (a_y * j00 + a_v * j10);
            double d11 = j11 + dt * (a_y * j01 + a_v * j11);
            j00 += dt * d10;
            j01 += dt * d11;
            j10 = d10;
            j11 = d11;
        } else {
            v += dt * -g;
            y += dt * v;
            j00 += dt * j10;
            j01 += dt * j11;
        }
    }
    Out o = {y, v, j00, j01, j10, j11};
    return o;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef Out (*Loop)(double, double, double, double, double, long, double, double);

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s K DT [tight|literal] [SAMPLES]\n", argv[0]);
        return 2;
    }
    double k = strtod(argv[1], NULL), dt = strtod(argv[2], NULL);
    int literal = argc > 3 && strcmp(argv[3], "literal") == 0;
    int samples = argc > 4 ? atoi(argv[4]) : 9;
    if (samples < 1 || samples > 1000) samples = 9;
    Loop loop = literal ? rollout : rollout_tight;
    long n = lround(T_FINAL / dt);
    double c = 2.0 * ZETA * sqrt(k * MASS);
    double inv_m = 1.0 / MASS;
    volatile double sink = 0.0;
    Out o = loop(k, c, inv_m, GRAVITY, dt, n, HEIGHT, VELOCITY);
    /* Rollouts per sample: enough for about 0.1 s. */
    double t0 = now();
    sink += loop(k, c, inv_m, GRAVITY, dt, n, HEIGHT, VELOCITY).j10;
    double once = now() - t0;
    long reps = once > 0.1 ? 1 : (long)(0.1 / (once > 1e-9 ? once : 1e-9)) + 1;
    double ns[1000];
    for (int s = 0; s < samples; s++) {
        t0 = now();
        for (long r = 0; r < reps; r++) {
            /* volatile loads each time: the compiler cannot hoist the rollout out of the loop */
            sink += loop(k, c, inv_m, GRAVITY, dt, n, HEIGHT, VELOCITY).j10;
        }
        ns[s] = (now() - t0) * 1e9 / ((double)reps * (double)n);
    }
    double best = ns[0];
    for (int s = 1; s < samples; s++) best = ns[s] < best ? ns[s] : best;
    qsort(ns, samples, sizeof ns[0], cmp);
    printf("{\"impl\": \"%s\", \"k\": %.17g, \"dt\": %.17g, \"steps\": %ld, \"samples\": %d, \"reps\": %ld, "
           "\"ns_per_step\": %.6g, \"ns_per_step_median\": %.6g, "
           "\"state\": [%.17g, %.17g], \"jacobian\": [%.17g, %.17g, %.17g, %.17g]}\n",
           literal ? "c-literal" : "c", k, dt, n, samples, reps, best, ns[samples / 2], o.y, o.v, o.j00,
           o.j01, o.j10, o.j11);
    return sink == 12345.678 ? 1 : 0;
}
