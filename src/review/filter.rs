//! The queue filter language typed after `/` or `:filter`.
//!
//! A filter is whitespace-separated terms, all of which must hold: free text (matched
//! case-insensitively against id, tenant, task and reason) or a typed predicate `status:`,
//! `reason:`, `tenant:`, `task:`; a leading `!` negates a term. An unknown status is a clear
//! error; an unknown `key:` is free text (so a pasted URL still searches). The parsed
//! [`Filter`] is plain data a store can turn into a query; [`Filter::matches`] is the
//! reference semantics (used by the fake source and the tests).

use std::fmt;

use crate::review::source::{QueueRow, Status};

/// What one term tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Predicate {
    /// Lower-case free text.
    Text(String),
    Status(Status),
    /// Lower-case substring of the main reason.
    Reason(String),
    /// Lower-case substring of the tenant.
    Tenant(String),
    /// Lower-case substring of the task.
    Task(String),
}

/// One term, possibly negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub negated: bool,
    pub predicate: Predicate,
}

/// A conjunction of terms; the empty filter matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filter {
    pub terms: Vec<Term>,
}

/// A filter that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    #[error("unknown status \"{0}\"; use quarantined, pending, released, rejected or accepted")]
    UnknownStatus(String),
    #[error("\"{0}\" needs a value, e.g. \"{0}acme\"")]
    EmptyValue(String),
}

impl Filter {
    /// Parses the filter language (see the module documentation).
    pub fn parse(input: &str) -> Result<Filter, FilterError> {
        let mut terms = Vec::new();
        for raw in input.split_whitespace() {
            let (negated, word) = match raw.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, raw),
            };
            if word.is_empty() {
                continue;
            }
            let predicate = match word.split_once(':') {
                Some((key, value)) => {
                    let key = key.to_ascii_lowercase();
                    let value = value.to_lowercase();
                    let known = ["status", "reason", "tenant", "task"].contains(&key.as_str());
                    if known && value.is_empty() {
                        return Err(FilterError::EmptyValue(format!("{key}:")));
                    }
                    match key.as_str() {
                        "status" => Predicate::Status(
                            Status::parse(&value).ok_or(FilterError::UnknownStatus(value))?,
                        ),
                        "reason" => Predicate::Reason(value),
                        "tenant" => Predicate::Tenant(value),
                        "task" => Predicate::Task(value),
                        _ => Predicate::Text(word.to_lowercase()),
                    }
                }
                None => Predicate::Text(word.to_lowercase()),
            };
            terms.push(Term { negated, predicate });
        }
        Ok(Filter { terms })
    }

    /// Whether the row passes every term.
    pub fn matches(&self, row: &QueueRow) -> bool {
        self.terms.iter().all(|t| t.matches(row))
    }

    /// The same filter without its status terms (the header counts use it).
    pub fn without_status(&self) -> Filter {
        Filter {
            terms: self
                .terms
                .iter()
                .filter(|t| !matches!(t.predicate, Predicate::Status(_)))
                .cloned()
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

impl Term {
    fn matches(&self, row: &QueueRow) -> bool {
        let has = |hay: &str, needle: &str| hay.to_lowercase().contains(needle);
        let hit = match &self.predicate {
            Predicate::Text(t) => {
                has(&row.id.0, t) || has(&row.tenant, t) || has(&row.task, t) || {
                    has(&row.main_reason, t)
                }
            }
            Predicate::Status(s) => row.status == *s,
            Predicate::Reason(r) => has(&row.main_reason, r),
            Predicate::Tenant(t) => has(&row.tenant, t),
            Predicate::Task(t) => has(&row.task, t),
        };
        hit != self.negated
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, term) in self.terms.iter().enumerate() {
            if n > 0 {
                f.write_str(" ")?;
            }
            if term.negated {
                f.write_str("!")?;
            }
            match &term.predicate {
                Predicate::Text(t) => f.write_str(t)?,
                Predicate::Status(s) => write!(f, "status:{}", s.word())?,
                Predicate::Reason(r) => write!(f, "reason:{r}")?,
                Predicate::Tenant(t) => write!(f, "tenant:{t}")?,
                Predicate::Task(t) => write!(f, "task:{t}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::source::{ItemId, Outcome};

    fn row(tenant: &str, status: Status, reason: &str) -> QueueRow {
        QueueRow {
            id: ItemId("q-0001".into()),
            tenant: tenant.into(),
            task: "deploy-api".into(),
            status,
            outcome: Outcome::Finding,
            severity: crate::review::source::Severity::Finding,
            main_reason: reason.into(),
            created_unix: 0,
            anomaly_count: 0,
        }
    }

    #[test]
    fn typed_predicates_and_negation() {
        let f = Filter::parse("status:quar !tenant:globex reason:secret").unwrap();
        assert!(f.matches(&row("acme", Status::Quarantined, "secret.aws_key")));
        assert!(!f.matches(&row("globex", Status::Quarantined, "secret.aws_key")));
        assert!(!f.matches(&row("acme", Status::Released, "secret.aws_key")));
        assert!(!f.matches(&row("acme", Status::Quarantined, "consistency")));
    }

    #[test]
    fn free_text_searches_every_field_case_insensitively() {
        let f = Filter::parse("DEPLOY").unwrap();
        assert!(f.matches(&row("acme", Status::Quarantined, "x")));
    }

    #[test]
    fn unknown_status_is_a_clear_error() {
        let err = Filter::parse("status:bogus").unwrap_err();
        assert!(err.to_string().contains("unknown status \"bogus\""));
        assert!(Filter::parse("tenant:").is_err());
    }

    #[test]
    fn unknown_key_is_free_text_and_display_round_trips() {
        let f = Filter::parse("https://x !status:rejected").unwrap();
        assert_eq!(f.to_string(), "https://x !status:rejected");
        assert_eq!(f.without_status().to_string(), "https://x");
    }
}
