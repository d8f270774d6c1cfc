/*
 * numaspark membench: the memory system, measured from inside a numactl binding.
 *
 *   membench bandwidth ELEMENTS REPEAT   STREAM's four kernels (copy, scale, add, triad) over
 *                                        three arrays of ELEMENTS doubles, OpenMP threads
 *                                        (OMP_NUM_THREADS); best of REPEAT, in MB/s (10^6 B/s),
 *                                        bytes counted as STREAM counts them.
 *   membench latency BYTES LOADS         a dependent pointer chase through a random cycle of
 *                                        64-byte slots in a BYTES buffer: ns per load.
 *
 * Memory is first touched by the threads that use it, so under
 * `numactl --cpunodebind=I --membind=J` it lives on node J. Prints one JSON object.
 * Written after McCalpin's STREAM (the kernels and the byte counting) and the
 * usual lmbench-style chase; it is ours because neither ships as a library.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bandwidth(long n, int repeat) {
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)),
           *c = malloc(n * sizeof(double));
    if (!a || !b || !c) { fprintf(stderr, "membench: cannot allocate 3 x %ld doubles\n", n); return 1; }
    long j;
#pragma omp parallel for schedule(static)
    for (j = 0; j < n; j++) { a[j] = 1.0; b[j] = 2.0; c[j] = 0.0; }
    const double scalar = 3.0;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int k = 0; k < repeat; k++) {
        double t[5];
        t[0] = now();
#pragma omp parallel for schedule(static)
        for (j = 0; j < n; j++) c[j] = a[j];
        t[1] = now();
#pragma omp parallel for schedule(static)
        for (j = 0; j < n; j++) b[j] = scalar * c[j];
        t[2] = now();
#pragma omp parallel for schedule(static)
        for (j = 0; j < n; j++) c[j] = a[j] + b[j];
        t[3] = now();
#pragma omp parallel for schedule(static)
        for (j = 0; j < n; j++) a[j] = b[j] + scalar * c[j];
        t[4] = now();
        for (int i = 0; i < 4; i++) if (t[i + 1] - t[i] < best[i]) best[i] = t[i + 1] - t[i];
    }
    const double bytes[4] = {2.0 * 8 * n, 2.0 * 8 * n, 3.0 * 8 * n, 3.0 * 8 * n};
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    double check = 0.0;
    for (j = 0; j < n; j += n / 16 + 1) check += a[j];  /* keeps the kernels from being dropped */
    printf("{\"kind\": \"bandwidth\", \"elements\": %ld, \"threads\": %d, \"repeat\": %d, "
           "\"copy_mbps\": %.1f, \"scale_mbps\": %.1f, \"add_mbps\": %.1f, \"triad_mbps\": %.1f, "
           "\"check\": %.1f}\n", n, threads, repeat, bytes[0] / best[0] / 1e6,
           bytes[1] / best[1] / 1e6, bytes[2] / best[2] / 1e6, bytes[3] / best[3] / 1e6, check);
    free(a); free(b); free(c);
    return 0;
}

static int latency(long bytes, long loads) {
    const long slot = 64 / sizeof(void *);            /* one pointer per 64-byte line */
    long slots = bytes / 64;
    if (slots < 2) { fprintf(stderr, "membench: buffer too small\n"); return 1; }
    void **buffer = malloc(slots * 64);
    long *order = malloc(slots * sizeof(long));
    if (!buffer || !order) { fprintf(stderr, "membench: cannot allocate %ld bytes\n", bytes); return 1; }
    for (long i = 0; i < slots; i++) order[i] = i;
    uint64_t state = 0x9E3779B97F4A7C15ull;           /* xorshift: a fixed random cycle */
    for (long i = slots - 1; i > 0; i--) {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
        long k = (long)(state % (uint64_t)(i + 1));
        long tmp = order[i]; order[i] = order[k]; order[k] = tmp;
    }
    for (long i = 0; i < slots; i++)
        buffer[order[i] * slot] = &buffer[order[(i + 1) % slots] * slot];
    void **p = &buffer[order[0] * slot];
    for (long i = 0; i < slots; i++) p = (void **)*p;  /* warm the TLB and the page tables */
    double start = now();
    for (long i = 0; i < loads; i++) p = (void **)*p;
    double elapsed = now() - start;
    printf("{\"kind\": \"latency\", \"bytes\": %ld, \"loads\": %ld, \"ns_per_load\": %.2f, "
           "\"end\": %d}\n", bytes, loads, elapsed / loads * 1e9, p != NULL);
    free(buffer); free(order);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "bandwidth") == 0) return bandwidth(atol(argv[2]), atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "latency") == 0) return latency(atol(argv[2]), atol(argv[3]));
    fprintf(stderr, "usage: membench bandwidth ELEMENTS REPEAT | membench latency BYTES LOADS\n");
    return 2;
}
