//! `curlpow hash`: each line's hash, no device needed; its pipeline also serves `curlpow verify`
//! ([`super::verify`]).
//!
//! Every line is checked before anything is written ([`crate::input`]): a bad line is named and
//! nothing is written. While the check reads the input, the good lines are gathered into chunks
//! of up to [`CHUNK_LINES`] and hashed on the CPU pool by a second thread of the command
//! (`Engine::hash_many_trytes`: the trytes decoded straight into the kernel's bit-sliced lanes,
//! 512 lines a pass with AVX-512, the passes spread over the workers), and their output is kept
//! in input order, then written in one block. An output too large to keep ([`HELD_MAX`]) is
//! computed again by a second pass and written chunk by chunk.

use std::process::ExitCode;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::Scope;

use anyhow::Result;
use curlpow::{Backend, Engine};

use crate::input::{changed, line_error, too_long, BadLines, Input, InputArg};
use crate::line_reader::{self, Line};
use crate::output::Stdout;

/// The longest line `hash` reads, in bytes (trytes).
const MAX_HASH_LINE: usize = 4 << 20;
/// Lines hashed together (four 512-lane passes: two for each of two workers), and the most
/// bytes they may hold together. At most three chunks are in memory at once (one filling, two
/// hashing): what bounds the memory, whatever the input's size.
const CHUNK_LINES: usize = 2048;
const CHUNK_BYTES: usize = 16 << 20;
/// Results kept while the input is still being checked (a bad line further on means nothing
/// is written): past this many bytes of output they are dropped, and a second pass hashes the
/// input again after the check.
const HELD_MAX: usize = 32 << 20;

/// Lines gathered for one call of the engine: their bytes end to end, where each ends, and
/// their line numbers.
#[derive(Default)]
pub(super) struct Chunk {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    pub(super) numbers: Vec<usize>,
}

impl Chunk {
    fn push(&mut self, line: &[u8], number: usize) {
        self.bytes.extend_from_slice(line);
        self.ends.push(self.bytes.len());
        self.numbers.push(number);
    }

    fn is_full(&self) -> bool {
        self.ends.len() >= CHUNK_LINES || self.bytes.len() >= CHUNK_BYTES
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn lines(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let l = &self.bytes[start..end];
                start = end;
                l
            })
            .collect()
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.numbers.clear();
    }
}

/// A chunk and its hashes, as the hashing thread returns them.
type Hashed = (Chunk, Result<Vec<[i8; 243]>, curlpow::Error>);

/// Chunks of lines hashed on the engine's CPU pool by one thread of the command while the
/// calling thread reads and checks the next chunk; results come back in input order.
struct Pipeline {
    to_hasher: SyncSender<Chunk>,
    from_hasher: Receiver<Hashed>,
    filling: Chunk,
    spare: Vec<Chunk>,
    in_flight: usize,
}

impl Pipeline {
    fn start<'scope>(scope: &'scope Scope<'scope, '_>, engine: &'scope Engine) -> Pipeline {
        let (to_hasher, chunks) = sync_channel::<Chunk>(2);
        let (hashed, from_hasher) = sync_channel::<Hashed>(2);
        scope.spawn(move || {
            for chunk in chunks {
                // The trytes decoded straight into the kernel's bit-sliced lanes.
                let hashes = engine.hash_many_trytes(&chunk.lines());
                if hashed.send((chunk, hashes)).is_err() {
                    break;
                }
            }
        });
        Pipeline {
            to_hasher,
            from_hasher,
            filling: Chunk::default(),
            spare: Vec::new(),
            in_flight: 0,
        }
    }

    /// Add a line; a full chunk goes to the hashing thread, and with two chunks there, the
    /// older one's hashes go to `done`.
    fn push<S>(&mut self, line: &[u8], number: usize, st: &mut S, done: Done<S>) -> Result<()> {
        self.filling.push(line, number);
        if self.filling.is_full() {
            self.send()?;
            if self.in_flight >= 2 {
                self.receive(st, done)?;
            }
        }
        Ok(())
    }

    fn send(&mut self) -> Result<()> {
        let next = self.spare.pop().unwrap_or_default();
        let full = std::mem::replace(&mut self.filling, next);
        self.to_hasher
            .send(full)
            .map_err(|_| anyhow::anyhow!("the hashing thread stopped"))?;
        self.in_flight += 1;
        Ok(())
    }

    fn receive<S>(&mut self, st: &mut S, done: Done<S>) -> Result<()> {
        let (mut chunk, hashes) = self
            .from_hasher
            .recv()
            .map_err(|_| anyhow::anyhow!("the hashing thread stopped"))?;
        self.in_flight -= 1;
        // Every line was checked before it was added: a bad one now means the input changed.
        done(st, &chunk, &hashes.map_err(|_| changed())?)?;
        chunk.clear();
        self.spare.push(chunk);
        Ok(())
    }

    /// Hash what is left, every result to `done`.
    fn finish<S>(mut self, st: &mut S, done: Done<S>) -> Result<()> {
        if !self.filling.is_empty() {
            self.send()?;
        }
        while self.in_flight > 0 {
            self.receive(st, done)?;
        }
        Ok(())
    }
}

/// What receives each chunk's hashes, in input order.
type Done<S> = fn(&mut S, &Chunk, &[[i8; 243]]) -> Result<()>;

/// What a command writes for each line's hash (and what it notes besides).
pub(super) trait Emit {
    /// Append the output of `chunk`'s lines to `text`.
    fn add(&mut self, chunk: &Chunk, hashes: &[[i8; 243]], text: &mut Vec<u8>);
    /// Forget what `add` noted (its results were dropped and are computed again).
    fn reset(&mut self) {}
}

/// The state of one run over the input.
struct Run<E> {
    emit: E,
    /// The output of every line so far, while it is kept.
    held: Option<Vec<u8>>,
    bad: BadLines,
}

/// Pass 1: results kept while they fit.
fn hold<E: Emit>(run: &mut Run<E>, chunk: &Chunk, hashes: &[[i8; 243]]) -> Result<()> {
    if let Some(text) = &mut run.held {
        run.emit.add(chunk, hashes, text);
        if text.len() > HELD_MAX {
            run.held = None;
            run.emit.reset();
        }
    }
    Ok(())
}

/// Pass 2: each chunk's output written at once.
fn write_out<E: Emit>(
    st: &mut (E, Vec<u8>, &mut Stdout),
    chunk: &Chunk,
    hashes: &[[i8; 243]],
) -> Result<()> {
    let (emit, text, out) = st;
    text.clear();
    emit.add(chunk, hashes, text);
    out.bytes(text)?;
    Ok(())
}

/// `hash` and `verify` over every line of the input, `check` naming what is wrong with a bad
/// line (a line over `max_line` bytes is too long, `expected` saying what fits). Every line is
/// checked before anything is written: a bad one is named, the rest counted, and nothing is
/// written (exit 2). Meanwhile the good lines are hashed on the pool, in chunks, and their
/// output kept up to [`HELD_MAX`] bytes; past that (or after a bad line) only the check goes
/// on, and once it passes a second pass hashes and writes chunk by chunk. Returns the emitter.
pub(super) fn hash_input<E: Emit>(
    input: &mut Input,
    max_line: usize,
    expected: &str,
    check: impl Fn(&[u8]) -> Result<(), String>,
    emit: E,
    out: &mut Stdout,
) -> Result<E> {
    let engine = hasher()?;
    let mut run = Run {
        emit,
        held: Some(Vec::new()),
        bad: BadLines::default(),
    };
    std::thread::scope(|scope| -> Result<()> {
        let mut pipe = Pipeline::start(scope, &engine);
        input.for_each_line(max_line, |line| {
            match line {
                Line::Text { number, bytes } => match check(bytes) {
                    Ok(()) if run.held.is_some() => pipe.push(bytes, number, &mut run, hold)?,
                    Ok(()) => {}
                    Err(msg) => {
                        run.bad.report(number, msg);
                        run.held = None;
                    }
                },
                Line::TooLong {
                    number,
                    bytes,
                    chars,
                } => {
                    run.bad.report(number, too_long(chars, bytes, expected));
                    run.held = None;
                }
            }
            Ok(())
        })?;
        pipe.finish(&mut run, hold)
    })?;
    let Run { emit, held, bad } = run;
    bad.finish()?;
    if let Some(text) = held {
        out.bytes(&text)?;
        return Ok(emit);
    }
    let mut st = (emit, Vec::new(), out);
    std::thread::scope(|scope| -> Result<()> {
        let mut pipe = Pipeline::start(scope, &engine);
        input.for_each_line(max_line, |line| {
            let Line::Text { number, bytes } = line else {
                return Err(changed());
            };
            if check(bytes).is_err() {
                return Err(changed());
            }
            pipe.push(bytes, number, &mut st, write_out)
        })?;
        pipe.finish(&mut st, write_out)
    })?;
    Ok(st.0)
}

/// `hash`: each line's 81-tryte hash.
struct Hashes;

impl Emit for Hashes {
    fn add(&mut self, _: &Chunk, hashes: &[[i8; 243]], text: &mut Vec<u8>) {
        for h in hashes {
            push_trytes(h, text);
            text.push(b'\n');
        }
    }
}

pub fn run_hash(a: InputArg) -> Result<ExitCode> {
    let mut out = Stdout::open()?;
    let mut input = Input::open(&a)?;
    hash_input(
        &mut input,
        MAX_HASH_LINE,
        "at most 4194304 trytes, a multiple of 81",
        hash_line,
        Hashes,
        &mut out,
    )?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// Append the 81 trytes of a hash.
fn push_trytes(hash: &[i8; 243], out: &mut Vec<u8>) {
    const CHARS: &[u8; 27] = b"NOPQRSTUVWXYZ9ABCDEFGHIJKLM";
    out.extend(
        hash.chunks_exact(3)
            .map(|t| CHARS[(t[0] + 3 * t[1] + 9 * t[2] + 13) as usize]),
    );
}

/// A `hash` line: trytes, a multiple of 81 of them.
fn hash_line(bytes: &[u8]) -> Result<(), String> {
    // Trytes are ASCII: the UTF-8 check (for the message) only when they are not all trytes.
    if !curlpow::trits::is_trytes(bytes) {
        let s = line_reader::text(bytes).map_err(|e| e.to_string())?;
        // The parser's error names the first bad character.
        curlpow::trits::trytes_to_trits(s).map_err(|e| line_error(s, &e))?;
    }
    if !bytes.len().is_multiple_of(81) {
        return Err(curlpow::TryteError::Length {
            found: bytes.len(),
            expected: "a multiple of 81",
        }
        .to_string());
    }
    Ok(())
}

/// The CPU pool that hashes (no GPU driver is loaded for hashing).
fn hasher() -> Result<Engine> {
    Ok(Engine::builder().backends(&[Backend::Cpu]).build()?)
}
