//! The attachToTangle rules checked on a result, with the library's scalar reference hash:
//! shared by the library, server, load and client-compatibility tests.
use curlpow::{attach::Hash, attach::MAX_TIMESTAMP, Field, Transaction};

/// A number in balanced ternary.
pub fn read_number(tx: &Transaction, f: Field) -> i128 {
    tx.field(f)
        .iter()
        .rev()
        .fold(0i128, |acc, &t| acc * 3 + t as i128)
}

/// Check `output` (the answer, tail first) against `input` (the request, any order), the tips,
/// the MWM and a window of acceptable attachment timestamps (ms). Returns a description of the
/// first broken rule.
pub fn check(
    input: &[Transaction],
    trunk: &Hash,
    branch: &Hash,
    mwm: usize,
    timestamps: std::ops::RangeInclusive<u64>,
    output: &[Transaction],
) -> Result<(), String> {
    if input.len() != output.len() {
        return Err(format!(
            "{} transactions answered for {}",
            output.len(),
            input.len()
        ));
    }
    // IRI's processing order: currentIndex highest first (stable).
    let mut order: Vec<&Transaction> = input.iter().collect();
    order.sort_by_key(|t| std::cmp::Reverse(read_number(t, Field::CurrentIndex)));
    let processed: Vec<&Transaction> = output.iter().rev().collect();
    let set_by_attach = [
        Field::TrunkTransaction,
        Field::BranchTransaction,
        Field::Tag,
        Field::AttachmentTimestamp,
        Field::AttachmentTimestampLowerBound,
        Field::AttachmentTimestampUpperBound,
        Field::Nonce,
    ];
    let mut prev: Option<Vec<i8>> = None;
    for (k, (inp, out)) in order.iter().zip(&processed).enumerate() {
        let at = format!("processed #{k} (answer index {})", output.len() - 1 - k);
        for f in Field::ALL {
            if !set_by_attach.contains(&f) && inp.field(f) != out.field(f) {
                return Err(format!("{at}: {f:?} changed"));
            }
        }
        let want_trunk: Vec<i8> = prev.clone().unwrap_or_else(|| trunk.trits().to_vec());
        let want_branch = if k == 0 { branch } else { trunk };
        if out.field(Field::TrunkTransaction) != want_trunk.as_slice() {
            return Err(format!("{at}: trunk is not the chain's"));
        }
        if out.field(Field::BranchTransaction) != want_branch.trits().as_slice() {
            return Err(format!("{at}: branch is not the chain's"));
        }
        let tag_in = inp.field(Field::Tag);
        let want_tag = if tag_in.iter().all(|&t| t == 0) {
            inp.field(Field::ObsoleteTag)
        } else {
            tag_in
        };
        if out.field(Field::Tag) != want_tag {
            return Err(format!("{at}: tag rule broken"));
        }
        let ts = read_number(out, Field::AttachmentTimestamp);
        if !(*timestamps.start() as i128..=*timestamps.end() as i128).contains(&ts) {
            return Err(format!(
                "{at}: attachment timestamp {ts} outside {timestamps:?}"
            ));
        }
        if read_number(out, Field::AttachmentTimestampLowerBound) != 0 {
            return Err(format!("{at}: lower bound is not 0"));
        }
        if read_number(out, Field::AttachmentTimestampUpperBound) != MAX_TIMESTAMP as i128 {
            return Err(format!("{at}: upper bound is not (3^27-1)/2"));
        }
        let hash = out.hash();
        let w = curlpow::trits::trailing_zeros(&hash);
        if w < mwm {
            return Err(format!("{at}: weight {w} < MWM {mwm}"));
        }
        prev = Some(hash);
    }
    Ok(())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The iota.js bundle vector: (request trunk, request branch, request trytes head first).
pub fn iota_js_bundle() -> (Hash, Hash, Vec<Transaction>) {
    let v = crate::common::vectors("attach_to_tangle_bundle_iota_js.json");
    let req = &v["attachToTangle_request"];
    let trunk: Hash = req["trunkTransaction"].as_str().unwrap().parse().unwrap();
    let branch: Hash = req["branchTransaction"].as_str().unwrap().parse().unwrap();
    let mut txs: Vec<Transaction> = v["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trytes"].as_str().unwrap().parse().unwrap())
        .collect();
    // The vector lists them tail first (the response's order); a request is head first.
    txs.reverse();
    (trunk, branch, txs)
}
