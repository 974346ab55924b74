/* dcurl's API (include/dcurl.h) against curlpow's libdcurl.so. One test per argv[1]. */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

#include "check.h"
#include "dcurl.h"

/* dcurl's input is exactly 2673 bytes, not NUL-terminated: keep it so (in exact-size heap
 * buffers, so that valgrind or ASan would see a read past the end). */
static int8_t *exact_input(uint64_t seed)
{
    int8_t *p = malloc(TX_TRYTES);
    CHECK(p != NULL, "malloc");
    random_trytes(seed, (char *) p);
    return p;
}

static void pow_once(uint64_t seed, int mwm, int threads)
{
    int8_t *in = exact_input(seed);
    int8_t *out = dcurl_entry(in, mwm, threads);
    check_pow((const char *) in, (const char *) out, mwm);
    free(out);
    free(in);
}

static void test_before_init(void)
{
    dcurl_destroy(); /* harmless without init */
    int8_t *in = exact_input(1);
    CHECK(dcurl_entry(in, 9, 0) == NULL, "entry before init must fail");
    CHECK(strstr(curlpow_last_error(), "dcurl_init") != NULL, "message: %s", curlpow_last_error());
    free(in);
}

static void test_cycles(void)
{
    char host[] = "localhost";
    dcurl_config config = {host};
    for (int round = 0; round < 3; round++) {
        CHECK(dcurl_init(round == 1 ? &config : NULL), "init %d", round);
        CHECK(dcurl_init(NULL), "second init %d is harmless", round);
        pow_once(100 + round, 9, 0);
        pow_once(200 + round, 5, 1);
        dcurl_destroy();
        int8_t *in = exact_input(300 + round);
        CHECK(dcurl_entry(in, 9, 0) == NULL, "entry after destroy must fail");
        free(in);
        dcurl_destroy(); /* twice is harmless */
    }
    /* Input longer than 2673 bytes: dcurl reads the first 2673 and so does curlpow. */
    CHECK(dcurl_init(NULL), "init");
    char *longer = malloc(TX_TRYTES + 100 + 1);
    random_trytes(7, longer);
    memset(longer + TX_TRYTES, 'A', 100);
    longer[TX_TRYTES + 100] = 0;
    int8_t *out = dcurl_entry((int8_t *) longer, 9, 0);
    check_pow(longer, (const char *) out, 9);
    free(out);
    free(longer);
    dcurl_destroy();
}

#define THREADS 10

typedef struct {
    int index;
    int8_t *in;
    int8_t *out;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    /* The threads argument varies: 0 (the pool), 1, 2, and more than the pool. */
    j->out = dcurl_entry(j->in, 9, j->index % 4 == 3 ? 64 : j->index % 4);
    return NULL;
}

static void test_threads(void)
{
    CHECK(dcurl_init(NULL), "init");
    pthread_t t[THREADS];
    job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){i, exact_input(1000 + i), NULL};
        CHECK(pthread_create(&t[i], NULL, run_job, &jobs[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
    for (int i = 0; i < THREADS; i++) {
        check_pow((const char *) jobs[i].in, (const char *) jobs[i].out, 9);
        for (int k = 0; k < i; k++)
            CHECK(memcmp(jobs[i].out, jobs[k].out, TX_TRYTES) != 0, "distinct results");
    }
    for (int i = 0; i < THREADS; i++) {
        free(jobs[i].out);
        free(jobs[i].in);
    }
    dcurl_destroy();
}

static void expect_null(int8_t *in, int mwm, int threads, const char *needle, const char *what)
{
    int8_t *out = dcurl_entry(in, mwm, threads);
    CHECK(out == NULL, "%s must fail", what);
    CHECK(strstr(curlpow_last_error(), needle) != NULL, "%s: message %s lacks %s", what,
          curlpow_last_error(), needle);
}

static void test_bad_input(void)
{
    CHECK(dcurl_init(NULL), "init");
    int8_t *in = exact_input(42);
    expect_null(NULL, 9, 0, "NULL", "NULL trytes");
    expect_null(in, -1, 0, "-1", "mwm -1");
    expect_null(in, 244, 0, "244", "mwm 244");
    expect_null(in, INT_MIN, 0, "out of range", "mwm INT_MIN");
    expect_null(in, INT_MAX, 0, "out of range", "mwm INT_MAX");
    /* threads <= 0 is dcurl's default (the whole pool), not an error. */
    for (int t = -1; t >= -2; t--) {
        int8_t *o = dcurl_entry(in, 9, t);
        check_pow((const char *) in, (const char *) o, 9);
        free(o);
    }
    /* Short: a NUL after 100 trytes (nothing after it is read). */
    int8_t *short_in = malloc(101);
    memcpy(short_in, in, 100);
    short_in[100] = 0;
    expect_null(short_in, 9, 0, "after 100 trytes", "short input");
    free(short_in);
    expect_null((int8_t *) "", 9, 0, "after 0 trytes", "empty input");
    /* Non-tryte characters: lowercase, a digit other than 9, a high byte, a newline. */
    const char bad[] = {'a', '1', (char) 0xC3, '\n'};
    for (size_t k = 0; k < sizeof bad; k++) {
        in[500] = (int8_t) bad[k];
        expect_null(in, 9, 0, "column 501", "non-tryte input");
    }
    in[500] = 'A';
    /* After all that, a good call still works. */
    int8_t *out = dcurl_entry(in, 9, 0);
    check_pow((const char *) in, (const char *) out, 9);
    free(out);
    free(in);
    dcurl_destroy();
}

typedef struct {
    int8_t *in;
    int8_t *out;
    double returned_at;
} long_job;

static void *run_long(void *arg)
{
    long_job *j = arg;
    j->out = dcurl_entry(j->in, 60, 0); /* 3^60 nonces: never finishes */
    j->returned_at = now_seconds();
    return NULL;
}

/* dcurl_destroy during a search that would never end: the search returns NULL promptly. */
static void test_destroy_cancels(void)
{
    CHECK(dcurl_init(NULL), "init");
    long_job j = {exact_input(9), NULL, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, run_long, &j) == 0, "pthread_create");
    sleep_ms(300);
    double t0 = now_seconds();
    dcurl_destroy();
    double destroyed = now_seconds();
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    CHECK(j.out == NULL, "a destroyed search returns NULL");
    printf("destroy took %.1f ms; the search returned %.1f ms after destroy began\n",
           (destroyed - t0) * 1e3, (j.returned_at - t0) * 1e3);
    CHECK(j.returned_at - t0 < 2.0, "the search returned %.3f s after destroy", j.returned_at - t0);
    free(j.in);
    /* And the library works again after it. */
    CHECK(dcurl_init(NULL), "init after destroy");
    pow_once(10, 9, 0);
    dcurl_destroy();
}

/* Init is quiet (the Rust side checks stderr) and a warm init (after destroy: devices found by
 * the first init are reused) is fast. */
static void test_warm_init(void)
{
    double t0 = now_seconds();
    CHECK(dcurl_init(NULL), "cold init");
    double cold = now_seconds() - t0;
    pow_once(11, 9, 0);
    dcurl_destroy();
    double best = 1e9, worst = 0;
    for (int round = 0; round < 5; round++) {
        double t = now_seconds();
        CHECK(dcurl_init(NULL), "warm init %d", round);
        double took = now_seconds() - t;
        best = took < best ? took : best;
        worst = took > worst ? took : worst;
        pow_once(12 + round, 5, 0);
        dcurl_destroy();
    }
    printf("init: cold %.1f ms, warm %.2f to %.2f ms over 5 cycles\n", cold * 1e3, best * 1e3,
           worst * 1e3);
    CHECK(best <= 0.020, "warm init took %.1f ms (at most 20 ms)", best * 1e3);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *name = argc > 1 ? argv[1] : "";
    if (!strcmp(name, "before_init"))
        test_before_init();
    else if (!strcmp(name, "cycles"))
        test_cycles();
    else if (!strcmp(name, "threads"))
        test_threads();
    else if (!strcmp(name, "bad_input"))
        test_bad_input();
    else if (!strcmp(name, "destroy_cancels"))
        test_destroy_cancels();
    else if (!strcmp(name, "warm_init"))
        test_warm_init();
    else {
        fprintf(stderr, "unknown test %s\n", name);
        return 2;
    }
    printf("ok %s\n", name);
    return 0;
}
