/* dcurl's remote PoW through curlpow's libdcurl.so: dcurl_init with broker_host = argv[1], then
 * argv[2] dcurl_entry calls at MWM argv[3] on distinct transactions, as a dcurl user with
 * ENABLE_REMOTE would make them. Each result is checked here and printed for the Rust side. */
#include "dcurl.h"
#include "check.h"

int main(int argc, char **argv)
{
    (void) now_seconds; /* check.h's helpers this program does not need */
    (void) sleep_ms;
    CHECK(argc == 4, "usage: dcurl_broker BROKER_HOST COUNT MWM");
    int count = atoi(argv[2]), mwm = atoi(argv[3]);
    dcurl_config config = {.broker_host = argv[1]};
    CHECK(dcurl_init(&config), "dcurl_init with broker_host %s", argv[1]);
    for (int i = 0; i < count; i++) {
        char in[TX_TRYTES];
        random_trytes(2600 + (uint64_t) i, in);
        int8_t *out = dcurl_entry((int8_t *) in, mwm, 0);
        check_pow(in, (const char *) out, mwm);
        free(out);
    }
    dcurl_destroy();
    printf("ok broker\n");
    return 0;
}
