//! Limits by name, from configuration, installed for the process and swapped while it runs.
//! * Installed limits are read once per deadline, when it is made: the next deadline with
//!   a name takes the new limit, those in flight keep theirs.
//! * Swapping is lock-free for readers (`arc-swap`).
//! * Top-level keys are closed (`default`, `names`); names are open, non-empty.
//! * A limit is a `humantime` duration (`800ms`, `2s`, `1m30s`), above zero and at most
//!   [`Limits::MAX`]; a bad one is an error naming its key and text, never a panic.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;
use serde::de::IgnoredAny;

/// A default limit and limits per name, as a config file gives them, in TOML or any format
/// serde reads with the same shape. Both keys are optional (`default` is 1 s when absent);
/// no other key is allowed.
///
/// ```
/// use std::time::Duration;
/// use punctual::report::Limits;
///
/// let limits = Limits::from_toml(r#"
///     default = "2s"
///     [names]
///     pricing = "800ms"
///     report = "1m30s"
/// "#).unwrap();
/// assert_eq!(limits.limit("pricing"), Duration::from_millis(800));
/// assert_eq!(limits.limit("report"), Duration::from_secs(90));
/// assert_eq!(limits.limit("anything else"), Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    default: Duration,
    names: BTreeMap<String, Duration>,
}

impl Default for Limits {
    /// A default limit of 1 s (as Resilience4j's TimeLimiter), no names.
    fn default() -> Self {
        Self {
            default: Duration::from_secs(1),
            names: BTreeMap::new(),
        }
    }
}

impl Limits {
    /// The longest limit accepted: a day.
    pub const MAX: Duration = Duration::from_secs(24 * 60 * 60);

    /// Limits with `default` for every name.
    ///
    /// # Errors
    ///
    /// If `default` is zero or above [`Limits::MAX`].
    pub fn new(default: Duration) -> Result<Self, LimitsError> {
        Ok(Self {
            default: parse_limit("default", &Raw::duration(default))?,
            ..Self::default()
        })
    }

    /// These limits, with `limit` for `name`.
    ///
    /// # Errors
    ///
    /// If `name` is empty, or `limit` is zero or above [`Limits::MAX`].
    pub fn with(mut self, name: &str, limit: Duration) -> Result<Self, LimitsError> {
        self.insert(name, &Raw::duration(limit))?;
        Ok(self)
    }

    /// Sets the limit of `name`, checked, by the text of `value`.
    fn insert(&mut self, name: &str, value: &Raw) -> Result<(), LimitsError> {
        let key = format!("names.{name}");
        if name.is_empty() {
            return Err(LimitsError::new(&key, "", "an empty name"));
        }
        self.names
            .insert(name.to_owned(), parse_limit(&key, value)?);
        Ok(())
    }

    /// Limits from a TOML document.
    ///
    /// # Errors
    ///
    /// If the document does not parse, has a key other than `default` and `names`, or a
    /// limit that is not a duration, zero or above [`Limits::MAX`]: the first such, by key.
    pub fn from_toml(text: &str) -> Result<Self, LimitsError> {
        let raw: BTreeMap<String, Raw> =
            toml::from_str(text).map_err(|e| LimitsError::new("", e.message(), "not TOML"))?;
        Self::from_raw(raw)
    }

    fn from_raw(raw: BTreeMap<String, Raw>) -> Result<Self, LimitsError> {
        let mut limits = Self::default();
        for (key, value) in &raw {
            match (key.as_str(), value) {
                ("default", _) => limits.default = parse_limit(key, value)?,
                ("names", Raw::Table(table)) => {
                    for (name, value) in table {
                        limits.insert(name, value)?;
                    }
                }
                _ => {
                    let text = value.text().unwrap_or_else(|what| what.into());
                    let problem = match key.as_str() {
                        "names" => "not a table of names",
                        _ => "an unknown key; the keys are `default` and `names`",
                    };
                    return Err(LimitsError::new(key, &text, problem));
                }
            }
        }
        Ok(limits)
    }

    /// The limit for deadlines without a limit of their own name.
    pub fn default_limit(&self) -> Duration {
        self.default
    }

    /// The limit for `name`: its own, else the default.
    pub fn limit(&self, name: &str) -> Duration {
        self.names.get(name).copied().unwrap_or(self.default)
    }

    /// The names with a limit of their own, in order.
    pub fn names(&self) -> impl Iterator<Item = (&str, Duration)> {
        self.names
            .iter()
            .map(|(name, limit)| (name.as_str(), *limit))
    }
}

impl<'de> serde::Deserialize<'de> for Limits {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = BTreeMap::<String, Raw>::deserialize(deserializer)?;
        Self::from_raw(raw).map_err(serde::de::Error::custom)
    }
}

/// A value as read, before it is checked.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Raw {
    Text(String),
    Int(i64),
    Uint(u64),
    Float(f64),
    Bool(bool),
    Table(BTreeMap<String, Raw>),
    List(#[allow(dead_code)] Vec<IgnoredAny>),
    Nothing,
}

impl Raw {
    /// `limit` as humantime writes it, which it reads back exactly.
    fn duration(limit: Duration) -> Self {
        Self::Text(humantime::format_duration(limit).to_string())
    }

    /// The value as text, or what it is instead of a scalar.
    fn text(&self) -> Result<String, &'static str> {
        match self {
            Self::Text(text) => Ok(text.clone()),
            Self::Int(v) => Ok(v.to_string()),
            Self::Uint(v) => Ok(v.to_string()),
            Self::Float(v) => Ok(v.to_string()),
            Self::Bool(v) => Ok(v.to_string()),
            Self::Table(_) => Err("a table"),
            Self::List(_) => Err("a list"),
            Self::Nothing => Err("nothing"),
        }
    }
}

/// `value` as a limit, or why not.
fn parse_limit(key: &str, value: &Raw) -> Result<Duration, LimitsError> {
    let text = value
        .text()
        .map_err(|what| LimitsError::new(key, what, "not a duration"))?;
    let problem = match humantime::parse_duration(text.trim()) {
        Err(e) => format!("not a duration ({e}); write it as `800ms`, `2s` or `1m30s`"),
        Ok(limit) if limit.is_zero() => "zero; a limit must be above zero".to_owned(),
        Ok(limit) if limit > Limits::MAX => {
            let max = humantime::format_duration(Limits::MAX);
            format!("out of range; a limit is at most {max}")
        }
        Ok(limit) => return Ok(limit),
    };
    Err(LimitsError::new(key, &text, problem))
}

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
    fn new(key: &str, text: &str, problem: impl Into<String>) -> Self {
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
            let (key, text, problem) = (&self.key, &self.text, &self.problem);
            write!(f, "limit `{key}` = `{text}`: {problem}")
        }
    }
}

impl std::error::Error for LimitsError {}

static INSTALLED: ArcSwapOption<Limits> = ArcSwapOption::const_empty();

/// Installs `limits` for the process, replacing those before: the next deadline made with
/// a name ([`deadline_named`](crate::DeadlineExt::deadline_named), [`limit_for`]) takes
/// its limit from them; deadlines in flight keep theirs. Also [enables](super::enable)
/// reporting.
///
/// ```
/// use std::time::Duration;
/// use punctual::report::{self, Limits};
///
/// report::install_limits(Limits::from_toml("[names]\ndoc-install = \"750ms\"").unwrap());
/// assert_eq!(report::limit_for("doc-install"), Duration::from_millis(750));
/// ```
pub fn install_limits(limits: Limits) {
    #[cfg(feature = "metrics")]
    for (name, limit) in limits.names() {
        super::metrics::set_limit(name, limit);
    }
    INSTALLED.store(Some(Arc::new(limits)));
    super::enable();
}

/// The installed limits ([`Limits::default`] if none were).
pub fn installed_limits() -> Arc<Limits> {
    INSTALLED.load_full().unwrap_or_default()
}

/// The limit for `name` in the installed limits: its own, else their default (1 s if
/// none were installed).
pub fn limit_for(name: &str) -> Duration {
    match &*INSTALLED.load() {
        Some(limits) => limits.limit(name),
        None => Limits::default().default,
    }
}
