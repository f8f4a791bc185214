//! Client and user identifiers (`catalogue::IDENTIFIERS`: `user`, `token_name`,
//! `client_ip`) are written only as salted hashes unless `--keep-ids` is given.
//!
//! Latency diagnosis needs to tell clients apart (is one user's traffic slow?), never to
//! know who they are. So right after the canonical projection, before the rules, the
//! summaries or any output see a row, every identifier value is replaced with
//! HMAC-SHA256(salt, value), hex, truncated to 16 characters. Nulls stay null.
//!
//! The salt is the user's (`--salt` or `TRACEDIAG_SALT`: the same salt gives the same
//! hashes, so outputs of several runs can be joined) or drawn from the operating system's
//! random number generator for each run (hashes cannot be joined across runs, nor
//! reversed by hashing guessed ids). The salt is never printed: reports show its
//! fingerprint, the first 8 hex characters of SHA-256(salt), so two outputs can be checked
//! for joinability without revealing it. A random salt makes the hashes differ from run to
//! run: the one exception to "same input, byte-identical output", and only when the input
//! has an identifier column.

use std::collections::HashMap;
use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use polars::prelude::*;
use sha2::{Digest, Sha256};

use crate::catalogue::IDENTIFIERS;
use crate::error::{Error, Result};
use crate::source::Input;
use crate::summary::ClientIds;

type HmacSha256 = Hmac<Sha256>;

/// Hex characters kept of each hash: 64 bits, so distinct ids collide with negligible
/// probability in any log while the columns stay short.
pub const HASH_HEX_LEN: usize = 16;
/// Hex characters of the salt's fingerprint: enough to tell salts apart, far too few to
/// help anyone recover a salt.
pub const FINGERPRINT_HEX_LEN: usize = 8;
/// Bytes of a random per-run salt (the HMAC-SHA256 key size that gives full strength).
const RANDOM_SALT_BYTES: usize = 32;

/// Where a salt came from; reported (the salt itself never is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaltSource {
    /// `--salt` or `TRACEDIAG_SALT`: stable hashes across runs.
    Given,
    /// Drawn for this run: hashes differ from run to run.
    Random,
}

/// The HMAC key. Its `Debug` shows the source and the fingerprint, never the bytes, so a
/// stray `{:?}` cannot leak it.
#[derive(Clone)]
pub struct Salt {
    bytes: Vec<u8>,
    source: SaltSource,
}

impl Salt {
    /// A salt the user gave. An empty one would hash nothing away: refused.
    pub fn given(secret: &str) -> Result<Salt> {
        if secret.is_empty() {
            return Err(Error::Usage(
                "--salt: the salt is empty; give a secret, or leave --salt out for a random per-run salt".into(),
            ));
        }
        Ok(Salt {
            bytes: secret.as_bytes().to_vec(),
            source: SaltSource::Given,
        })
    }

    /// A fresh salt from the operating system's cryptographic random number generator.
    pub fn random() -> Result<Salt> {
        let mut bytes = vec![0u8; RANDOM_SALT_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| {
            Error::Usage(format!(
                "cannot draw a random salt for the client ids ({e}); give one with --salt"
            ))
        })?;
        Ok(Salt {
            bytes,
            source: SaltSource::Random,
        })
    }

    pub fn source(&self) -> SaltSource {
        self.source
    }

    /// The first 8 hex characters of SHA-256 of the salt: equal fingerprints mean the
    /// hashes of two outputs can be joined. (For a given salt,
    /// `printf %s "$SALT" | sha256sum | cut -c1-8` gives the same.)
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(&self.bytes);
        hex(&digest)[..FINGERPRINT_HEX_LEN].to_string()
    }

    /// The keyed HMAC state; cloned per value so the key is processed once.
    fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.bytes).expect("HMAC takes a key of any length")
    }

    /// The hash `apply` writes for `value`.
    pub fn hash(&self, value: &str) -> String {
        let h = hash_hex(&self.mac(), value);
        String::from_utf8(h.to_vec()).expect("hex digits are ASCII")
    }
}

impl fmt::Debug for Salt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Salt")
            .field("source", &self.source)
            .field("fingerprint", &self.fingerprint())
            .finish()
    }
}

/// What to do with client identifiers.
#[derive(Debug, Clone)]
pub enum IdPolicy {
    /// `--keep-ids`: written as logged.
    Keep,
    /// Replaced with salted hashes (the default).
    Salted(Salt),
}

impl IdPolicy {
    /// What the reports say about `fields` (the identifier fields the input had): `None`
    /// when there were none, so inputs without identifiers give unchanged outputs.
    pub fn record(&self, fields: Vec<String>) -> Option<ClientIds> {
        if fields.is_empty() {
            return None;
        }
        Some(match self {
            IdPolicy::Keep => ClientIds {
                fields,
                written_as: ClientIds::KEPT,
                salt: None,
                salt_fingerprint: None,
            },
            IdPolicy::Salted(salt) => ClientIds {
                fields,
                written_as: ClientIds::SALTED,
                salt: Some(match salt.source {
                    SaltSource::Given => ClientIds::GIVEN,
                    SaltSource::Random => ClientIds::RANDOM,
                }),
                salt_fingerprint: Some(salt.fingerprint()),
            },
        })
    }
}

/// The identifier fields any of `inputs` maps, in catalogue order.
pub fn found(inputs: &[Input]) -> Vec<String> {
    IDENTIFIERS
        .iter()
        .filter(|name| {
            inputs
                .iter()
                .any(|i| i.mapping.found().any(|(f, _)| f == **name))
        })
        .map(|name| name.to_string())
        .collect()
}

/// Replace every identifier column of `lf` with its salted hashes (`Keep`: unchanged).
/// Called on the canonical projection, where every identifier column exists (null when
/// the input lacks it).
pub fn apply(mut lf: LazyFrame, policy: &IdPolicy) -> LazyFrame {
    let IdPolicy::Salted(salt) = policy else {
        return lf;
    };
    let names: Vec<&str> = match lf.collect_schema() {
        Ok(schema) => IDENTIFIERS
            .iter()
            .copied()
            .filter(|n| schema.contains(n))
            .collect(),
        // Hash if in doubt: the plan's own error surfaces when it is collected.
        Err(_) => IDENTIFIERS.to_vec(),
    };
    if names.is_empty() {
        return lf;
    }
    let exprs: Vec<Expr> = names
        .into_iter()
        .map(|name| {
            let mac = salt.mac();
            col(name)
                .map(
                    move |c: Column| hash_column(&c, &mac),
                    |_, f: &Field| Ok(Field::new(f.name().clone(), DataType::String)),
                )
                .alias(name)
        })
        .collect();
    lf.with_columns(exprs)
}

/// Distinct values remembered per call. A log repeats a few thousand clients over
/// millions of rows, so most rows are a lookup instead of an HMAC; the cap keeps a column
/// of all-distinct values (addresses, say) from paying for a huge map that never hits.
const CACHE_LIMIT: usize = 65_536;

/// One column (or chunk of it) hashed, each remembered value once.
fn hash_column(c: &Column, mac: &HmacSha256) -> PolarsResult<Column> {
    let text = c.cast(&DataType::String)?;
    let ca = text.str()?;
    let mut cache: HashMap<&str, [u8; HASH_HEX_LEN]> = HashMap::new();
    let mut out = StringChunkedBuilder::new(c.name().clone(), ca.len());
    for value in ca.iter() {
        let Some(s) = value else {
            out.append_null();
            continue;
        };
        let h = match cache.get(s) {
            Some(h) => *h,
            None => {
                let h = hash_hex(mac, s);
                if cache.len() < CACHE_LIMIT {
                    cache.insert(s, h);
                }
                h
            }
        };
        out.append_value(std::str::from_utf8(&h).expect("hex digits are ASCII"));
    }
    Ok(out.finish().into_column())
}

/// HMAC-SHA256 of `value`, its first `HASH_HEX_LEN` hex digits.
fn hash_hex(mac: &HmacSha256, value: &str) -> [u8; HASH_HEX_LEN] {
    let mut m = mac.clone();
    m.update(value.as_bytes());
    let code = m.finalize().into_bytes();
    let mut out = [0u8; HASH_HEX_LEN];
    for (i, b) in code[..HASH_HEX_LEN / 2].iter().enumerate() {
        out[2 * i] = HEX_DIGITS[(b >> 4) as usize];
        out[2 * i + 1] = HEX_DIGITS[(b & 0xf) as usize];
    }
    out
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX_DIGITS[(b >> 4) as usize] as char);
        s.push(HEX_DIGITS[(b & 0xf) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231, test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?").
    #[test]
    fn hash_is_truncated_hmac_sha256() {
        let salt = Salt::given("Jefe").unwrap();
        assert_eq!(
            salt.hash("what do ya want for nothing?"),
            "5bdcc146bf60754e"
        );
    }

    /// SHA-256("abc") starts ba7816bf (FIPS 180-2).
    #[test]
    fn fingerprint_is_the_start_of_sha256() {
        assert_eq!(Salt::given("abc").unwrap().fingerprint(), "ba7816bf");
    }

    #[test]
    fn debug_never_shows_the_salt() {
        let salt = Salt::given("hunter2-secret").unwrap();
        let text = format!("{:?} {:?}", salt, IdPolicy::Salted(salt.clone()));
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains(&salt.fingerprint()), "{text}");
    }

    #[test]
    fn random_salts_differ_and_empty_is_refused() {
        let a = Salt::random().unwrap();
        let b = Salt::random().unwrap();
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.source(), SaltSource::Random);
        assert!(Salt::given("").is_err());
    }

    #[test]
    fn apply_hashes_identifiers_keeps_nulls_and_other_columns() {
        let salt = Salt::given("s").unwrap();
        let df = df!(
            "user" => [Some("alice"), None, Some("bob"), Some("alice")],
            "client_ip" => [None::<&str>, None, None, None],
            "model" => ["m", "m", "m", "m"],
        )
        .unwrap();
        let out = apply(df.lazy(), &IdPolicy::Salted(salt.clone()))
            .collect()
            .unwrap();
        let user: Vec<Option<String>> = out
            .column("user")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|v| v.map(String::from))
            .collect();
        let alice = salt.hash("alice");
        assert_eq!(alice.len(), HASH_HEX_LEN);
        assert_eq!(
            user,
            [
                Some(alice.clone()),
                None,
                Some(salt.hash("bob")),
                Some(alice)
            ]
        );
        assert_eq!(out.column("client_ip").unwrap().null_count(), 4);
        assert_eq!(
            out.column("model").unwrap().str().unwrap().get(0),
            Some("m")
        );
        assert!(
            out.column("token_name").is_err(),
            "absent columns stay absent"
        );

        let kept = apply(df!("user" => ["alice"]).unwrap().lazy(), &IdPolicy::Keep)
            .collect()
            .unwrap();
        assert_eq!(
            kept.column("user").unwrap().str().unwrap().get(0),
            Some("alice")
        );
    }

    #[test]
    fn record_only_when_identifiers_were_read() {
        assert!(IdPolicy::Keep.record(vec![]).is_none());
        let r = IdPolicy::Salted(Salt::given("x").unwrap())
            .record(vec!["user".into()])
            .unwrap();
        assert_eq!(r.salt, Some(ClientIds::GIVEN));
        assert_eq!(r.salt_fingerprint.as_deref().map(str::len), Some(8));
    }
}
