/* ccurl's API (include/ccurl.h) against curlpow's libccurl.so. One test per argv[1]. */
#include <limits.h>
#include <pthread.h>

#include "ccurl.h"
#include "check.h"

/* ccurl's callers pass NUL-terminated strings (PyOTA, node-ffi, cgo). */
static char *input(uint64_t seed)
{
    char *p = malloc(TX_TRYTES + 1);
    CHECK(p != NULL, "malloc");
    random_trytes(seed, p);
    p[TX_TRYTES] = 0;
    return p;
}

static void pow_once(uint64_t seed, int mwm)
{
    char *in = input(seed);
    char *out = ccurl_pow(in, mwm);
    check_pow(in, out, mwm);
    free(out);
    free(in);
}

/* PyOTA never calls ccurl_pow_init: the first ccurl_pow builds the engine. */
static void test_lazy(void)
{
    CHECK(!curlpow_initialized(), "nothing built yet");
    pow_once(1, 9);
    CHECK(curlpow_initialized(), "built by ccurl_pow");
    ccurl_pow_finalize();
    CHECK(!curlpow_initialized(), "finalized");
    pow_once(2, 9); /* and again after finalize */
    ccurl_pow_finalize();
}

static void test_cycles(void)
{
    for (int round = 0; round < 3; round++) {
        CHECK(ccurl_pow_init() == 0, "init %d", round);
        CHECK(ccurl_pow_init() == 0, "second init %d is harmless", round);
        ccurl_pow_set_loop_count(32); /* accepted, no effect */
        ccurl_pow_set_offset(7);
        pow_once(10 + round, 9);
        ccurl_pow_finalize();
        ccurl_pow_finalize(); /* twice is harmless */
    }
    ccurl_pow_interrupt(); /* nothing in flight: harmless */
}

/* The digest of argv[2] (a transaction), printed for the Rust side to compare with a vector. */
static void test_digest(const char *tx)
{
    char *h = ccurl_digest_transaction((char *) tx);
    CHECK(h != NULL, "digest");
    CHECK(strlen(h) == 81, "hash length %zu", strlen(h));
    printf("HASH %s\n", h);
    free(h);
}

#define THREADS 10

typedef struct {
    char *in;
    char *out;
    int mwm;
    double returned_at;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    j->out = ccurl_pow(j->in, j->mwm);
    j->returned_at = now_seconds();
    return NULL;
}

static void test_threads(void)
{
    CHECK(ccurl_pow_init() == 0, "init");
    pthread_t t[THREADS];
    job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){input(100 + i), NULL, 9, 0};
        CHECK(pthread_create(&t[i], NULL, run_job, &jobs[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
    for (int i = 0; i < THREADS; i++) {
        check_pow(jobs[i].in, jobs[i].out, 9);
        free(jobs[i].out);
        free(jobs[i].in);
    }
    ccurl_pow_finalize();
}

/* Three searches that would never end (MWM 60), one interrupt: all return NULL promptly, and a
 * call started afterwards is not cancelled. */
static void test_interrupt(void)
{
    CHECK(ccurl_pow_init() == 0, "init");
    enum { N = 3 };
    pthread_t t[N];
    job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (job){input(200 + i), NULL, 60, 0};
        CHECK(pthread_create(&t[i], NULL, run_job, &jobs[i]) == 0, "pthread_create");
    }
    sleep_ms(300);
    double t0 = now_seconds();
    ccurl_pow_interrupt();
    double worst = 0;
    for (int i = 0; i < N; i++) {
        CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
        CHECK(jobs[i].out == NULL, "an interrupted search returns NULL");
        double late = jobs[i].returned_at - t0;
        worst = late > worst ? late : worst;
        free(jobs[i].in);
    }
    printf("interrupt: the last of %d searches returned %.1f ms after ccurl_pow_interrupt\n", N,
           worst * 1e3);
    CHECK(worst < 2.0, "returned %.3f s after the interrupt", worst);
    pow_once(300, 9); /* a later call is not affected */
    ccurl_pow_finalize();
}

static void expect_null(char *in, int mwm, const char *needle, const char *what)
{
    char *out = ccurl_pow(in, mwm);
    CHECK(out == NULL, "%s must fail", what);
    CHECK(strstr(curlpow_last_error(), needle) != NULL, "%s: message %s lacks %s", what,
          curlpow_last_error(), needle);
}

static void test_bad_input(void)
{
    char *in = input(42);
    expect_null(NULL, 9, "NULL", "NULL trytes");
    expect_null(in, -1, "-1", "mwm -1");
    expect_null(in, 244, "244", "mwm 244");
    expect_null(in, INT_MIN, "out of range", "mwm INT_MIN");
    expect_null("ABC", 9, "after 3 trytes", "short input");
    in[0] = 'z';
    expect_null(in, 9, "column 1", "lowercase");
    CHECK(ccurl_digest_transaction(in) == NULL, "digest of bad input");
    CHECK(ccurl_digest_transaction(NULL) == NULL, "digest of NULL");
    CHECK(ccurl_digest_transaction("ABC") == NULL, "digest of short input");
    in[0] = 'A';
    char *out = ccurl_pow(in, 9);
    check_pow(in, out, 9);
    free(out);
    free(in);
    ccurl_pow_finalize();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *name = argc > 1 ? argv[1] : "";
    if (!strcmp(name, "lazy"))
        test_lazy();
    else if (!strcmp(name, "cycles"))
        test_cycles();
    else if (!strcmp(name, "digest") && argc > 2)
        test_digest(argv[2]);
    else if (!strcmp(name, "threads"))
        test_threads();
    else if (!strcmp(name, "interrupt"))
        test_interrupt();
    else if (!strcmp(name, "bad_input"))
        test_bad_input();
    else {
        fprintf(stderr, "unknown test %s\n", name);
        return 2;
    }
    printf("ok %s\n", name);
    return 0;
}
