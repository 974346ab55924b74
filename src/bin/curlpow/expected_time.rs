//! What `pow` says at start about how long its searches will take: a note when the MWM makes
//! them long, a warning when they cannot end in a human lifetime on the selected devices.

use curlpow::{Engine, Mwm, Selection};

use crate::output::errln;

/// A human lifetime, in seconds (100 years).
const LIFETIME_SECONDS: f64 = 100.0 * YEAR;
const YEAR: f64 = 365.25 * 86400.0;
/// Below this expected time for the whole batch nothing is said.
const NOTE_AFTER_SECONDS: f64 = 10.0;

/// The note or warning for `count` searches at `mwm` on the devices `sel` allows, if one is due.
pub fn message(engine: &Engine, sel: &Selection, mwm: Mwm, count: usize) -> Option<String> {
    let rate = engine.expected_nonces_per_second(sel);
    if rate <= 0.0 {
        return None;
    }
    let nonces = mwm.expected_work();
    let per_search = nonces / rate;
    let all = per_search * count as f64;
    let speed = format!("{:.1} M nonces/s", rate / 1e6);
    if per_search > LIFETIME_SECONDS {
        Some(format!(
            "warning: MWM {mwm} expects about {nonces:.1e} nonces per transaction: about {} at \
             the selected devices' {speed}; this search cannot finish in a human lifetime \
             (--timeout bounds it)",
            human_duration(per_search)
        ))
    } else if all >= NOTE_AFTER_SECONDS {
        Some(format!(
            "note: MWM {mwm} expects about {nonces:.1e} nonces per transaction; at the selected \
             devices' {speed}, expect about {} per transaction{}",
            human_duration(per_search),
            if count > 1 {
                format!(", {} for all {count}", human_duration(all))
            } else {
                String::new()
            }
        ))
    } else {
        None
    }
}

/// Print [`message`]: warnings always, notes unless `quiet`.
pub fn announce(engine: &Engine, sel: &Selection, mwm: Mwm, count: usize, quiet: bool) {
    if let Some(m) = message(engine, sel, mwm, count) {
        if !quiet || m.starts_with("warning") {
            errln!("curlpow: {m}");
        }
    }
}

/// A human reading of a duration in seconds: "40 ms", "12 s", "3 min", "5.2 h", "9 days",
/// "31 years", "8.7e99 years".
pub fn human_duration(secs: f64) -> String {
    if secs < 1.0 {
        format!("{:.0} ms", secs * 1e3)
    } else if secs < 120.0 {
        format!("{secs:.0} s")
    } else if secs < 7200.0 {
        format!("{:.0} min", secs / 60.0)
    } else if secs < 2.0 * 86400.0 {
        format!("{:.1} h", secs / 3600.0)
    } else if secs < YEAR {
        format!("{:.0} days", secs / 86400.0)
    } else if secs < 1e6 * YEAR {
        format!("{:.0} years", secs / YEAR)
    } else {
        format!("{:.1e} years", secs / YEAR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(human_duration(0.04), "40 ms");
        assert_eq!(human_duration(12.0), "12 s");
        assert_eq!(human_duration(180.0), "3 min");
        assert_eq!(human_duration(5.0 * 3600.0), "5.0 h");
        assert_eq!(human_duration(9.0 * 86400.0), "9 days");
        assert_eq!(human_duration(31.0 * YEAR), "31 years");
        assert_eq!(human_duration(8.7e99 * YEAR), "8.7e99 years");
    }
}
