//! Policy levels and versions, parsed the way PSA's `api.ParseLevel` / `api.ParseVersion` do, so
//! a Kyverno rule's `level` and `version` strings mean here what they mean in Kyverno.

use std::fmt;

/// A Pod Security Standards level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    /// The lowercase name PSA uses in labels and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }

    /// Parses `privileged`, `baseline` or `restricted` (exact, lowercase, as PSA).
    pub fn parse(level: &str) -> Result<Level, ParseError> {
        match level {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err(ParseError::Level(level.to_string())),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A policy version: `v1.N`, or `latest`, which is newer than every numbered version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(Inner);

/// Variant order gives the ordering: every release sorts before `Latest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Inner {
    Release { major: u32, minor: u32 },
    Latest,
}

impl Version {
    /// The newest policy, whatever the newest release is.
    pub const LATEST: Version = Version(Inner::Latest);

    /// A numbered version `v{major}.{minor}`.
    pub const fn new(major: u32, minor: u32) -> Version {
        Version(Inner::Release { major, minor })
    }

    pub fn is_latest(self) -> bool {
        matches!(self.0, Inner::Latest)
    }

    /// `(major, minor)`, or `None` for `latest`.
    pub fn major_minor(self) -> Option<(u32, u32)> {
        match self.0 {
            Inner::Release { major, minor } => Some((major, minor)),
            Inner::Latest => None,
        }
    }

    /// Parses `latest` or `v1.N` (`N` without leading zeros), as PSA's `api.ParseVersion`;
    /// the empty string also means `latest`, as an unset Kyverno `version` does.
    pub fn parse(version: &str) -> Result<Version, ParseError> {
        if version.is_empty() || version == "latest" {
            return Ok(Version::LATEST);
        }
        let bad = || ParseError::Version(version.to_string());
        let minor = version.strip_prefix("v1.").ok_or_else(bad)?;
        let digits_ok = !minor.is_empty()
            && minor.bytes().all(|b| b.is_ascii_digit())
            && (minor == "0" || !minor.starts_with('0'));
        if !digits_ok {
            return Err(bad());
        }
        let minor: u32 = minor.parse().map_err(|_| bad())?;
        Ok(Version::new(1, minor))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Inner::Release { major, minor } => write!(f, "v{major}.{minor}"),
            Inner::Latest => f.write_str("latest"),
        }
    }
}

/// A level at a version: what a `validate.podSecurity` rule asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl LevelVersion {
    /// Parses both halves; see [`Level::parse`] and [`Version::parse`].
    pub fn parse(level: &str, version: &str) -> Result<LevelVersion, ParseError> {
        Ok(LevelVersion {
            level: Level::parse(level)?,
            version: Version::parse(version)?,
        })
    }
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level, self.version)
    }
}

/// A level or version string PSA would reject; messages end as PSA's do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("invalid level {0:?}: must be one of privileged, baseline, restricted")]
    Level(String),
    #[error("invalid version {0:?}: must be \"latest\" or \"v1.x\"")]
    Version(String),
}
