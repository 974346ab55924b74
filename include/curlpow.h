/*
 * curlpow.h: curlpow's own C API, for new C users (libdcurl.so and libccurl.so both export it;
 * link with -ldcurl or -lccurl). IOTA Curl-P-81 proof of work on the CPU (SIMD) and GPUs, with
 * every nonce re-checked on the host before it is returned.
 *
 *     #include "curlpow.h"
 *
 *     if (curlpow_init(0) != CURLPOW_OK) { ... }      // once per process
 *     char out[CURLPOW_TRYTES_BUFFER];
 *     curlpow_options opts = CURLPOW_OPTIONS_INIT;
 *     opts.timeout_ms = 10000;                        // give up after 10 s
 *     int s = curlpow_pow(trytes, 14, &opts, out);     // trytes: 2673 trytes + NUL
 *     if (s != CURLPOW_OK)
 *         fprintf(stderr, "%s: %s\n", curlpow_strerror(s), curlpow_last_error());
 *     curlpow_destroy();                              // at exit, if at all
 *
 * Every function is thread-safe and returns promptly on bad arguments; none aborts the process
 * on any input. docs/c-api.md has the details.
 */
#ifndef CURLPOW_H_
#define CURLPOW_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Trytes in a transaction, and the buffer curlpow_pow writes (the trytes and a NUL). */
#define CURLPOW_TRYTES 2673
#define CURLPOW_TRYTES_BUFFER 2674
/* The buffer curlpow_digest writes: an 81-tryte hash and a NUL. */
#define CURLPOW_HASH_BUFFER 82

/* What a call did. The values are stable. */
typedef enum curlpow_status {
    CURLPOW_OK = 0,
    CURLPOW_ERR_NULL_POINTER = 1,    /* a required pointer argument is NULL */
    CURLPOW_ERR_TRYTES = 2,          /* the input is not 2673 trytes (9, A-Z) and a NUL */
    CURLPOW_ERR_MWM = 3,             /* mwm outside 0..=243 */
    CURLPOW_ERR_NOT_INITIALIZED = 4, /* curlpow_init not called, or curlpow_destroy since */
    CURLPOW_ERR_CANCELLED = 5,       /* the cancel token fired, or destroy ran meanwhile */
    CURLPOW_ERR_TIMEOUT = 6,         /* options.timeout_ms passed */
    CURLPOW_ERR_NO_DEVICE = 7,       /* options.devices names no device of this engine */
    CURLPOW_ERR_DEVICE = 8,          /* a device failed and no allowed device was left */
    CURLPOW_ERR_INVALID_ARGUMENT = 9,/* a bad option (size, devices string) or index */
    CURLPOW_ERR_INIT = 10,           /* the engine could not be built */
    CURLPOW_ERR_INTERNAL = 11        /* a bug caught at the boundary: please report it */
} curlpow_status;

/* A cancel token: cancelling it stops every call that holds it, now and later. */
typedef struct curlpow_cancel_token curlpow_cancel_token;

/* What one curlpow_pow call did; filled when the call returns, success or not. */
typedef struct curlpow_report {
    uint64_t nonces;     /* nonces tried */
    uint64_t elapsed_us; /* wall time of the call */
    char device[64];     /* id of the device that found the nonce; "" if none did */
} curlpow_report;

/* Options of one curlpow_pow call. Start from CURLPOW_OPTIONS_INIT, then set fields. */
typedef struct curlpow_options {
    size_t size;                  /* sizeof(curlpow_options) */
    uint64_t timeout_ms;          /* give up after this long, device wait included; 0 = never */
    unsigned threads;             /* at most this many CPU threads; 0 = the whole pool */
    const char *devices;          /* comma-separated device ids ("cpu", "wgpu:0"); NULL = any */
    curlpow_cancel_token *cancel; /* cancels this call from another thread; NULL = none */
    curlpow_report *report;       /* receives the call's report; NULL = not wanted */
} curlpow_options;

#define CURLPOW_OPTIONS_INIT { sizeof(curlpow_options), 0, 0, NULL, NULL, NULL }

/* A device and its statistics in this process. */
typedef struct curlpow_device {
    char id[64];         /* what options.devices takes: "cpu", "wgpu:0", "opencl:0:0" */
    char name[128];      /* as its driver reports it (truncated to fit) */
    char backend[16];    /* "cpu", "wgpu" or "opencl" */
    uint64_t searches;   /* searches run */
    uint64_t nonces;     /* nonces tried */
    uint64_t hits;       /* searches that found a nonce the host check accepted */
    uint64_t errors;     /* driver errors and nonces the host check rejected */
    double busy_seconds; /* time spent searching */
    int healthy;         /* 0 while the device sits out after a fault */
} curlpow_device;

/*
 * Build the process's engine (shared with the dcurl_* and ccurl_* functions): a CPU pool of
 * `threads` (0 = CURLPOW_THREADS, else one per core) and every GPU a compiled backend finds.
 * The pool is at most 4 threads per logical CPU and at least 64: a larger `threads` (or
 * CURLPOW_THREADS) returns CURLPOW_ERR_INIT at once, curlpow_last_error() naming the bound.
 * Devices are discovered once per process; an init after destroy reuses them. CURLPOW_OK also
 * when the engine exists already (the first call's settings stand until destroy).
 */
curlpow_status curlpow_init(unsigned threads);

/* Cancel the calls in flight (CURLPOW_ERR_CANCELLED), wait for them, release the engine. */
void curlpow_destroy(void);

/* 1 when the engine exists, else 0. */
int curlpow_initialized(void);

/*
 * Proof of work. trytes: a NUL-terminated string of exactly 2673 trytes. mwm: 0..=243 (mainnet
 * 14, testnet 9). opts: NULL for no limits. On CURLPOW_OK, out (CURLPOW_TRYTES_BUFFER bytes)
 * holds the trytes with the nonce set and a NUL; otherwise "" and the status says why.
 */
curlpow_status curlpow_pow(const char *trytes, int mwm, const curlpow_options *opts,
                           char out[CURLPOW_TRYTES_BUFFER]);

/* The Curl-P-81 hash of a transaction (trytes as for curlpow_pow) into out: 81 trytes + NUL. */
curlpow_status curlpow_digest(const char *trytes, char out[CURLPOW_HASH_BUFFER]);

/* Cancel tokens. free: calls still holding the token keep it alive until they return. */
curlpow_cancel_token *curlpow_cancel_token_new(void);
void curlpow_cancel_token_cancel(curlpow_cancel_token *token);
void curlpow_cancel_token_free(curlpow_cancel_token *token);

/* Devices: count (0 when not initialised), and device `index` with its statistics. */
size_t curlpow_device_count(void);
curlpow_status curlpow_device_get(size_t index, curlpow_device *out);

/* A fixed text for a status (never NULL). */
const char *curlpow_strerror(int status);

/*
 * The message of this thread's last failure through any of the library's functions, dcurl_*
 * and ccurl_* included (e.g. "column 12: 'a' is not a tryte"); "" if none. Valid until this
 * thread's next call into the library.
 */
const char *curlpow_last_error(void);

/* The library's version, e.g. "0.1.0". */
const char *curlpow_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CURLPOW_H_ */
