/* curlpow's own API (include/curlpow.h) against libdcurl.so. One test per argv[1]. */
#include <limits.h>
#include <pthread.h>
#include <stddef.h>

#include "check.h"

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
/* The layouts the library was built with (LP64); ffi/src/native.rs asserts the same. */
_Static_assert(sizeof(curlpow_options) == 48, "curlpow_options layout");
_Static_assert(offsetof(curlpow_options, devices) == 24, "curlpow_options layout");
_Static_assert(offsetof(curlpow_options, report) == 40, "curlpow_options layout");
_Static_assert(sizeof(curlpow_report) == 80, "curlpow_report layout");
_Static_assert(sizeof(curlpow_device) == 256, "curlpow_device layout");
_Static_assert(offsetof(curlpow_device, searches) == 208, "curlpow_device layout");
_Static_assert(offsetof(curlpow_device, healthy) == 248, "curlpow_device layout");
#endif

static char *input(uint64_t seed)
{
    char *p = malloc(TX_TRYTES + 1);
    CHECK(p != NULL, "malloc");
    random_trytes(seed, p);
    p[TX_TRYTES] = 0;
    return p;
}

static void test_before_init(void)
{
    char *in = input(1);
    char out[CURLPOW_TRYTES_BUFFER];
    CHECK(!curlpow_initialized(), "not initialised");
    CHECK(curlpow_pow(in, 9, NULL, out) == CURLPOW_ERR_NOT_INITIALIZED, "pow before init");
    CHECK(strstr(curlpow_last_error(), "curlpow_init") != NULL, "message");
    CHECK(out[0] == 0, "out is empty after a failure");
    CHECK(curlpow_device_count() == 0, "no devices before init");
    curlpow_device d;
    CHECK(curlpow_device_get(0, &d) == CURLPOW_ERR_NOT_INITIALIZED, "device before init");
    curlpow_destroy(); /* harmless */
    /* The digest needs no engine. */
    char hash[CURLPOW_HASH_BUFFER];
    CHECK(curlpow_digest(in, hash) == CURLPOW_OK && strlen(hash) == 81, "digest");
    free(in);
}

static void test_basics(void)
{
    CHECK(curlpow_init(0) == CURLPOW_OK, "init");
    CHECK(curlpow_init(1) == CURLPOW_OK, "second init is harmless");
    CHECK(curlpow_initialized(), "initialised");
    CHECK(strlen(curlpow_version()) > 0, "version");
    for (int s = 0; s <= CURLPOW_ERR_INTERNAL; s++)
        CHECK(strlen(curlpow_strerror(s)) > 0, "strerror(%d)", s);
    CHECK(strstr(curlpow_strerror(99), "unknown") != NULL, "strerror(99)");
    CHECK(strstr(curlpow_strerror(-1), "unknown") != NULL, "strerror(-1)");

    char *in = input(2);
    char out[CURLPOW_TRYTES_BUFFER];
    curlpow_report report;
    memset(&report, 0xAB, sizeof report);
    curlpow_options opts = CURLPOW_OPTIONS_INIT;
    opts.report = &report;
    CHECK(curlpow_pow(in, 9, &opts, out) == CURLPOW_OK, "pow");
    check_pow(in, out, 9);
    CHECK(report.nonces > 0 && report.elapsed_us > 0, "report %llu nonces %llu us",
          (unsigned long long) report.nonces, (unsigned long long) report.elapsed_us);
    CHECK(strlen(report.device) > 0 && strlen(report.device) < sizeof report.device, "device");
    printf("pow at MWM 9: %llu nonces, %llu us on %s\n", (unsigned long long) report.nonces,
           (unsigned long long) report.elapsed_us, report.device);

    /* No options at all, a thread cap, and the CPU by id. */
    CHECK(curlpow_pow(in, 9, NULL, out) == CURLPOW_OK, "pow without options");
    check_pow(in, out, 9);
    opts.threads = 1;
    opts.devices = " cpu ,";
    CHECK(curlpow_pow(in, 9, &opts, out) == CURLPOW_OK, "pow on the cpu, 1 thread");
    check_pow(in, out, 9);
    CHECK(!strcmp(report.device, "cpu"), "ran on %s", report.device);

    size_t n = curlpow_device_count();
    CHECK(n >= 1, "devices");
    int found_cpu = 0;
    for (size_t i = 0; i < n; i++) {
        curlpow_device d;
        CHECK(curlpow_device_get(i, &d) == CURLPOW_OK, "device %zu", i);
        printf("device %s (%s, %s): %llu searches, %llu hits, %llu nonces, healthy %d\n", d.id,
               d.backend, d.name, (unsigned long long) d.searches, (unsigned long long) d.hits,
               (unsigned long long) d.nonces, d.healthy);
        if (!strcmp(d.id, "cpu")) {
            found_cpu = 1;
            CHECK(d.searches >= 1 && d.hits >= 1 && d.nonces > 0 && d.healthy, "cpu stats");
        }
    }
    CHECK(found_cpu, "the cpu is a device");
    curlpow_device d;
    CHECK(curlpow_device_get(n, &d) == CURLPOW_ERR_INVALID_ARGUMENT, "index past the end");
    CHECK(curlpow_device_get(0, NULL) == CURLPOW_ERR_NULL_POINTER, "NULL out");
    free(in);
    curlpow_destroy();
    CHECK(!curlpow_initialized(), "destroyed");
}

static void expect(int got, int want, const char *needle, const char *what)
{
    CHECK(got == want, "%s: status %d (%s), expected %d", what, got, curlpow_strerror(got), want);
    CHECK(strstr(curlpow_last_error(), needle) != NULL, "%s: message %s lacks %s", what,
          curlpow_last_error(), needle);
}

static void test_bad_input(void)
{
    CHECK(curlpow_init(0) == CURLPOW_OK, "init");
    char *in = input(3);
    char out[CURLPOW_TRYTES_BUFFER];
    curlpow_options opts = CURLPOW_OPTIONS_INIT;
    expect(curlpow_pow(NULL, 9, NULL, out), CURLPOW_ERR_NULL_POINTER, "trytes", "NULL trytes");
    expect(curlpow_pow(in, 9, NULL, NULL), CURLPOW_ERR_NULL_POINTER, "out", "NULL out");
    expect(curlpow_pow("ABC", 9, NULL, out), CURLPOW_ERR_TRYTES, "after 3", "short");
    CHECK(out[0] == 0, "out is empty after a failure");
    char *longer = malloc(TX_TRYTES + 2);
    memcpy(longer, in, TX_TRYTES);
    longer[TX_TRYTES] = 'A';
    longer[TX_TRYTES + 1] = 0;
    expect(curlpow_pow(longer, 9, NULL, out), CURLPOW_ERR_TRYTES, "longer", "2674 trytes");
    free(longer);
    in[99] = 'q';
    expect(curlpow_pow(in, 9, NULL, out), CURLPOW_ERR_TRYTES, "column 100", "lowercase");
    char hash[CURLPOW_HASH_BUFFER];
    expect(curlpow_digest(in, hash), CURLPOW_ERR_TRYTES, "column 100", "digest, lowercase");
    CHECK(hash[0] == 0, "hash is empty after a failure");
    expect(curlpow_digest(in, NULL), CURLPOW_ERR_NULL_POINTER, "out", "digest, NULL out");
    in[99] = 'Q';
    expect(curlpow_pow(in, -1, NULL, out), CURLPOW_ERR_MWM, "-1", "mwm -1");
    expect(curlpow_pow(in, 244, NULL, out), CURLPOW_ERR_MWM, "244", "mwm 244");
    expect(curlpow_pow(in, INT_MAX, NULL, out), CURLPOW_ERR_MWM, "out of range", "mwm max");
    opts.size = 0;
    expect(curlpow_pow(in, 9, &opts, out), CURLPOW_ERR_INVALID_ARGUMENT, "CURLPOW_OPTIONS_INIT",
           "options.size 0");
    opts.size = sizeof opts;
    opts.devices = "nope:7";
    expect(curlpow_pow(in, 9, &opts, out), CURLPOW_ERR_NO_DEVICE, "cpu", "unknown device");
    opts.devices = NULL;
    CHECK(curlpow_pow(in, 9, &opts, out) == CURLPOW_OK, "a good call still works");
    check_pow(in, out, 9);
    free(in);
    curlpow_destroy();
}

static void test_timeout(void)
{
    CHECK(curlpow_init(0) == CURLPOW_OK, "init");
    char *in = input(4);
    char out[CURLPOW_TRYTES_BUFFER];
    curlpow_report report;
    curlpow_options opts = CURLPOW_OPTIONS_INIT;
    opts.timeout_ms = 300;
    opts.report = &report;
    double t0 = now_seconds();
    expect(curlpow_pow(in, 60, &opts, out), CURLPOW_ERR_TIMEOUT, "timed out", "timeout");
    double took = now_seconds() - t0;
    printf("timeout of 300 ms: returned after %.1f ms, %llu nonces tried\n", took * 1e3,
           (unsigned long long) report.nonces);
    CHECK(took >= 0.29 && took < 2.0, "took %.3f s", took);
    CHECK(report.nonces > 0 && report.device[0] == 0, "report of a timeout");
    free(in);
    curlpow_destroy();
}

typedef struct {
    char *in;
    int mwm;
    curlpow_cancel_token *token;
    int status;
    double returned_at;
    char out[CURLPOW_TRYTES_BUFFER];
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    curlpow_options opts = CURLPOW_OPTIONS_INIT;
    opts.cancel = j->token;
    j->status = curlpow_pow(j->in, j->mwm, &opts, j->out);
    j->returned_at = now_seconds();
    return NULL;
}

static void test_cancel(void)
{
    CHECK(curlpow_init(0) == CURLPOW_OK, "init");
    curlpow_cancel_token *token = curlpow_cancel_token_new();
    CHECK(token != NULL, "token");
    job j = {input(5), 60, token, -1, 0, {0}};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, run_job, &j) == 0, "pthread_create");
    sleep_ms(300);
    double t0 = now_seconds();
    curlpow_cancel_token_cancel(token);
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    printf("cancel: the search returned %.1f ms after the token was cancelled\n",
           (j.returned_at - t0) * 1e3);
    CHECK(j.status == CURLPOW_ERR_CANCELLED, "status %d", j.status);
    CHECK(j.returned_at - t0 < 2.0, "returned %.3f s after cancel", j.returned_at - t0);
    /* A cancelled token stays cancelled; a call without it is not affected. */
    j.mwm = 9;
    run_job(&j);
    CHECK(j.status == CURLPOW_ERR_CANCELLED, "a cancelled token cancels the next call too");
    j.token = NULL;
    run_job(&j);
    CHECK(j.status == CURLPOW_OK, "a call without the token");
    check_pow(j.in, j.out, 9);
    curlpow_cancel_token_free(token);
    curlpow_cancel_token_cancel(NULL); /* ignored */
    curlpow_cancel_token_free(NULL);
    free(j.in);
    curlpow_destroy();
}

#define THREADS 10

static void test_threads(void)
{
    CHECK(curlpow_init(0) == CURLPOW_OK, "init");
    pthread_t t[THREADS];
    static job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){input(100 + i), 9, NULL, -1, 0, {0}};
        CHECK(pthread_create(&t[i], NULL, run_job, &jobs[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
    for (int i = 0; i < THREADS; i++) {
        CHECK(jobs[i].status == CURLPOW_OK, "status %d", jobs[i].status);
        check_pow(jobs[i].in, jobs[i].out, 9);
        free(jobs[i].in);
    }
    curlpow_destroy();
}

/* destroy during an endless search: CURLPOW_ERR_CANCELLED promptly; init works again. */
static void test_destroy_cancels(void)
{
    CHECK(curlpow_init(0) == CURLPOW_OK, "init");
    job j = {input(6), 60, NULL, -1, 0, {0}};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, run_job, &j) == 0, "pthread_create");
    sleep_ms(300);
    double t0 = now_seconds();
    curlpow_destroy();
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    CHECK(j.status == CURLPOW_ERR_CANCELLED, "status %d", j.status);
    CHECK(j.returned_at - t0 < 2.0, "returned %.3f s after destroy", j.returned_at - t0);
    CHECK(curlpow_init(0) == CURLPOW_OK, "init again");
    j.mwm = 9;
    run_job(&j);
    CHECK(j.status == CURLPOW_OK, "pow after re-init");
    check_pow(j.in, j.out, 9);
    free(j.in);
    curlpow_destroy();
}

/* More threads than the stated bound (4 per logical CPU, at least 64): CURLPOW_ERR_INIT at
 * once, with a message naming the bound; nothing is built. The Rust side runs this with
 * CURLPOW_THREADS past the bound too, where init(0) is refused the same way. */
static void test_thread_cap(void)
{
    const char *env = getenv("CURLPOW_THREADS");
    if (env != NULL && *env != 0) {
        double t0 = now_seconds();
        CHECK(curlpow_init(0) == CURLPOW_ERR_INIT, "init(0) with CURLPOW_THREADS=%s", env);
        CHECK(now_seconds() - t0 < 1.0, "refused at once");
        CHECK(strstr(curlpow_last_error(), "CURLPOW_THREADS=") != NULL, "message: %s",
              curlpow_last_error());
        CHECK(!curlpow_initialized(), "not initialised");
        return;
    }
    unsigned sizes[] = {UINT_MAX, 100000, 5000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        double t0 = now_seconds();
        curlpow_status s = curlpow_init(sizes[k]);
        double took = now_seconds() - t0;
        CHECK(s == CURLPOW_ERR_INIT, "init(%u): status %d", sizes[k], s);
        CHECK(took < 1.0, "init(%u) refused in %.3f s", sizes[k], took);
        CHECK(strstr(curlpow_last_error(), "limit") != NULL, "message: %s", curlpow_last_error());
        CHECK(!curlpow_initialized(), "not initialised after init(%u)", sizes[k]);
    }
    printf("init(UINT_MAX): %s\n", curlpow_last_error());
    CHECK(curlpow_init(2) == CURLPOW_OK, "a count within the bound works");
    curlpow_destroy();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *name = argc > 1 ? argv[1] : "";
    if (!strcmp(name, "before_init"))
        test_before_init();
    else if (!strcmp(name, "basics"))
        test_basics();
    else if (!strcmp(name, "bad_input"))
        test_bad_input();
    else if (!strcmp(name, "timeout"))
        test_timeout();
    else if (!strcmp(name, "cancel"))
        test_cancel();
    else if (!strcmp(name, "threads"))
        test_threads();
    else if (!strcmp(name, "destroy_cancels"))
        test_destroy_cancels();
    else if (!strcmp(name, "thread_cap"))
        test_thread_cap();
    else {
        fprintf(stderr, "unknown test %s\n", name);
        return 2;
    }
    printf("ok %s\n", name);
    return 0;
}
