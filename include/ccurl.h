/*
 * ccurl.h: ccurl's C API, served by curlpow's libccurl.so (and libdcurl.so, which exports the
 * same functions).
 *
 * Link with -lccurl (target/release/libccurl.so, built by `cargo build --release`).
 * Differences from ccurl are listed in docs/c-api.md; in short: ccurl_pow builds the engine on
 * first use if ccurl_pow_init was not called, checks its input, and never returns an unchecked
 * nonce; ccurl_pow_interrupt really cancels; loop count and offset have no effect.
 */
#ifndef CCURL_H_
#define CCURL_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Build the process's engine if there is none: 0 when ready, -1 if it cannot be built. */
int ccurl_pow_init(void);

/* Cancel the searches in flight, wait for them, release the engine (shared with dcurl_*). */
void ccurl_pow_finalize(void);

/*
 * Proof of work: the first 2673 bytes of trytes (ASCII, 9 and A-Z) in; a malloc'd,
 * NUL-terminated copy with the nonce set out (free() it). mwm: 0..=243. NULL on any failure
 * (NULL or bad input, mwm out of range, interrupted, finalized meanwhile). Thread-safe.
 */
char *ccurl_pow(char *trytes, int mwm);

/* Cancel every ccurl_pow in flight now (each returns NULL); later calls are not affected. */
void ccurl_pow_interrupt(void);

/* Accepted for compatibility with ccurl's OpenCL tuning; no effect. */
void ccurl_pow_set_loop_count(size_t count);
void ccurl_pow_set_offset(size_t offset);

/*
 * The Curl-P-81 hash of a transaction: input read like ccurl_pow's; a malloc'd 81-tryte,
 * NUL-terminated string out (free() it); NULL on NULL or bad input. Needs no init.
 */
char *ccurl_digest_transaction(char *trytes);

#ifdef __cplusplus
}
#endif

#endif /* CCURL_H_ */
