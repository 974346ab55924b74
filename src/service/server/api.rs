//! The IRI commands the server answers, as plain functions over JSON: request parsing with IRI's
//! messages, and the answer bodies. The HTTP layer (`routes.rs`) stays thin over these and over
//! [`Engine::attach_to_tangle`](crate::Engine::attach_to_tangle).

use serde_json::{json, Map, Value};

use super::errors::{ApiError, INVALID_PARAMETERS};
use crate::engine::attach::Hash;
use crate::ternary::transaction::Transaction;

/// The commands, as the metrics label them (a fixed set: a client cannot grow it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `attachToTangle`.
    AttachToTangle,
    /// `interruptAttachingToTangle`.
    InterruptAttachingToTangle,
    /// `getNodeInfo`.
    GetNodeInfo,
}

impl Command {
    /// Parse IRI's command name (case-sensitive, as IRI).
    pub fn from_name(s: &str) -> Option<Command> {
        match s {
            "attachToTangle" => Some(Command::AttachToTangle),
            "interruptAttachingToTangle" => Some(Command::InterruptAttachingToTangle),
            "getNodeInfo" => Some(Command::GetNodeInfo),
            _ => None,
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Command::AttachToTangle => "attachToTangle",
            Command::InterruptAttachingToTangle => "interruptAttachingToTangle",
            Command::GetNodeInfo => "getNodeInfo",
        }
    }
}

/// A parsed `attachToTangle`.
#[derive(Debug, Clone)]
pub struct AttachRequest {
    /// `trunkTransaction`.
    pub trunk: Hash,
    /// `branchTransaction`.
    pub branch: Hash,
    /// `minWeightMagnitude`, checked here.
    pub mwm: crate::search::job::Mwm,
    /// `trytes`, in request order.
    pub transactions: Vec<Transaction>,
}

/// The request limits that parsing checks.
#[derive(Debug, Clone, Copy)]
pub struct ParseLimits {
    /// Highest MWM accepted.
    pub max_mwm: usize,
    /// Most transactions per request (IRI's `maxRequestsList`).
    pub max_transactions: usize,
}

fn field<'a>(req: &'a Map<String, Value>, name: &str) -> Result<&'a Value, ApiError> {
    req.get(name)
        .ok_or_else(|| ApiError::bad(INVALID_PARAMETERS))
}

fn hash_field(req: &Map<String, Value>, name: &str) -> Result<Hash, ApiError> {
    let v = field(req, name)?;
    let s = v.as_str().ok_or_else(|| {
        ApiError::bad(format!(
            "Invalid {name} input: expected a string of 81 trytes"
        ))
    })?;
    s.parse::<Hash>()
        .map_err(|e| ApiError::bad(format!("Invalid {name} input: {e}")))
}

/// Parse an `attachToTangle` request, in IRI's order (trunk, branch, MWM, trytes) and with its
/// messages; a missing field is "Invalid parameters".
pub fn parse_attach(
    req: &Map<String, Value>,
    limits: ParseLimits,
) -> Result<AttachRequest, ApiError> {
    let trunk = hash_field(req, "trunkTransaction")?;
    let branch = hash_field(req, "branchTransaction")?;
    let mwm_value = field(req, "minWeightMagnitude")?;
    // IRI reads a JSON number and truncates it to an integer.
    let mwm = match mwm_value.as_f64() {
        Some(m) if m >= 0.0 && m.is_finite() => m.trunc(),
        _ => {
            return Err(ApiError::bad(format!(
                "Invalid minWeightMagnitude input: expected a number from 0 to {}, got {mwm_value}",
                limits.max_mwm
            )))
        }
    };
    if mwm > limits.max_mwm as f64 {
        return Err(ApiError::bad(format!(
            "Invalid minWeightMagnitude input: {mwm} is above this server's limit of {} (--max-mwm)",
            limits.max_mwm
        )));
    }
    // `max_mwm` is at most 243 in a checked config; a larger one still stops at 243 here.
    let mwm = crate::search::job::Mwm::try_from(mwm as usize).map_err(|_| {
        ApiError::bad(format!(
            "Invalid minWeightMagnitude input: expected a number from 0 to {}, got {mwm_value}",
            crate::search::job::Mwm::MAX
        ))
    })?;
    let list = field(req, "trytes")?.as_array().ok_or_else(|| {
        ApiError::bad("Invalid trytes input: expected an array of 2673-tryte strings")
    })?;
    if list.len() > limits.max_transactions {
        return Err(ApiError::bad(format!(
            "Could not complete request: {} transactions, this server takes at most {} per request (--max-requests-list)",
            list.len(),
            limits.max_transactions
        )));
    }
    let mut transactions = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let s = v.as_str().ok_or_else(|| {
            ApiError::bad(format!(
                "Invalid trytes input: trytes[{i}]: expected a string"
            ))
        })?;
        // Every byte a tryte, as IRI checks it: `Transaction::from_str` takes one trailing line
        // end (for lines read from files), which a JSON string must not carry.
        let tx = crate::ternary::trinary::check_trytes(s)
            .map_err(crate::base::error::Error::from)
            .and_then(|_| s.parse::<Transaction>())
            .map_err(|e| ApiError::bad(format!("Invalid trytes input: trytes[{i}]: {e}")))?;
        transactions.push(tx);
    }
    Ok(AttachRequest {
        trunk,
        branch,
        mwm,
        transactions,
    })
}

/// The `attachToTangle` answer body (without `duration`).
pub fn attach_answer(trytes: Vec<String>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("trytes".into(), json!(trytes));
    m
}

/// What `getNodeInfo` reports about the server besides the devices.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    /// Unix time in ms.
    pub time: u64,
    /// Attaches running.
    pub running: usize,
    /// Requests waiting.
    pub waiting: usize,
    /// The concurrency limit.
    pub concurrency: usize,
    /// The queue limit.
    pub queue: usize,
    /// The MWM cap.
    pub max_mwm: usize,
    /// Transactions per request.
    pub max_transactions: usize,
    /// Body bytes.
    pub max_body_length: usize,
    /// Seconds since the server started.
    pub uptime_seconds: u64,
}

/// The `getNodeInfo` answer body (without `duration`): IRI's `appName`, `appVersion`, `time` and
/// `features` (with `"RemotePOW"`, which wallets look for), then the devices and the queue.
pub fn node_info_answer(
    info: &NodeInfo,
    devices: &[crate::engine::registry::DeviceReport],
) -> Map<String, Value> {
    let devices: Vec<Value> = devices
        .iter()
        .map(|d| {
            json!({
                "id": d.info.id,
                "backend": d.info.backend,
                "name": d.info.name,
                "kind": d.info.kind,
                "state": if d.stats.healthy { "healthy" } else { "faulty" },
                "searches": d.stats.searches,
                "nonces": d.stats.nonces,
                "faults": d.stats.errors,
                "busySeconds": d.stats.busy_seconds,
            })
        })
        .collect();
    let v = json!({
        "appName": "curlpow",
        "appVersion": env!("CARGO_PKG_VERSION"),
        "time": info.time,
        "features": ["RemotePOW"],
        "devices": devices,
        "attachesRunning": info.running,
        "attachesWaiting": info.waiting,
        "limits": {
            "concurrency": info.concurrency,
            "queue": info.queue,
            "maxMinWeightMagnitude": info.max_mwm,
            "maxRequestsList": info.max_transactions,
            "maxBodyLength": info.max_body_length,
        },
        "uptimeSeconds": info.uptime_seconds,
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: ParseLimits = ParseLimits {
        max_mwm: 14,
        max_transactions: 2,
    };

    fn req(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn err(v: Value) -> String {
        match parse_attach(&req(v), L) {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("expected a 400, got {other:?}"),
        }
    }

    fn good() -> Value {
        json!({
            "command": "attachToTangle",
            "trunkTransaction": "A".repeat(81),
            "branchTransaction": "B".repeat(81),
            "minWeightMagnitude": 9.7,
            "trytes": ["9".repeat(2673)],
        })
    }

    #[test]
    fn a_good_request_parses_and_the_mwm_is_truncated() {
        let r = parse_attach(&req(good()), L).unwrap();
        assert_eq!(r.mwm, crate::search::job::Mwm::TESTNET);
        assert_eq!(r.transactions.len(), 1);
    }

    #[test]
    fn iri_messages() {
        assert_eq!(
            err(json!({"command": "attachToTangle"})),
            INVALID_PARAMETERS
        );
        for (k, bad, want) in [
            (
                "trunkTransaction",
                json!("A"),
                "Invalid trunkTransaction input",
            ),
            (
                "branchTransaction",
                json!(5),
                "Invalid branchTransaction input",
            ),
            (
                "minWeightMagnitude",
                json!("14"),
                "Invalid minWeightMagnitude input",
            ),
            (
                "minWeightMagnitude",
                json!(-1),
                "Invalid minWeightMagnitude input",
            ),
            ("minWeightMagnitude", json!(15), "--max-mwm"),
            ("trytes", json!("x"), "Invalid trytes input"),
            ("trytes", json!([1]), "trytes[0]"),
            (
                "trytes",
                json!(["9".repeat(2673), "9".repeat(2672)]),
                "trytes[1]: length 2672",
            ),
            ("trytes", json!(["9", "9", "9"]), "at most 2"),
            (
                "trytes",
                json!([format!("{}\n", "9".repeat(2673))]),
                "trytes[0]: column 2674: U+000A",
            ),
            (
                "trytes",
                json!([format!("{}\r\n", "9".repeat(2673))]),
                "trytes[0]: column 2674: U+000D",
            ),
        ] {
            let mut v = good();
            v[k] = bad;
            let m = err(v);
            assert!(m.contains(want), "{k}: {m}");
        }
        let mut v = good();
        v.as_object_mut().unwrap().remove("trytes");
        assert_eq!(err(v), INVALID_PARAMETERS);
    }
}
