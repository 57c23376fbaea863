//! Case files: loading, `--set` overrides, validation and saving.
//!
//! A [`Case`] keeps the TOML document as written (comments and layout survive `--set` and the
//! app's live edits, so a saved case reads like the original) next to the typed [`CaseSpec`]
//! deserialized from it. Every change goes through [`Case::set`], which re-validates the whole
//! case and leaves it unchanged on error.

mod error;
mod rotor;
pub use rotor::Chord;
mod schema;
pub mod validate;

pub use error::{CaseError, Origin, line_col};
pub use schema::*;
pub use validate::Invalid;

use std::path::{Path, PathBuf};

/// A validated case and the document it came from.
#[derive(Clone, Debug)]
pub struct Case {
    /// File name (or label) used in error messages.
    pub name: String,
    /// Path of the case file, if it came from one.
    pub path: Option<PathBuf>,
    /// The document as written, for error positions.
    original: String,
    /// The document with overrides applied.
    doc: toml_edit::DocumentMut,
    pub spec: CaseSpec,
}

impl Case {
    /// Reads and validates a case file.
    pub fn load(path: &Path) -> Result<Case, CaseError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            CaseError::new(
                Origin::File {
                    name: name.clone(),
                    line_col: None,
                },
                None,
                format!("cannot read the case file: {e}"),
            )
        })?;
        let mut case = Case::parse(&text, &name)?;
        case.path = Some(path.to_path_buf());
        Ok(case)
    }

    /// Parses and validates case text; `name` labels it in error messages.
    pub fn parse(text: &str, name: &str) -> Result<Case, CaseError> {
        let doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
            CaseError::new(
                Origin::File {
                    name: name.to_string(),
                    line_col: e.span().map(|s| line_col(text, s.start)),
                },
                None,
                format!("not valid TOML: {}", e.message()),
            )
        })?;
        let spec = deserialize(text).map_err(|(key, span, message)| {
            let line_col = key
                .as_deref()
                .and_then(|k| locate(text, k))
                .or_else(|| span.map(|s| line_col(text, s)));
            CaseError::new(
                Origin::File {
                    name: name.to_string(),
                    line_col,
                },
                key,
                message,
            )
        })?;
        let case = Case {
            name: name.to_string(),
            path: None,
            original: text.to_string(),
            doc,
            spec,
        };
        case.validate(None)?;
        Ok(case)
    }

    /// Applies `key=value` (as in `--set solver.limiter=mc`); `value` is TOML (`400`, `"mc"`,
    /// `[1.0, 2.0]`), and a bare word is taken as a string. The whole case is re-validated; on
    /// error the case is left as it was.
    pub fn set_assignment(&mut self, assignment: &str) -> Result<(), CaseError> {
        let origin = Origin::Override {
            assignment: assignment.to_string(),
        };
        let Some((key, value)) = assignment.split_once('=') else {
            return Err(CaseError::new(
                origin,
                None,
                "expected key=value, e.g. grid.nx=256 or solver.limiter=mc",
            ));
        };
        self.set(key.trim(), value.trim())
            .map_err(|e| CaseError { origin, ..e })
    }

    /// Sets one dotted key to a TOML value (see [`Case::set_assignment`]).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), CaseError> {
        let origin = Origin::Override {
            assignment: format!("{key}={value}"),
        };
        let err = |msg: String| CaseError::new(origin.clone(), Some(key.to_string()), msg);
        let parsed: toml_edit::Value = match value.parse() {
            Ok(v) => v,
            Err(_) => toml_edit::Value::from(value),
        };
        let parts: Vec<&str> = key.split('.').map(str::trim).collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(err("the key must be a dotted path such as physics.re".into()));
        }
        let mut doc = self.doc.clone();
        let (last, tables) = parts.split_last().expect("split gives at least one part");
        let mut table: &mut dyn toml_edit::TableLike = doc.as_table_mut();
        for part in tables {
            let entry = table.entry(part).or_insert_with(|| {
                let mut t = toml_edit::Table::new();
                t.set_implicit(true);
                toml_edit::Item::Table(t)
            });
            table = entry
                .as_table_like_mut()
                .ok_or_else(|| err(format!("`{part}` is a value, not a section")))?;
        }
        table.insert(last, toml_edit::Item::Value(parsed));
        let text = doc.to_string();
        let spec = deserialize(&text)
            .map_err(|(k, _, message)| CaseError::new(origin.clone(), k.or(Some(key.into())), message))?;
        let candidate = Case {
            doc,
            spec,
            ..self.clone()
        };
        candidate.validate(Some(&origin))?;
        *self = candidate;
        Ok(())
    }

    /// The case as TOML text, overrides included, comments of the original kept.
    pub fn to_toml(&self) -> String {
        self.doc.to_string()
    }

    fn validate(&self, override_origin: Option<&Origin>) -> Result<(), CaseError> {
        validate::validate(&self.spec).map_err(|Invalid { key, message }| {
            let origin = match override_origin {
                Some(Origin::Override { assignment })
                    if assignment.split('=').next().map(str::trim) == Some(key.as_str()) =>
                {
                    override_origin.cloned().expect("matched Some")
                }
                _ => Origin::File {
                    name: self.name.clone(),
                    line_col: locate(&self.original, &key),
                },
            };
            CaseError::new(origin, Some(key), message)
        })
    }
}

/// Deserializes the typed spec; on error returns (key path, byte offset, message).
fn deserialize(text: &str) -> Result<CaseSpec, (Option<String>, Option<usize>, String)> {
    let de = toml::de::Deserializer::parse(text)
        .map_err(|e| (None, e.span().map(|s| s.start), e.message().to_string()))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let mut key = (path != "." && !path.is_empty()).then_some(path);
        let mut message = inner.message().to_string();
        // Inside a tagged `type` table (a boundary, the initial state) the path ends at the
        // table: name the unknown key itself, so its line is found, and what the type takes.
        if let Some(field) = message
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split('`').next())
            .map(str::to_string)
        {
            if let Some(k) = key.as_mut().filter(|k| !k.ends_with(&format!(".{field}"))) {
                k.push('.');
                k.push_str(&field);
            }
            message = message.replace(
                ", there are no fields",
                ": this type takes no keys besides `type`",
            );
        }
        (key, inner.span().map(|s| s.start), message)
    })
}

/// 1-based line and column of a dotted key (its value, or its section header) in `text`.
fn locate(text: &str, key: &str) -> Option<(usize, usize)> {
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut item = doc.as_item();
    let mut span = None;
    for part in key.split('.') {
        let part = part.split('[').next().unwrap_or(part);
        let table = item.as_table_like()?;
        let (k, next) = table.get_key_value(part)?;
        span = next.span().or_else(|| k.span()).or(span);
        item = next;
    }
    span.map(|s| line_col(text, s.start))
}

#[cfg(test)]
mod tests;
