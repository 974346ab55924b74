//! The scalar Curl-P-81 permutation exactly as specified: the slow, obvious reference every
//! fast path is tested against.

use super::{INDEX, ROUNDS, STATE_LEN};
use crate::ternary::trinary::Trit;

/// `T[a + 4·b + 5]` is the S-box output for inputs `a = old[I[i]]`, `b = old[I[i+1]]` (entries 3
/// and 7 are never used).
const TRUTH_TABLE: [Trit; 11] = [1, 0, -1, 2, 1, -1, 0, 2, -1, 1, 0];

/// The Curl-P-81 permutation on a 729-trit state: 81 rounds of
/// `new[i] = T[old[I[i]] + 4·old[I[i+1]] + 5]`.
pub fn transform(state: &mut [Trit; STATE_LEN]) {
    let mut old = [0i8; STATE_LEN];
    for _ in 0..ROUNDS {
        old.copy_from_slice(state);
        for (i, s) in state.iter_mut().enumerate() {
            let a = old[INDEX[i]];
            let b = old[INDEX[i + 1]];
            *s = TRUTH_TABLE[(a + 4 * b + 5) as usize];
        }
    }
}
