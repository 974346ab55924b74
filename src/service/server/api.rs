//! The IRI commands the server answers, as plain functions: request parsing with IRI's
//! messages (straight from the body's bytes into bounded, typed fields: no JSON tree), and the
//! answer bodies. The HTTP layer (`routes.rs`) stays thin over these and over
//! [`Engine::attach_to_tangle`](crate::Engine::attach_to_tangle).

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{json, Map, Value};

use super::errors::{ApiError, INVALID_PARAMETERS};
use crate::engine::attach::Hash;
use crate::ternary::transaction::{Transaction, TRANSACTION_TRYTES};

/// The commands, as the metrics label them (a fixed set: a client cannot grow it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// `attachToTangle`.
    AttachToTangle,
    /// `interruptAttachingToTangle`.
    InterruptAttachingToTangle,
    /// `getNodeInfo`.
    GetNodeInfo,
}

impl Command {
    /// Parse IRI's command name (case-sensitive, as IRI).
    pub(crate) fn from_name(s: &str) -> Option<Command> {
        match s {
            "attachToTangle" => Some(Command::AttachToTangle),
            "interruptAttachingToTangle" => Some(Command::InterruptAttachingToTangle),
            "getNodeInfo" => Some(Command::GetNodeInfo),
            _ => None,
        }
    }

    /// The name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Command::AttachToTangle => "attachToTangle",
            Command::InterruptAttachingToTangle => "interruptAttachingToTangle",
            Command::GetNodeInfo => "getNodeInfo",
        }
    }
}

/// The checked trytes of one transaction (2673 bytes of `9A-Z`): what a queued attach holds
/// until it runs, a third of the memory of the transaction's trits.
#[derive(Debug, Clone)]
pub(crate) struct TxTrytes(Box<str>);

impl TxTrytes {
    /// The transaction (the trytes were checked when parsed, so this does not fail).
    pub(crate) fn transaction(&self) -> Result<Transaction, crate::base::error::Error> {
        self.0.parse()
    }
}

/// A parsed `attachToTangle`.
#[derive(Debug, Clone)]
pub(crate) struct AttachRequest {
    /// `trunkTransaction`.
    pub trunk: Hash,
    /// `branchTransaction`.
    pub branch: Hash,
    /// `minWeightMagnitude`, checked here.
    pub mwm: crate::search::search_job::Mwm,
    /// `trytes`, in request order.
    pub transactions: Vec<TxTrytes>,
}

/// The request limits that parsing checks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParseLimits {
    /// Highest MWM accepted.
    pub max_mwm: usize,
    /// Most transactions per request (IRI's `maxRequestsList`).
    pub max_transactions: usize,
}

/// A request body, read field by field into bounded, typed values: no JSON tree is built, and
/// fields the API does not use are skipped without being stored, whatever their size.
#[derive(Debug, Default)]
pub(crate) struct RequestFields {
    command: Option<Scalar>,
    trunk: Option<Scalar>,
    branch: Option<Scalar>,
    mwm: Option<Scalar>,
    trytes: Option<TrytesField>,
}

/// The longest string field kept as it is (a hash has 81 trytes, a command name a few dozen
/// bytes); a longer one is kept as its length and first bytes.
const MAX_SCALAR_BYTES: usize = 128;

/// A JSON value where the API wants a string or a number.
#[derive(Debug)]
enum Scalar {
    Str(String),
    /// A string longer than [`MAX_SCALAR_BYTES`]: its first bytes and its length.
    LongStr(String, usize),
    Number(f64),
    /// Anything else, described (`true`, `null`, `an array`, `an object`).
    Other(&'static str),
}

impl Scalar {
    fn describe(&self) -> String {
        match self {
            Scalar::Str(s) => format!("{s:?}"),
            Scalar::LongStr(s, n) => format!("{s:?}… ({n} bytes)"),
            Scalar::Number(n) => format!("{n}"),
            Scalar::Other(what) => (*what).to_string(),
        }
    }
}

#[derive(Debug)]
enum TrytesField {
    NotArray,
    List {
        /// The transactions kept: at most `max_transactions`, none after the first bad one.
        txs: Vec<TxTrytes>,
        /// How many elements the array had.
        count: usize,
        /// The first bad element: its index and what is wrong.
        bad: Option<(usize, String)>,
    },
}

/// The first `MAX_SCALAR_BYTES` bytes of `s` (at a character boundary).
fn prefix(s: &str) -> &str {
    let mut end = s.len().min(MAX_SCALAR_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Scalar, E> {
        Ok(if s.len() > MAX_SCALAR_BYTES {
            Scalar::LongStr(prefix(s).to_string(), s.len())
        } else {
            Scalar::Str(s.to_string())
        })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v as f64))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v as f64))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Other(if v { "true" } else { "false" }))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Other("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an object"))
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

/// One element of `trytes`: checked trytes, or what is wrong with it.
struct TryteElement(Result<TxTrytes, String>);

impl<'de> Deserialize<'de> for TryteElement {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TryteElement, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TryteElement;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string of 2673 trytes")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TryteElement, E> {
                // Every byte a tryte, as IRI checks it: `Transaction::from_str` takes one
                // trailing line end (for lines read from files), which a JSON string must not
                // carry.
                let checked = crate::ternary::trinary::check_trytes(s)
                    .map_err(crate::base::error::Error::from)
                    .and_then(|n| {
                        if n == TRANSACTION_TRYTES {
                            Ok(())
                        } else {
                            Err(crate::base::error::TryteError::Length {
                                found: n,
                                expected: "2673",
                            }
                            .into())
                        }
                    });
                Ok(TryteElement(match checked {
                    Ok(()) => Ok(TxTrytes(s.into())),
                    Err(e) => Err(e.to_string()),
                }))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TryteElement, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(TryteElement(Err("expected a string".into())))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TryteElement, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(TryteElement(Err("expected a string".into())))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<TryteElement, E> {
                Ok(TryteElement(Err("expected a string".into())))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<TryteElement, E> {
                Ok(TryteElement(Err("expected a string".into())))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<TryteElement, E> {
                Ok(TryteElement(Err("expected a string".into())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<TryteElement, E> {
                Ok(TryteElement(Err("expected a string".into())))
            }
            fn visit_unit<E: de::Error>(self) -> Result<TryteElement, E> {
                Ok(TryteElement(Err("expected a string".into())))
            }
        }
        d.deserialize_any(V)
    }
}

/// `trytes`, read element by element: at most `max` kept, the rest only counted.
struct TrytesSeed {
    max: usize,
}

impl<'de> DeserializeSeed<'de> for TrytesSeed {
    type Value = TrytesField;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<TrytesField, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TrytesSeed {
    type Value = TrytesField;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of 2673-tryte strings")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TrytesField, A::Error> {
        let mut txs = Vec::new();
        let mut count = 0;
        let mut bad = None;
        loop {
            if bad.is_some() || count >= self.max {
                // Past the limit or after a bad element: count the rest, keep nothing.
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    count += 1;
                }
                break;
            }
            match seq.next_element::<TryteElement>()? {
                None => break,
                Some(TryteElement(Ok(t))) => txs.push(t),
                Some(TryteElement(Err(e))) => bad = Some((count, e)),
            }
            count += 1;
        }
        if count > self.max {
            txs = Vec::new();
        }
        Ok(TrytesField::List { txs, count, bad })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TrytesField, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(TrytesField::NotArray)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<TrytesField, E> {
        Ok(TrytesField::NotArray)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<TrytesField, E> {
        Ok(TrytesField::NotArray)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<TrytesField, E> {
        Ok(TrytesField::NotArray)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<TrytesField, E> {
        Ok(TrytesField::NotArray)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<TrytesField, E> {
        Ok(TrytesField::NotArray)
    }
    fn visit_unit<E: de::Error>(self) -> Result<TrytesField, E> {
        Ok(TrytesField::NotArray)
    }
}

/// A key of the request object: the fields the API reads, and the rest (never stored).
enum Key {
    Command,
    Trunk,
    Branch,
    Mwm,
    Trytes,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "command" => Key::Command,
                    "trunkTransaction" => Key::Trunk,
                    "branchTransaction" => Key::Branch,
                    "minWeightMagnitude" => Key::Mwm,
                    "trytes" => Key::Trytes,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// The whole body: an object, or what it is instead.
struct BodySeed {
    max_transactions: usize,
}

impl<'de> DeserializeSeed<'de> for BodySeed {
    type Value = Option<RequestFields>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<RequestFields>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BodySeed {
    type Value = Option<RequestFields>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object with a command")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<RequestFields>, A::Error> {
        let mut r = RequestFields::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Command => r.command = Some(map.next_value()?),
                Key::Trunk => r.trunk = Some(map.next_value()?),
                Key::Branch => r.branch = Some(map.next_value()?),
                Key::Mwm => r.mwm = Some(map.next_value()?),
                Key::Trytes => {
                    r.trytes = None; // a repeated key: the last one counts, as before
                    r.trytes = Some(map.next_value_seed(TrytesSeed {
                        max: self.max_transactions,
                    })?)
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(r))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<RequestFields>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<RequestFields>, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<RequestFields>, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<RequestFields>, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<RequestFields>, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<RequestFields>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<RequestFields>, E> {
        Ok(None)
    }
}

/// Read a request body into its fields (IRI's "Invalid JSON syntax" and "Invalid request
/// payload" answers on failure). `max_transactions` bounds what `trytes` may keep.
pub(crate) fn read_fields(body: &[u8], max_transactions: usize) -> Result<RequestFields, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let fields = BodySeed { max_transactions }
        .deserialize(&mut de)
        .and_then(|f| de.end().map(|()| f))
        .map_err(|e| ApiError::bad(format!("Invalid JSON syntax: {e}")))?;
    fields.ok_or_else(|| {
        ApiError::bad("Invalid request payload: expected a JSON object with a command")
    })
}

impl RequestFields {
    /// The command: `Ok(None)` when the field is missing or not a string (IRI's "COMMAND
    /// parameter has not been specified"), `Err(name)` when it names no known command.
    pub(crate) fn command(&self) -> Option<Result<Command, String>> {
        match &self.command {
            Some(Scalar::Str(s)) => Some(Command::from_name(s).ok_or_else(|| s.clone())),
            Some(Scalar::LongStr(s, _)) => Some(Err(format!("{s}…"))),
            _ => None,
        }
    }
}

fn field<T>(v: Option<T>) -> Result<T, ApiError> {
    v.ok_or_else(|| ApiError::bad(INVALID_PARAMETERS))
}

fn hash_field(v: Option<&Scalar>, name: &str) -> Result<Hash, ApiError> {
    match field(v)? {
        Scalar::Str(s) => s
            .parse::<Hash>()
            .map_err(|e| ApiError::bad(format!("Invalid {name} input: {e}"))),
        Scalar::LongStr(_, n) => Err(ApiError::bad(format!(
            "Invalid {name} input: {n} bytes, expected 81 trytes"
        ))),
        _ => Err(ApiError::bad(format!(
            "Invalid {name} input: expected a string of 81 trytes"
        ))),
    }
}

/// Check an `attachToTangle` request, in IRI's order (trunk, branch, MWM, trytes) and with its
/// messages; a missing field is "Invalid parameters".
pub(crate) fn parse_attach(
    req: RequestFields,
    limits: ParseLimits,
) -> Result<AttachRequest, ApiError> {
    let trunk = hash_field(req.trunk.as_ref(), "trunkTransaction")?;
    let branch = hash_field(req.branch.as_ref(), "branchTransaction")?;
    let mwm_value = field(req.mwm.as_ref())?;
    // IRI reads a JSON number and truncates it to an integer.
    let mwm = match mwm_value {
        Scalar::Number(m) if *m >= 0.0 && m.is_finite() => m.trunc(),
        other => {
            return Err(ApiError::bad(format!(
                "Invalid minWeightMagnitude input: expected a number from 0 to {}, got {}",
                limits.max_mwm,
                other.describe()
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
    let mwm = crate::search::search_job::Mwm::try_from(mwm as usize).map_err(|_| {
        ApiError::bad(format!(
            "Invalid minWeightMagnitude input: expected a number from 0 to {}, got {}",
            crate::search::search_job::Mwm::MAX,
            mwm_value.describe()
        ))
    })?;
    let (txs, count, bad) = match field(req.trytes)? {
        TrytesField::NotArray => {
            return Err(ApiError::bad(
                "Invalid trytes input: expected an array of 2673-tryte strings",
            ))
        }
        TrytesField::List { txs, count, bad } => (txs, count, bad),
    };
    if count > limits.max_transactions {
        return Err(ApiError::bad(format!(
            "Could not complete request: {count} transactions, this server takes at most {} per request (--max-requests-list)",
            limits.max_transactions
        )));
    }
    if let Some((i, e)) = bad {
        return Err(ApiError::bad(format!(
            "Invalid trytes input: trytes[{i}]: {e}"
        )));
    }
    Ok(AttachRequest {
        trunk,
        branch,
        mwm,
        transactions: txs,
    })
}

/// The `attachToTangle` answer body (without `duration`).
pub(crate) fn attach_answer(trytes: Vec<String>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("trytes".into(), json!(trytes));
    m
}

/// What `getNodeInfo` reports about the server besides the devices.
#[derive(Debug, Clone)]
pub(crate) struct NodeInfo {
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
pub(crate) fn node_info_answer(
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

    fn parse(v: &Value) -> Result<AttachRequest, ApiError> {
        let fields = read_fields(v.to_string().as_bytes(), L.max_transactions)?;
        parse_attach(fields, L)
    }

    fn err(v: Value) -> String {
        match parse(&v) {
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
        let r = parse(&good()).unwrap();
        assert_eq!(r.mwm, crate::search::search_job::Mwm::TESTNET);
        assert_eq!(r.transactions.len(), 1);
        assert_eq!(
            r.transactions[0].transaction().unwrap().to_trytes(),
            "9".repeat(2673)
        );
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

    #[test]
    fn unused_fields_are_skipped_and_only_the_limit_is_kept() {
        // A junk array of a million numbers and a huge string next to a good request: skipped.
        let mut v = good();
        v["junk"] = json!(vec![1; 1_000_000]);
        v["pad"] = json!("x".repeat(1 << 20));
        v["trytes"] = json!(["9".repeat(2673), "9".repeat(2673)]);
        assert_eq!(parse(&v).unwrap().transactions.len(), 2);
        // Over the limit: counted, not kept, and the message has the count.
        v["trytes"] = json!(vec!["9".repeat(2673); 5]);
        assert!(err(v).contains("5 transactions"));
        // A long command name is echoed cut short.
        let f = read_fields(
            json!({"command": "x".repeat(10_000)})
                .to_string()
                .as_bytes(),
            2,
        )
        .unwrap();
        match f.command() {
            Some(Err(name)) => assert!(name.len() < 200, "{name}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bodies_that_are_not_an_object_or_not_json() {
        for (body, want) in [
            (&b"{\"command\": "[..], "Invalid JSON syntax"),
            (b"[1, 2]", "Invalid request payload"),
            (b"5", "Invalid request payload"),
            (b"{} x", "Invalid JSON syntax"),
        ] {
            match read_fields(body, 2) {
                Err(ApiError::BadRequest(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        let f = read_fields(br#"{"command": 5}"#, 2).unwrap();
        assert!(f.command().is_none());
        let f = read_fields(br#"{"command": "getTips"}"#, 2).unwrap();
        assert_eq!(f.command().unwrap().unwrap_err(), "getTips");
    }
}
