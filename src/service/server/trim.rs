//! Handing freed memory back to the system after a burst of large bodies.
//!
//! A request body up to `--max-body-length` is read into one buffer and freed once parsed. With
//! many read at once, the C allocator keeps the freed pages in its arenas, so the process would
//! stay at its peak size long after the burst. The status sampler calls
//! [`release_free_memory`] (on a blocking thread) at most once a second, only after a large
//! body was freed.

/// Return free heap memory to the system (glibc's `malloc_trim`; a no-op elsewhere).
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes a byte count, touches only the allocator's own free lists
        // (under its locks), and is safe to call from any thread at any time.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}
