/* A program written for dcurl's API only (dcurl.h and libc: nothing of curlpow's), shaped like
 * dcurl's own multi-thread test: one init, 10 threads calling dcurl_entry at once on distinct
 * transactions, one destroy. It prints every result; the Rust test checks them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcurl.h"

#define TRYTES 2673
#define THREADS 10

typedef struct {
    int8_t in[TRYTES]; /* dcurl's input: 2673 bytes, no NUL */
    int8_t *out;
} item;

static void *entry(void *arg)
{
    item *it = arg;
    it->out = dcurl_entry(it->in, 9, 0);
    return NULL;
}

int main(void)
{
    static const char alphabet[] = "9ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    static item items[THREADS];
    pthread_t t[THREADS];
    if (!dcurl_init(NULL)) {
        fprintf(stderr, "dcurl_init failed\n");
        return 1;
    }
    unsigned long s = 12345;
    for (int i = 0; i < THREADS; i++) {
        for (int k = 0; k < TRYTES; k++) {
            s = s * 6364136223846793005ul + 1442695040888963407ul;
            items[i].in[k] = alphabet[(s >> 33) % 27];
        }
        pthread_create(&t[i], NULL, entry, &items[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        if (!items[i].out) {
            fprintf(stderr, "dcurl_entry %d failed\n", i);
            return 1;
        }
        printf("RESULT 9 %.*s %.*s\n", TRYTES, (const char *) items[i].in, TRYTES,
               (const char *) items[i].out);
        free(items[i].out);
    }
    dcurl_destroy();
    return 0;
}
