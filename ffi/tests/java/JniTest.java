import com.iota.iri.crypto.PearlDiver;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

/**
 * Drives libdcurl.so's JNI methods as the IRI fork does; prints one "RESULT mwm in out" line per
 * PoW (trytes) for the Rust side to check with curlpow's scalar reference, then "ok jni".
 */
public final class JniTest {
    static final int TRITS = 8019;
    static final String ALPHABET = "9ABCDEFGHIJKLMNOPQRSTUVWXYZ";

    static void check(boolean cond, String what) {
        if (!cond) {
            System.err.println("FAILED: " + what);
            System.exit(1);
        }
    }

    static byte[] randomTrits(long seed) {
        Random r = new Random(seed);
        byte[] t = new byte[TRITS];
        for (int i = 0; i < TRITS; i++) {
            t[i] = (byte) (r.nextInt(3) - 1);
        }
        return t;
    }

    static String trytes(byte[] trits) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < trits.length; i += 3) {
            int v = trits[i] + 3 * trits[i + 1] + 9 * trits[i + 2];
            s.append(ALPHABET.charAt(v < 0 ? v + 27 : v));
        }
        return s.toString();
    }

    public static void main(String[] args) throws Exception {
        check(!PearlDiver.exlibSearch(randomTrits(1), 9, 0), "search before init");
        byte[] host = "localhost".getBytes(StandardCharsets.US_ASCII);
        check(PearlDiver.exlibInit(host, host.length), "exlibInit");
        check(PearlDiver.exlibInit(host, host.length), "second exlibInit");

        int n = 10;
        byte[][] in = new byte[n][];
        byte[][] out = new byte[n][];
        boolean[] ok = new boolean[n];
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int k = i;
            in[k] = randomTrits(100 + k);
            out[k] = in[k].clone();
            threads[k] = new Thread(() -> ok[k] = PearlDiver.exlibSearch(out[k], 9, k % 3));
            threads[k].start();
        }
        for (int i = 0; i < n; i++) {
            threads[i].join(120_000);
            check(ok[i], "search " + i);
            System.out.println("RESULT 9 " + trytes(in[i]) + " " + trytes(out[i]));
        }

        check(!PearlDiver.exlibSearch(null, 9, 0), "null array");
        check(!PearlDiver.exlibSearch(new byte[100], 9, 0), "short array");
        byte[] bad = randomTrits(2);
        bad[17] = 2;
        byte[] before = bad.clone();
        check(!PearlDiver.exlibSearch(bad, 9, 0), "a value that is not a trit");
        check(Arrays.equals(bad, before), "a failed search leaves the array alone");
        check(!PearlDiver.exlibSearch(randomTrits(3), 244, 0), "mwm 244");
        check(!PearlDiver.exlibSearch(randomTrits(3), -1, 0), "mwm -1");
        check(!PearlDiver.exlibSearch(randomTrits(3), 9, -1), "threads -1");

        // exlibCancel during an endless search (dcurl's exlibCancel does nothing).
        boolean[] endless = {true};
        long[] returnedAt = {0};
        Thread t = new Thread(() -> {
            endless[0] = PearlDiver.exlibSearch(randomTrits(4), 60, 0);
            returnedAt[0] = System.nanoTime();
        });
        t.start();
        Thread.sleep(300);
        long t0 = System.nanoTime();
        PearlDiver.exlibCancel();
        t.join(10_000);
        check(!t.isAlive(), "exlibCancel did not stop the search");
        check(!endless[0], "a cancelled search returns false");
        System.out.printf("cancel: returned %.1f ms after exlibCancel%n", (returnedAt[0] - t0) / 1e6);

        PearlDiver.exlibDestroy();
        check(!PearlDiver.exlibSearch(randomTrits(5), 9, 0), "search after destroy");
        System.out.println("ok jni");
    }
}
