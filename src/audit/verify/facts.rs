//! What the receipts say, collected in log order for the table cross-check, and the rules
//! receipts must obey among themselves: one verdict per compaction, reruns and decisions on
//! the current report, one decision, and a release that needed two approvers citing two
//! distinct approvers' approvals of that report.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use super::super::authority::{Authority, Role};
use super::super::receipt::ReceiptKind;
use super::super::receipt_fields::{Flat, FlatReceipt};

/// FNV-1a: compaction ids are short, and SipHash dominated the cross-check.
#[derive(Default)]
pub(super) struct FnvHasher(u64);

impl Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

pub(super) type Fnv = BuildHasherDefault<FnvHasher>;

/// What the receipts say, for the cross-check against the tables.
#[derive(Debug, Default)]
pub(super) struct Facts {
    pub compactions: HashMap<String, CompactionFacts, Fnv>,
    /// Approval, decision and reveal receipts by sequence number.
    pub signed: BTreeMap<u64, SignedFact>,
    /// Reviewer registrations by sequence number.
    pub reviewers: BTreeMap<u64, ReviewerFact>,
}

/// One report a receipt introduced: the verdict's, or a rerun's that changed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ReportFact {
    pub seq: u64,
    pub time: String,
    pub report_sha256: String,
    pub policy_sha256: String,
    pub verifier_version: String,
    pub verdict: String,
    pub outcome: String,
    pub finding_status: String,
    pub verdict_class: String,
    pub has_secret_finding: bool,
    pub anomaly_count: i64,
    /// `None` in receipts written before the main reason was bound.
    pub main_reason: Option<String>,
    pub approvals_required: i64,
}

#[derive(Debug, Default)]
pub(super) struct CompactionFacts {
    pub verdict_seq: u64,
    pub time: String,
    pub tenant_id: String,
    pub task_id: String,
    pub request_sha256: String,
    pub summary_sha256: String,
    pub source_population_sha256: String,
    /// Every report in order; the last is current.
    pub reports: Vec<ReportFact>,
    /// `(seq, action)` of the decision receipt.
    pub decision: Option<(u64, String)>,
    /// Set by the table cross-check for each kind of row it found ([`SEEN_ROW`], …).
    pub seen: Cell<u8>,
    /// Report rows the cross-check found so far.
    pub report_rows: Cell<usize>,
}

pub(super) const SEEN_ROW: u8 = 1;
pub(super) const SEEN_REQUEST: u8 = 2;

impl CompactionFacts {
    pub fn mark(&self, bit: u8) {
        self.seen.set(self.seen.get() | bit);
    }

    pub fn was_seen(&self, bit: u8) -> bool {
        self.seen.get() & bit != 0
    }

    pub fn current(&self) -> Option<&ReportFact> {
        self.reports.last()
    }
}

#[derive(Debug)]
pub(super) struct SignedFact {
    pub kind: ReceiptKind,
    pub time: String,
    pub compaction_id: String,
    pub key_id: String,
    pub reviewer: String,
    pub report_sha256: String,
    pub reason: String,
    pub note: String,
    pub action: String,
    pub finding_id: String,
}

#[derive(Debug)]
pub(super) struct ReviewerFact {
    pub time: String,
    pub name: String,
    pub key_id: String,
    pub public_key: String,
    pub role: String,
    pub authorized_by: String,
}

fn report_fact(seq: u64, v: &FlatReceipt<'_>) -> ReportFact {
    let s = |k: &str| v.str(k).unwrap_or("").to_owned();
    let has_secret_finding = matches!(v.get("has_secret_finding"), Some(Flat::Bool(true)));
    let verdict_class = s("verdict_class");
    let approvals_required = v.int("approvals_required").unwrap_or(
        // Receipts written before the requirement was bound: the default policy's rule.
        if verdict_class == "FAIL/FINDING" || has_secret_finding {
            2
        } else {
            1
        },
    );
    ReportFact {
        seq,
        time: s("time"),
        report_sha256: s("report_sha256"),
        policy_sha256: s("policy_sha256"),
        verifier_version: s("verifier_version"),
        verdict: s("verdict"),
        outcome: s("outcome"),
        finding_status: s("finding_status"),
        verdict_class,
        has_secret_finding,
        anomaly_count: v.int("anomaly_count").unwrap_or(-1),
        main_reason: v.str("main_reason").map(str::to_owned),
        approvals_required,
    }
}

impl Facts {
    /// Records what receipt `seq` says; a problem when it contradicts earlier receipts.
    pub fn collect(
        &mut self,
        seq: u64,
        v: &FlatReceipt<'_>,
        authority: &Authority,
    ) -> Option<String> {
        let s = |k: &str| v.str(k).unwrap_or("").to_owned();
        let kind = v.str("kind").and_then(ReceiptKind::parse)?;
        let id = s("compaction_id");
        match kind {
            ReceiptKind::Verdict => {
                if self.compactions.contains_key(&id) {
                    return Some(format!("second verdict receipt for compaction \"{id}\""));
                }
                let f = CompactionFacts {
                    verdict_seq: seq,
                    time: s("time"),
                    tenant_id: s("tenant_id"),
                    task_id: s("task_id"),
                    request_sha256: s("request_sha256"),
                    summary_sha256: s("summary_sha256"),
                    source_population_sha256: s("source_population_sha256"),
                    reports: vec![report_fact(seq, v)],
                    ..CompactionFacts::default()
                };
                self.compactions.insert(id, f);
            }
            ReceiptKind::Rerun => {
                let Some(c) = self.compactions.get_mut(&id) else {
                    return Some(format!("rerun of compaction \"{id}\" that has no verdict"));
                };
                let previous = c.current().map(|r| r.report_sha256.clone());
                c.reports.push(report_fact(seq, v));
                if previous.as_deref() != v.str("previous_report_sha256") {
                    return Some("rerun does not follow the compaction's current report".into());
                }
            }
            ReceiptKind::Reviewer => {
                let f = ReviewerFact {
                    time: s("time"),
                    name: s("reviewer"),
                    key_id: s("reviewer_key_id"),
                    public_key: s("public_key"),
                    role: s("role"),
                    authorized_by: s("authorized_by"),
                };
                self.reviewers.insert(seq, f);
            }
            ReceiptKind::Approval | ReceiptKind::Decision | ReceiptKind::Reveal => {
                return self.signed(seq, kind, v, authority);
            }
        }
        None
    }

    fn signed(
        &mut self,
        seq: u64,
        kind: ReceiptKind,
        v: &FlatReceipt<'_>,
        authority: &Authority,
    ) -> Option<String> {
        let s = |k: &str| v.str(k).unwrap_or("").to_owned();
        let id = s("compaction_id");
        let key_id = s("reviewer_key_id");
        let fact = SignedFact {
            kind,
            time: s("time"),
            compaction_id: id.clone(),
            key_id: key_id.clone(),
            reviewer: s("reviewer"),
            report_sha256: s("report_sha256"),
            reason: s("reason"),
            note: s("note"),
            action: s("decision"),
            finding_id: s("finding_id"),
        };
        let Some(c) = self.compactions.get(&id) else {
            self.signed.insert(seq, fact);
            return Some(format!(
                "{} for compaction \"{id}\" that has no verdict",
                kind.as_str()
            ));
        };
        let current = c.current().cloned().unwrap_or_default();
        let role = authority.reviewer(&key_id).map(|r| r.role);
        let problem = match kind {
            ReceiptKind::Reveal => None,
            _ if c.decision.is_some() => Some(format!(
                "{} on compaction \"{id}\" after its decision",
                kind.as_str()
            )),
            _ if fact.report_sha256 != current.report_sha256 => Some(format!(
                "{} binds a report that was not the compaction's current one",
                kind.as_str()
            )),
            ReceiptKind::Approval if role != Some(Role::Approver) => {
                Some("approval signed by a key that is not a registered approver".into())
            }
            ReceiptKind::Decision => check_decision(&self.signed, v, &fact, &current, authority),
            _ => None,
        };
        if kind == ReceiptKind::Decision {
            if let Some(c) = self.compactions.get_mut(&id) {
                c.decision.get_or_insert((seq, fact.action.clone()));
            }
        }
        self.signed.insert(seq, fact);
        problem
    }
}

/// A decision's approvals: cited approval receipts for the same compaction and report, from
/// distinct approver keys, one of them the decision's own signer; and a release that needed
/// two approvers cites two.
fn check_decision(
    signed: &BTreeMap<u64, SignedFact>,
    v: &FlatReceipt<'_>,
    decision: &SignedFact,
    current: &ReportFact,
    authority: &Authority,
) -> Option<String> {
    let cited = match v.get("approval_receipt_seqs") {
        Some(Flat::Ints(seqs)) => seqs.as_slice(),
        _ => return Some("decision receipt has no list of approval receipts".into()),
    };
    if decision.action == "release" && current.approvals_required >= 2 && cited.len() < 2 {
        return Some(format!(
            "a release of a {} compaction{} cites {} approval(s), but it needs two distinct approvers",
            current.verdict_class,
            if current.has_secret_finding {
                " with a secret finding"
            } else {
                ""
            },
            cited.len()
        ));
    }
    if cited.is_empty() {
        return None;
    }
    let mut keys = Vec::new();
    for seq in cited {
        let approval = u64::try_from(*seq).ok().and_then(|s| signed.get(&s));
        match approval {
            Some(a)
                if a.kind == ReceiptKind::Approval
                    && a.compaction_id == decision.compaction_id
                    && a.report_sha256 == decision.report_sha256 =>
            {
                keys.push(a.key_id.as_str());
            }
            _ => {
                return Some(format!(
                    "decision cites entry {seq}, which is not an approval of this report"
                ))
            }
        }
    }
    let distinct: BTreeSet<&str> = keys.iter().copied().collect();
    if distinct.len() != keys.len() || !distinct.contains(decision.key_id.as_str()) {
        return Some("decision's approvals are not from distinct keys including its signer".into());
    }
    if keys
        .iter()
        .any(|k| authority.reviewer(k).map(|r| r.role) != Some(Role::Approver))
    {
        return Some("decision cites an approval by a key that is not an approver".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::receipt_fields;

    fn approval(key: &str, report: &str) -> SignedFact {
        SignedFact {
            kind: ReceiptKind::Approval,
            time: String::new(),
            compaction_id: "c1".into(),
            key_id: key.into(),
            reviewer: String::new(),
            report_sha256: report.into(),
            reason: String::new(),
            note: String::new(),
            action: String::new(),
            finding_id: String::new(),
        }
    }

    #[test]
    fn cited_approvals_must_be_distinct_and_for_this_report() {
        let store = crate::audit::NamedKey::generate("s").unwrap().verifying();
        let authority = Authority::new(&store);
        let mut signed = BTreeMap::new();
        signed.insert(1, approval("k1", "r"));
        signed.insert(2, approval("k2", "r"));
        signed.insert(3, approval("k1", "r"));
        signed.insert(4, approval("k3", "old"));
        let current = ReportFact {
            report_sha256: "r".into(),
            approvals_required: 1,
            ..ReportFact::default()
        };
        let check = |seqs: &str, signer: &str| {
            let text = format!(r#"{{"approval_receipt_seqs":[{seqs}],"report_sha256":"r"}}"#);
            let mut decision = approval(signer, "r");
            decision.kind = ReceiptKind::Decision;
            decision.action = "release".into();
            check_decision(
                &signed,
                &receipt_fields::read(&text).unwrap(),
                &decision,
                &current,
                &authority,
            )
        };
        assert_eq!(check("", "k2"), None);
        assert!(check("1,3", "k1").is_some(), "the same key twice");
        assert!(check("1,2", "k9").is_some(), "signer did not approve");
        assert!(check("1,4", "k1").is_some(), "approval of an older report");
        assert!(check("1,7", "k1").is_some(), "not an approval");
        assert!(
            check("1,2", "k2").is_some(),
            "k1 and k2 were never registered as approvers"
        );
    }
}
