//! HTTP Basic auth as IRI's `--remote-auth user:password` does it, with the credentials read from
//! a file (or an environment variable) instead of the command line, where `ps` would show them.

use std::path::Path;

use base64::Engine as _;

use super::ServerError;

/// The one `user:password` pair the server accepts.
#[derive(Clone)]
pub struct Credentials {
    user: String,
    /// `user:password`, as the `Authorization` header carries it once decoded.
    pair: Vec<u8>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl Credentials {
    /// Parse `user:password` (the password may contain `:`; neither part may be empty).
    pub fn parse(line: &str) -> Result<Credentials, ServerError> {
        Self::parse_line(line).map_err(|e| ServerError::Config(format!("remote auth: {e}")))
    }

    fn parse_line(line: &str) -> Result<Credentials, &'static str> {
        let line = line.trim_end_matches(['\r', '\n']);
        match line.split_once(':') {
            Some((user, password)) if !user.is_empty() && !password.is_empty() => Ok(Credentials {
                user: user.to_string(),
                pair: line.as_bytes().to_vec(),
            }),
            _ => Err("expected one line `user:password` (both parts non-empty)"),
        }
    }

    /// Read the first non-blank line of `path` as `user:password`.
    pub fn from_file(path: &Path) -> Result<Credentials, ServerError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ServerError::Config(format!("remote auth file {}: {e}", path.display()))
        })?;
        let line = text
            .lines()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .ok_or_else(|| {
                ServerError::Config(format!(
                    "remote auth file {} holds no `user:password` line",
                    path.display()
                ))
            })?;
        Self::parse_line(line)
            .map_err(|e| ServerError::Config(format!("remote auth file {}: {e}", path.display())))
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Check an `Authorization` header value; `Some(user)` when it carries these credentials.
    /// The comparison takes the same time wherever the first difference is.
    pub fn check(&self, header: Option<&[u8]>) -> Option<&str> {
        let value = header?;
        let encoded = strip_basic(value)?;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim_ascii())
            .ok()?;
        constant_time_eq(&decoded, &self.pair).then_some(self.user.as_str())
    }
}

/// The part after `Basic ` (scheme matched case-insensitively).
fn strip_basic(v: &[u8]) -> Option<&[u8]> {
    let v = v.trim_ascii();
    if v.len() > 6 && v[..6].eq_ignore_ascii_case(b"basic ") {
        Some(&v[6..])
    } else {
        None
    }
}

/// Equal contents, in a time that depends only on the lengths: every byte pair is compared and
/// the differences folded together, with no early exit.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let mut diff = (a.len() ^ b.len()) as u64;
    for i in 0..n {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= u64::from(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(pair: &str) -> Vec<u8> {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
        .into_bytes()
    }

    #[test]
    fn only_the_right_pair_passes() {
        let c = Credentials::parse("alice:s3cr:et\n").unwrap();
        assert_eq!(c.check(Some(&header("alice:s3cr:et"))), Some("alice"));
        assert_eq!(c.check(Some(b"basic YWxpY2U6czNjcjpldA==")), Some("alice"));
        for bad in [
            "alice:s3cr:eT",
            "alice:s3cr:et ",
            "alice",
            "bob:s3cr:et",
            "",
        ] {
            assert_eq!(c.check(Some(&header(bad))), None, "{bad:?}");
        }
        assert_eq!(c.check(None), None);
        assert_eq!(c.check(Some(b"Bearer abc")), None);
        assert_eq!(c.check(Some(b"Basic !!!")), None);
    }

    #[test]
    fn malformed_lines_are_refused() {
        for bad in ["", "alice", ":pw", "alice:", "\n"] {
            assert!(Credentials::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_bad_file_is_named_once_with_no_repeated_prefix() {
        let dir = std::env::temp_dir().join(format!("curlpow-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("auth");
        std::fs::write(&path, "no-colon\n").unwrap();
        let msg = Credentials::from_file(&path).unwrap_err().to_string();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(msg.matches("server configuration").count(), 1, "{msg}");
        assert_eq!(msg.matches("remote auth").count(), 1, "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
    }

    #[test]
    fn constant_time_eq_is_eq() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(constant_time_eq(b"", b""));
    }
}
