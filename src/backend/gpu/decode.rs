//! A launch's result words turned into a [`Hit`] ([`decode`]), checked to lie inside the
//! launch: a hit outside it is a backend fault, not a nonce.

use super::launcher::ResultWords;
use crate::base::error::Error;
use crate::search::device::DeviceInfo;
use crate::search::nonce::Hit;

/// The hit in a launch's result words, checked to lie inside the launch.
pub(crate) fn decode(
    words: ResultWords,
    base: u64,
    limit: u64,
    lanes: u64,
    info: &DeviceInfo,
) -> Result<Option<Hit>, Error> {
    if words[0] == 0 {
        return Ok(None);
    }
    let lane = u64::from(words[1]);
    let counter = u64::from(words[2]) | (u64::from(words[3]) << 32);
    if lane >= lanes || counter < base || counter - base >= limit {
        return Err(Error::Backend {
            backend: info.backend,
            device: info.id.clone(),
            message: format!(
                "kernel reported counter {counter} lane {lane}, outside its launch \
                 (counters {base}..{}, {lanes} lanes)",
                base.saturating_add(limit)
            ),
        });
    }
    Ok(Some(Hit {
        counter,
        lane: lane as usize,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::gpu::launcher::RESULT_WORDS;
    use crate::search::device::{Backend, DeviceKind};

    #[test]
    fn a_hit_is_decoded_only_inside_its_launch() {
        let info = DeviceInfo::new("fake:0", Backend::Wgpu, "fake", DeviceKind::Gpu);
        let mut w = [0u32; RESULT_WORDS];
        assert_eq!(decode(w, 0, 10, 32, &info).unwrap(), None, "no hit");
        w[..4].copy_from_slice(&[1, 31, 7, 1]);
        let big = (1u64 << 32) + 7;
        assert_eq!(
            decode(w, big - 2, 3, 32, &info).unwrap(),
            Some(Hit {
                counter: big,
                lane: 31
            }),
            "the counter's two words"
        );
        assert!(decode(w, big - 2, 2, 32, &info).is_err(), "past the launch");
        assert!(
            decode(w, big + 1, 2, 32, &info).is_err(),
            "before the launch"
        );
        w[..4].copy_from_slice(&[1, 40, 5, 0]);
        assert!(decode(w, 0, 10, 32, &info).is_err(), "lane out of range");
    }
}
