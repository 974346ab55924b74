/* A stand-in for dcurl's own libdcurl.so, only to link c/dcurl_dropin.c against the way a
 * program built for dcurl is linked (its symbols versioned CODEABI_1.0, as dcurl's are). The
 * test then runs that binary with curlpow's libdcurl.so in its place. It does no PoW. */
#include <stddef.h>

#include "dcurl.h"

bool dcurl_init(dcurl_config *config)
{
    (void) config;
    return false;
}

void dcurl_destroy(void) {}

int8_t *dcurl_entry(int8_t *trytes, int mwm, int threads)
{
    (void) trytes;
    (void) mwm;
    (void) threads;
    return NULL;
}
