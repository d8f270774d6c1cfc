/* Cross-modifying code as HotSpot does it, checked for torn instructions (issue 57's JVM
 * crash in the guest: SIGSEGV and SIGILL at pcs inside C1-compiled code, with AVX or without).
 *
 * A page of RWX memory holds SITES small functions. Each starts with a 5-byte instruction that
 * one thread (the patcher) switches, over and over, between two forms while the other threads
 * (the executors) call the functions:
 *     A: mov eax, VA(i); ret                        -> returns VA(i)
 *     B: jmp +11 (to: mov eax, VB(i); ret)          -> returns VB(i)
 * The patcher writes as HotSpot's NativeGeneralJump::replace_mt_safe does (C1's patching of
 * unresolved fields and classes, and of a method's entry when it is made not entrant): first
 * a "jmp to self" over the first 4 bytes in one aligned 4-byte store, then the fifth byte, then
 * the first 4 bytes of the new form. A CPU running the function sees A, a spin, or B, never a
 * mixture. An executor that gets any other value, or a SIGSEGV or SIGILL, has run a torn
 * instruction: on real hardware that does not happen. ``broken`` writes the first byte alone,
 * waits, then the rest: that tears on any CPU and must be seen (exit 1).
 *     xmodcheck patch|broken SECONDS EXECUTORS
 * Prints one line; exits 1 when an executor ran a torn instruction, 0 otherwise. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SITES 64
#define SLOT 64 /* one cache line per function; the site at its start, 4-byte aligned */
#define ALT 16  /* where form B jumps to */
#define MAX_EXECUTORS 16

static uint8_t *code;
static int broken;
static volatile int stop;
static uint64_t toggles;

struct executor {
    pthread_t thread;
    uint64_t calls, wrong, segv, ill;
    sigjmp_buf back;
};
static __thread struct executor *self;

/* VA(i) as a rel32 points far outside the page: form B's opcode over A's bytes jumps there */
static uint32_t va(int i) { return 0x7e000000u + (uint32_t)i; }
static uint32_t vb(int i) { return 0x2200u + (uint32_t)i; }

static void form_a(int i, uint8_t out[5]) {
    uint32_t v = va(i);
    out[0] = 0xb8; /* mov eax, imm32 */
    memcpy(out + 1, &v, 4);
}

static void form_b(uint8_t out[5]) {
    int32_t rel = ALT - 5;
    out[0] = 0xe9; /* jmp rel32 */
    memcpy(out + 1, &rel, 4);
}

static void lay_out(void) {
    for (int i = 0; i < SITES; i++) {
        uint8_t *slot = code + i * SLOT, a[5];
        uint32_t v = vb(i);
        form_a(i, a);
        memcpy(slot, a, 5);
        slot[5] = 0xc3; /* ret */
        slot[ALT] = 0xb8;
        memcpy(slot + ALT + 1, &v, 4);
        slot[ALT + 5] = 0xc3;
    }
}

static void patch(uint8_t *site, const uint8_t next[5]) {
    uint32_t spin = 0xfeebfeebu, head; /* eb fe eb fe: jmp to self, twice */
    memcpy(&head, next, 4);
    if (broken) { /* the first byte alone, then a wait: a torn instruction on any CPU */
        __atomic_store_n(site, next[0], __ATOMIC_RELEASE);
        for (volatile int k = 0; k < 20000; k++) {
        }
        for (int b = 1; b < 5; b++) __atomic_store_n(site + b, next[b], __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n((uint32_t *)site, spin, __ATOMIC_RELEASE);
    __atomic_store_n(site + 4, next[4], __ATOMIC_RELEASE);
    __atomic_store_n((uint32_t *)site, head, __ATOMIC_RELEASE);
}

static void *patcher(void *arg) {
    uint8_t b[5];
    (void)arg;
    form_b(b);
    for (int round = 0; !stop; round++) {
        for (int i = 0; i < SITES && !stop; i++) {
            uint8_t a[5];
            form_a(i, a);
            patch(code + i * SLOT, round % 2 ? a : b);
            toggles++;
        }
    }
    return NULL;
}

static void on_fault(int sig) {
    if (sig == SIGSEGV) self->segv++;
    else self->ill++;
    siglongjmp(self->back, 1);
}

static void *execute(void *arg) {
    self = arg;
    for (volatile int i = 0; !stop; i = (i + 1) % SITES) {
        if (sigsetjmp(self->back, 1)) continue; /* a fault: counted by on_fault */
        uint32_t (*f)(void) = (uint32_t(*)(void))(code + i * SLOT);
        uint32_t got = f();
        self->calls++;
        if (got != va(i) && got != vb(i)) self->wrong++;
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "patch";
    double seconds = argc > 2 ? atof(argv[2]) : 10;
    int n = argc > 3 ? atoi(argv[3]) : 2;
    struct executor ex[MAX_EXECUTORS];
    pthread_t writer;
    struct sigaction sa;
    if (n < 1 || n > MAX_EXECUTORS || seconds <= 0) {
        fprintf(stderr, "usage: xmodcheck patch|broken SECONDS EXECUTORS (1 to %d)\n",
                MAX_EXECUTORS);
        return 2;
    }
    broken = !strcmp(mode, "broken");
    code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0);
    if (code == MAP_FAILED) {
        perror("xmodcheck: mmap RWX");
        return 2;
    }
    lay_out();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fault;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGILL, &sa, NULL);
    memset(ex, 0, sizeof ex);
    for (int k = 0; k < n; k++) pthread_create(&ex[k].thread, NULL, execute, &ex[k]);
    pthread_create(&writer, NULL, patcher, NULL);
    struct timespec nap = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&nap, NULL);
    stop = 1;
    pthread_join(writer, NULL);
    uint64_t calls = 0, wrong = 0, segv = 0, ill = 0;
    for (int k = 0; k < n; k++) {
        pthread_join(ex[k].thread, NULL);
        calls += ex[k].calls, wrong += ex[k].wrong, segv += ex[k].segv, ill += ex[k].ill;
    }
    uint64_t torn = wrong + segv + ill;
    printf("xmodcheck %s: %llu patches, %llu calls on %d executors: %llu torn (%llu wrong "
           "values, %llu SIGSEGV, %llu SIGILL)\n",
           mode, (unsigned long long)toggles, (unsigned long long)calls, n,
           (unsigned long long)torn, (unsigned long long)wrong, (unsigned long long)segv,
           (unsigned long long)ill);
    return torn ? 1 : 0;
}
