//! Option values that need more than a type: seconds that a clock can hold, a bounded thread
//! count. Each parser is a clap `value_parser`, so a bad value is a usage error (exit 2) found
//! before any input is read.

use std::time::Duration;

/// The longest duration an option takes: about 31.7 years. Longer ones cannot be added to a
/// clock reading on every platform, and no search is meant to run that long.
pub const MAX_SECONDS: f64 = 1e9;

/// A number of seconds, 0 to [`MAX_SECONDS`]. As a time limit (`pow`, `block-pow` and
/// `attach --timeout`, `serve --request-timeout`) 0 means one thing everywhere: no limit, the
/// same as leaving the option out. A script that computes a remaining budget must stop itself
/// when the budget is spent, not pass 0.
pub fn seconds(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if v.is_nan() {
        return Err(format!("{s:?} is not a number of seconds"));
    }
    if v < 0.0 {
        return Err(format!("{s} is negative: expected 0 or more seconds"));
    }
    if v > MAX_SECONDS {
        return Err(format!(
            "{s} seconds is more than the {MAX_SECONDS:e} (about 31 years) a timer can hold"
        ));
    }
    Duration::try_from_secs_f64(v).map_err(|e| format!("{s}: {e}"))
}

/// A benchmark's length: like [`seconds`], at least a millisecond.
pub fn bench_seconds(s: &str) -> Result<Duration, String> {
    let d = seconds(s)?;
    if d < Duration::from_millis(1) {
        return Err(format!(
            "{s} is too short: a benchmark runs at least 0.001 seconds"
        ));
    }
    Ok(d)
}

/// The most CPU worker threads: the library's bound, 4 per logical CPU and at least 64.
pub fn max_threads() -> usize {
    curlpow::max_threads()
}

/// A thread count (`what` names where it came from, e.g. `CURLPOW_THREADS=`): 1 to
/// [`max_threads`].
pub fn check_threads(what: &str, n: usize) -> Result<usize, String> {
    let max = max_threads();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n == 0 {
        Err(format!("{what}{n}: at least 1 thread is needed"))
    } else if n > max {
        Err(format!(
            "{what}{n} is more than this host's limit of {max} threads (64, or 4 per logical \
             CPU with more than 16; {cpus} here): threads past the cores only slow a search down"
        ))
    } else {
        Ok(n)
    }
}

/// `--threads`: a whole number within [`check_threads`].
pub fn threads(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of threads"))?;
    check_threads("", n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_that_cannot_be_held_are_rejected() {
        assert_eq!(seconds("0.25").unwrap(), Duration::from_millis(250));
        assert_eq!(seconds("0").unwrap(), Duration::ZERO);
        assert_eq!(seconds("1e9").unwrap(), Duration::from_secs(1_000_000_000));
        for bad in [
            "nan", "NaN", "inf", "-inf", "-1", "1e19", "1e20", "1e300", "", "1s", "0x10",
        ] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert!(bench_seconds("0").is_err());
        assert!(bench_seconds("1e-12").is_err());
        assert!(bench_seconds("0.3").is_ok());
    }

    #[test]
    fn threads_are_bounded() {
        assert_eq!(threads("2").unwrap(), 2);
        assert!(threads("0").is_err());
        assert!(threads("100000").unwrap_err().contains("limit"));
        assert!(threads("-1").is_err());
        assert!(threads(&max_threads().to_string()).is_ok());
        assert!(threads(&(max_threads() + 1).to_string()).is_err());
    }
}
