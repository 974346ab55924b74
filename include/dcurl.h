/*
 * dcurl.h: dcurl's C API (its v0.6 signatures), served by curlpow's libdcurl.so.
 *
 * Link with -ldcurl (target/release/libdcurl.so, built by `cargo build --release`). A program
 * written for dcurl compiles against this header unchanged, and a program already linked
 * against dcurl's library loads this one in its place (same symbol version node, CODEABI_1.0).
 * Differences from dcurl are listed in docs/c-api.md; in short: the result carries a trailing
 * NUL, bad input and an MWM outside 0..=243 give NULL, and dcurl_destroy cancels the searches
 * in flight. broker_host sends the PoW to workers over RabbitMQ, as dcurl's remote PoW does.
 */
#ifndef DCURL_H_
#define DCURL_H_

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * dcurl's configuration. broker_host: NULL or "" to search in this process; else dcurl's remote
 * PoW over RabbitMQ: a host ("localhost", "10.0.0.5", "host:5672": the guest account, vhost /)
 * or an amqp://user:password@host:port/vhost URL. Each dcurl_entry then goes to the workers on
 * the queue incoming_queue (CURLPOW_BROKER_QUEUE names another), e.g. `curlpow worker`; every
 * answer is checked here, and a search with no answer within 10 s runs on this host instead.
 */
typedef struct {
    char *broker_host;
} dcurl_config;

/*
 * Build the process's engine: one CPU thread pool (CURLPOW_THREADS threads, else one per core;
 * CURLPOW_THREADS is at most 4 per logical CPU and at least 64, past it init returns false and
 * curlpow_last_error() names the bound) and every GPU a compiled backend finds, and with
 * config->broker_host the broker connection (opened in the background: a broker that is down
 * is no error). config may be NULL. Returns true when at least one device works (the CPU
 * always does); false for a broker_host that is no host or amqp:// URL. A second call is
 * harmless; a call after dcurl_destroy builds a new engine, reusing the devices the first init
 * discovered (a warm init takes milliseconds and prints nothing).
 */
bool dcurl_init(dcurl_config *config);

/*
 * Cancel the searches in flight (their dcurl_entry returns NULL), wait for them to return, and
 * release the engine. Harmless when not initialised.
 */
void dcurl_destroy(void);

/*
 * Proof of work on one transaction. Reads the first 2673 bytes of trytes (ASCII, 9 and A-Z; the
 * buffer need not be NUL-terminated, and a NUL before byte 2673 is an error). Returns a buffer
 * from malloc holding the 2673 trytes with the nonce set, then a NUL; free() it. mwm: 0..=243
 * (mainnet 14, testnet 9). threads: at most this many CPU threads for this call; 0 or negative =
 * the whole pool (dcurl's default). Returns NULL on any failure (not initialised, NULL or bad
 * input, mwm out of range, cancelled by dcurl_destroy). Thread-safe: concurrent calls each wait for a
 * free device. The nonce is checked on the host before it is returned.
 */
int8_t *dcurl_entry(int8_t *trytes, int mwm, int threads);

#ifdef __cplusplus
}
#endif

#endif /* DCURL_H_ */
