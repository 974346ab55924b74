package com.iota.iri.crypto;

/**
 * A stand-in for the DLTcollab IRI fork's class of the same name: the same native methods
 * (names, signatures, static), bound to libdcurl.so the way the fork binds them.
 */
public final class PearlDiver {
    static {
        System.loadLibrary("dcurl");
    }

    private PearlDiver() {}

    public static native boolean exlibInit(byte[] brokerHost, int brokerHostLength);

    public static native boolean exlibSearch(byte[] trits, int mwm, int threads);

    public static native void exlibCancel();

    public static native void exlibDestroy();
}
