//! Reading limits from serde data: each value checked, each error naming its key and text.
//! * Top-level keys are closed (`default`, `names`); names are open, non-empty.
//! * A limit is a `humantime` duration (`800ms`, `2s`, `1m30s`), above zero and at most
//!   [`Limits::MAX`](super::Limits::MAX).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, Visitor};

/// A bad limit: the key it was under, the text given, and what is wrong with it.
///
/// ```
/// let err = punctual::report::Limits::from_toml("[names]\npricing = \"0s\"").unwrap_err();
/// assert_eq!(err.key(), "names.pricing");
/// assert_eq!(err.text(), "0s");
/// assert_eq!(err.to_string(), "limit `names.pricing` = `0s`: zero; a limit must be above zero");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitsError {
    key: String,
    text: String,
    problem: String,
}

impl LimitsError {
    pub(super) fn new(key: &str, text: &str, problem: impl Into<String>) -> Self {
        Self {
            key: key.to_owned(),
            text: text.to_owned(),
            problem: problem.into(),
        }
    }

    /// The key: `default`, `names.<name>`, an unknown key, or empty for a document that
    /// does not parse.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The text given for it (for a document that does not parse, the parser's message).
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "limits: {}: {}", self.problem, self.text)
        } else {
            write!(
                f,
                "limit `{}` = `{}`: {}",
                self.key, self.text, self.problem
            )
        }
    }
}

impl std::error::Error for LimitsError {}

/// `text` as a limit, or why not.
pub(super) fn parse_limit(key: &str, text: &str) -> Result<Duration, LimitsError> {
    let limit = humantime::parse_duration(text.trim()).map_err(|e| {
        LimitsError::new(
            key,
            text,
            format!("not a duration ({e}); write it as `800ms`, `2s` or `1m30s`"),
        )
    })?;
    check_limit(key, text, limit)
}

/// `limit`, if in range.
pub(super) fn check_limit(key: &str, text: &str, limit: Duration) -> Result<Duration, LimitsError> {
    if limit.is_zero() {
        return Err(LimitsError::new(
            key,
            text,
            "zero; a limit must be above zero",
        ));
    }
    if limit > super::Limits::MAX {
        return Err(LimitsError::new(
            key,
            text,
            format!(
                "out of range; a limit is at most {}",
                humantime::format_duration(super::Limits::MAX)
            ),
        ));
    }
    Ok(limit)
}

/// A value as read, before it is checked: a scalar as text, or a table of them.
#[derive(Debug)]
pub(super) enum Raw {
    Text(String),
    Table(BTreeMap<String, Raw>),
    Other(&'static str),
}

impl<'de> de::Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration such as \"800ms\", or a table of them")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Text(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Text(v.to_string()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::Text(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Text(v.to_string()))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Text(v.to_string()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Other("nothing"))
    }

    fn visit_none<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Other("nothing"))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(RawVisitor)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(Raw::Other("a list"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut table = BTreeMap::new();
        while let Some((key, value)) = map.next_entry::<String, Raw>()? {
            table.insert(key, value);
        }
        Ok(Raw::Table(table))
    }
}

/// The text of a value expected to be a limit.
pub(super) fn text_of<'a>(key: &str, raw: &'a Raw) -> Result<&'a str, LimitsError> {
    match raw {
        Raw::Text(text) => Ok(text),
        Raw::Table(_) => Err(LimitsError::new(key, "a table", "not a duration")),
        Raw::Other(what) => Err(LimitsError::new(key, what, "not a duration")),
    }
}
