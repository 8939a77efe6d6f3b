//! The verdict vocabulary as types: the gate's verdict, the seed's outcome and finding status,
//! and the verdict class the queue sorts by and the two-person rule keys on.
//!
//! Every place that writes, compares or reads these words goes through these enums: the
//! report, the store's columns, receipts and the front ends. Each has `as_str` (the exact text
//! the seed and the stored JSON use) and `parse` (which accepts only that text), so an unknown
//! word from a store row or an old report is an error, never a silent default.

use std::fmt;

/// Defines `as_str`, `parse`, `ALL` and `Display` for a fieldless enum from its words.
macro_rules! words {
    ($name:ident { $($variant:ident => $word:literal),+ $(,)? }) => {
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }

            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($word => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// ACCEPTED only when every check passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    Accepted,
    Quarantined,
}

words!(Verdict { Accepted => "ACCEPTED", Quarantined => "QUARANTINED" });

/// The seed's outcome of one check, or of the whole verdict (the first failing check's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Pass,
    Fail,
    InsufficientData,
    Error,
    /// A check that did not run.
    Unknown,
}

words!(Outcome {
    Pass => "PASS",
    Fail => "FAIL",
    InsufficientData => "INSUFFICIENT_DATA",
    Error => "ERROR",
    Unknown => "UNKNOWN",
});

impl Outcome {
    /// The finding status the seed pairs with this outcome.
    pub fn finding_status(self) -> FindingStatus {
        match self {
            Outcome::Pass => FindingStatus::NoFinding,
            Outcome::Fail => FindingStatus::Finding,
            Outcome::InsufficientData | Outcome::Error | Outcome::Unknown => FindingStatus::Unknown,
        }
    }

    /// The verdict class of a check that ended with this outcome.
    pub fn class(self) -> VerdictClass {
        match self {
            Outcome::Pass => VerdictClass::Pass,
            Outcome::Fail => VerdictClass::Finding,
            Outcome::InsufficientData => VerdictClass::InsufficientData,
            Outcome::Error => VerdictClass::Error,
            Outcome::Unknown => VerdictClass::NotRun,
        }
    }
}

/// Whether a check found something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindingStatus {
    NoFinding,
    Finding,
    Unknown,
}

words!(FindingStatus {
    NoFinding => "NO_FINDING",
    Finding => "FINDING",
    Unknown => "UNKNOWN",
});

/// Outcome and finding status together (`FAIL/FINDING`): what a reviewer triages by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VerdictClass {
    Pass,
    Finding,
    Error,
    InsufficientData,
    NotRun,
}

words!(VerdictClass {
    Pass => "PASS/NO_FINDING",
    Finding => "FAIL/FINDING",
    Error => "ERROR/UNKNOWN",
    InsufficientData => "INSUFFICIENT_DATA/UNKNOWN",
    NotRun => "UNKNOWN/UNKNOWN",
});

impl VerdictClass {
    /// Higher is more severe. A finding (a leaked secret, a contradicted commitment, a
    /// fabricated approval) outranks a check that could not run, which outranks a summary the
    /// verifier could not decide; the queue's severity sort and the choice of a compaction's
    /// main failure both use this order.
    pub fn severity(self) -> u8 {
        match self {
            VerdictClass::Finding => 4,
            VerdictClass::Error => 3,
            VerdictClass::InsufficientData => 2,
            VerdictClass::NotRun => 1,
            VerdictClass::Pass => 0,
        }
    }

    /// Every class, most severe first.
    pub fn by_severity() -> [VerdictClass; 5] {
        let mut all = [
            VerdictClass::Pass,
            VerdictClass::Finding,
            VerdictClass::Error,
            VerdictClass::InsufficientData,
            VerdictClass::NotRun,
        ];
        all.sort_by_key(|c| std::cmp::Reverse(c.severity()));
        all
    }
}

/// How one check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckStatus {
    Pass,
    Fail,
    Error,
    NotRun,
}

words!(CheckStatus {
    Pass => "pass",
    Fail => "fail",
    Error => "error",
    NotRun => "not_run",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_nothing_else_parses() {
        for v in Verdict::ALL {
            assert_eq!(Verdict::parse(v.as_str()), Some(*v));
        }
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.as_str()), Some(*o));
            assert_eq!(
                VerdictClass::parse(&format!("{}/{}", o, o.finding_status())),
                Some(o.class())
            );
        }
        for s in FindingStatus::ALL {
            assert_eq!(FindingStatus::parse(s.as_str()), Some(*s));
        }
        for s in CheckStatus::ALL {
            assert_eq!(CheckStatus::parse(s.as_str()), Some(*s));
        }
        assert_eq!(Verdict::parse("accepted"), None);
        assert_eq!(VerdictClass::parse("FAIL/UNKNOWN"), None);
    }

    #[test]
    fn a_finding_is_the_most_severe_class() {
        assert_eq!(VerdictClass::by_severity()[0], VerdictClass::Finding);
        assert_eq!(VerdictClass::by_severity()[4], VerdictClass::Pass);
    }
}
