/* Do the upper halves of the YMM registers survive what the kernel does between two
 * instructions of a process: a context switch (switch: sched_yield), a timer's preemption
 * (spin) and a signal whose handler writes them (signal)? Each round loads a pattern into
 * ymm0-15, crosses that event inside one asm block, stores the registers and compares. Under
 * QEMU's emulation the kernel's XSAVE/XRSTOR is QEMU's too (issue 57's hunt for the JVMs'
 * crash with AVX). Prints one line; exits 1 when a register changed, 0 otherwise, and says so
 * when the CPU has no AVX2 (the guest's default model). ``broken`` sets every bit of ymm7
 * between the load and the store, to show that a change is seen (it must exit 1).
 *     ymmcheck switch|spin|signal|broken SECONDS SEED
 * Built without -mavx2: the compiler emits no AVX of its own, only the asm below does. */
#include <cpuid.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint8_t in[16 * 32] __attribute__((aligned(32)));
static uint8_t out[16 * 32] __attribute__((aligned(32)));
static uint8_t junk[32] __attribute__((aligned(32)));

#define R(n, off) "vmovdqu " #off "(%0),%%ymm" #n "\n"
#define W(n, off) "vmovdqu %%ymm" #n "," #off "(%1)\n"
#define LOAD R(0, 0) R(1, 32) R(2, 64) R(3, 96) R(4, 128) R(5, 160) R(6, 192) R(7, 224) \
    R(8, 256) R(9, 288) R(10, 320) R(11, 352) R(12, 384) R(13, 416) R(14, 448) R(15, 480)
#define STORE W(0, 0) W(1, 32) W(2, 64) W(3, 96) W(4, 128) W(5, 160) W(6, 192) W(7, 224) \
    W(8, 256) W(9, 288) W(10, 320) W(11, 352) W(12, 384) W(13, 416) W(14, 448) W(15, 480)
#define VECTORS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", \
    "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

static void clobber(int sig) { /* the handler's own use of ymm0, ymm5, ymm15 */
    (void)sig;
    __asm__ volatile("vmovdqu (%0),%%ymm0\n vmovdqu (%0),%%ymm5\n vmovdqu (%0),%%ymm15\n"
                     :: "r"(junk) : "xmm0", "xmm5", "xmm15", "memory");
}

static void round_trip(const char *mode, pid_t pid) {
    if (!strcmp(mode, "switch")) { /* syscall 24: sched_yield */
        __asm__ volatile(LOAD "mov $24,%%eax\n syscall\n" STORE
                         :: "r"(in), "r"(out) : "rax", "rcx", "r11", VECTORS, "memory");
    } else if (!strcmp(mode, "signal")) { /* syscall 62: kill(pid, SIGUSR1) */
        __asm__ volatile(LOAD "mov $62,%%eax\n mov %2,%%edi\n mov $10,%%esi\n syscall\n" STORE
                         :: "r"(in), "r"(out), "r"(pid)
                         : "rax", "rcx", "r11", "rdi", "rsi", VECTORS, "memory");
    } else if (!strcmp(mode, "broken")) {
        __asm__ volatile(LOAD "vpcmpeqd %%ymm7,%%ymm7,%%ymm7\n" STORE
                         :: "r"(in), "r"(out) : VECTORS, "memory");
    } else { /* spin long enough for the timer to preempt now and then */
        __asm__ volatile(LOAD "mov $200000,%%ecx\n 1: dec %%ecx\n jnz 1b\n" STORE
                         :: "r"(in), "r"(out) : "rcx", VECTORS, "memory");
    }
}

int main(int argc, char **argv) {
    unsigned a, b, c, d;
    const char *mode = argc > 1 ? argv[1] : "switch";
    double seconds = argc > 2 ? atof(argv[2]) : 10;
    unsigned seed = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
    __cpuid_count(7, 0, a, b, c, d);
    if (!(b & (1u << 5))) {
        printf("ymmcheck %s: no AVX2 on this CPU\n", mode);
        return 0;
    }
    memset(junk, 0xAB, sizeof junk);
    signal(SIGUSR1, clobber);
    long rounds = 0, wrong = 0, upper = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < (int)sizeof in; i++) in[i] = (uint8_t)(seed * 131 + rounds * 7 + i);
        round_trip(mode, getpid());
        if (memcmp(in, out, sizeof in)) {
            wrong++;
            for (int r = 0; r < 16; r++) upper += memcmp(in + 32 * r + 16, out + 32 * r + 16, 16) != 0;
        }
        rounds++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    printf("ymmcheck %s: %ld rounds, %ld with a register changed (%ld upper halves)\n", mode,
           rounds, wrong, upper);
    return wrong ? 1 : 0;
}
