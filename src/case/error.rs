//! Errors in case files and overrides: each names where the bad value came from (file with line
//! and column, or the `--set` argument), the key, and what is allowed.

use std::fmt;

/// Where a case value came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A case file (or an in-memory text with a label), 1-based line and column where known.
    File {
        name: String,
        line_col: Option<(usize, usize)>,
    },
    /// A `--set key=value` override (or the app's equivalent live setting).
    Override { assignment: String },
}

/// A case that cannot be used, with enough context to fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseError {
    pub origin: Origin,
    /// Dotted key path (`solver.limiter`), when the error concerns one key.
    pub key: Option<String>,
    pub message: String,
}

impl CaseError {
    pub fn new(origin: Origin, key: Option<String>, message: impl Into<String>) -> Self {
        Self {
            origin,
            key,
            message: message.into(),
        }
    }
}

impl fmt::Display for CaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::File { name, line_col } => {
                write!(f, "{name}")?;
                if let Some((l, c)) = line_col {
                    write!(f, ":{l}:{c}")?;
                }
            }
            Origin::Override { assignment } => write!(f, "--set {assignment}")?,
        }
        if let Some(k) = &self.key {
            write!(f, ": key `{k}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for CaseError {}

/// 1-based line and column of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |s| s.chars().count()) + 1;
    (line, col)
}
