/* Shared by the C tests: a failing check names its line and the library's last error, exits 1. */
#ifndef CURLPOW_TEST_CHECK_H_
#define CURLPOW_TEST_CHECK_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "curlpow.h"

#define TX_TRYTES 2673
#define NONCE_TRYTES 27

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, " (last error: %s)\n", curlpow_last_error());           \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static const char ALPHABET[] = "9ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* 2673 pseudo-random trytes (xorshift64), no NUL written. */
static void random_trytes(uint64_t seed, char *out)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull | 1;
    for (int i = 0; i < TX_TRYTES; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        out[i] = ALPHABET[s % 27];
    }
}

/* Balanced value -13..13 of a tryte character. */
static int tryte_value(char c)
{
    if (c == '9')
        return 0;
    int v = c - 'A' + 1;
    return v <= 13 ? v : v - 27;
}

/* Trailing zero trits of an 81-tryte hash. */
static int trailing_zero_trits(const char *hash)
{
    int zeros = 0;
    for (int i = 80; i >= 0; i--) {
        int v = tryte_value(hash[i]);
        int trits[3];
        for (int k = 0; k < 3; k++) {
            int r = ((v % 3) + 3) % 3;
            trits[k] = r == 2 ? -1 : r;
            v = (v - trits[k]) / 3;
        }
        for (int k = 2; k >= 0; k--) {
            if (trits[k] != 0)
                return zeros;
            zeros++;
        }
    }
    return zeros;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long) (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* For the Rust side, which checks it again with curlpow's scalar reference. */
static void print_result(int mwm, const char *in, const char *out)
{
    printf("RESULT %d %.*s %.*s\n", mwm, TX_TRYTES, in, TX_TRYTES, out);
}

/* A PoW result: NUL-terminated 2673 trytes, the input's outside the nonce, weight >= mwm (hash
 * by curlpow_digest, the library's scalar reference); printed for the Rust side. */
static void check_pow(const char *in, const char *out, int mwm)
{
    CHECK(out != NULL, "no result");
    CHECK(strlen(out) == TX_TRYTES, "result length %zu", strlen(out));
    CHECK(memcmp(in, out, TX_TRYTES - NONCE_TRYTES) == 0, "a tryte outside the nonce changed");
    char hash[CURLPOW_HASH_BUFFER];
    CHECK(curlpow_digest(out, hash) == CURLPOW_OK, "digest");
    CHECK(trailing_zero_trits(hash) >= mwm, "weight %d < mwm %d", trailing_zero_trits(hash), mwm);
    print_result(mwm, in, out);
}

#endif
