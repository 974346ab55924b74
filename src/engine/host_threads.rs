//! Persistent host threads for work that blocks (waiting for a device lease, waiting on a GPU):
//! built once with the engine, never a thread per search, and never rayon workers — a rayon
//! worker that blocks while waiting can steal another blocking job and deadlock.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

type Task = Box<dyn FnOnce() + Send + 'static>;

/// A fixed set of threads running submitted jobs in FIFO order.
pub(crate) struct HostThreads {
    tx: Option<mpsc::Sender<Task>>,
    threads: Vec<JoinHandle<()>>,
}

impl HostThreads {
    /// `n` threads named `name-i`.
    pub(crate) fn new(n: usize, name: &str) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Task>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = (0..n.max(1))
            .map(|i| {
                let rx = rx.clone();
                std::thread::Builder::new()
                    .name(format!("{name}-{i}"))
                    .spawn(move || loop {
                        // Hold the receiver lock only to take one job.
                        let job = rx.lock().recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => break,
                        }
                    })
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(HostThreads {
            tx: Some(tx),
            threads,
        })
    }

    /// Queue a job.
    pub(crate) fn submit(&self, job: impl FnOnce() + Send + 'static) {
        if let Some(tx) = &self.tx {
            // The receiving threads live as long as `self`; a send cannot fail before drop.
            let _ = tx.send(Box::new(job));
        }
    }
}

impl Drop for HostThreads {
    fn drop(&mut self) {
        self.tx.take();
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            // The last engine handle may be dropped by a job on one of these threads.
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}
