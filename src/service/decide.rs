//! Reviewer decisions as the policy's review rules shape them: which reason codes a release or
//! a reject may cite, which verdict classes need two distinct approvers, and the decision
//! itself. The reviewer's TUI and `cq decide` both decide through here, so `applies_to` and
//! the two-person classes are read one way.

use anyhow::bail;

use crate::audit::keys::NamedKey;
use crate::engine::verdict::VerdictClass;
use crate::policy::Policy;
use crate::store::{Action, DecisionError, DecisionOutcome, DecisionRequest, ReviewRules, Store};

/// The two-person class that means "any secret finding".
const SECRET_CLASS: &str = "secret";

/// One reason code and the decisions it may justify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasonRule {
    pub code: String,
    pub description: String,
    pub actions: Vec<Action>,
}

/// The actions a policy's `applies_to` names.
fn actions(applies_to: &str) -> Vec<Action> {
    match applies_to {
        "release" => vec![Action::Release],
        "reject" => vec![Action::Reject],
        _ => vec![Action::Release, Action::Reject],
    }
}

/// Every reason code of the policy with the decisions it may justify, in policy order.
pub fn reason_rules(policy: &Policy) -> Vec<ReasonRule> {
    policy
        .review
        .reason_codes
        .iter()
        .map(|r| ReasonRule {
            code: r.code.clone(),
            description: r.description.clone(),
            actions: actions(&r.applies_to),
        })
        .collect()
}

/// The policy's review rules for one kind of decision. A two-person class that is neither
/// a verdict class nor `secret` is an error: a typo must not silently drop the rule.
pub fn review_rules(policy: &Policy, action: Action) -> anyhow::Result<ReviewRules> {
    let mut classes = Vec::new();
    let mut secrets = false;
    for name in &policy.review.two_person_classes {
        if name == SECRET_CLASS {
            secrets = true;
            continue;
        }
        match VerdictClass::parse(name) {
            Some(class) => classes.push(class),
            None => bail!(
                "policy \"{}\" names the unknown two-person class \"{}\": use a verdict class such as \"FAIL/FINDING\", or \"secret\"",
                policy.name,
                crate::sanitize::excerpt(name, 40)
            ),
        }
    }
    Ok(ReviewRules {
        reason_codes: reason_rules(policy)
            .into_iter()
            .filter(|r| r.actions.contains(&action))
            .map(|r| r.code)
            .collect(),
        two_person_classes: classes,
        two_person_for_secrets: secrets,
    })
}

/// Records `request` signed with `key` under `policy`'s review rules.
pub fn decide(
    store: &Store,
    policy: &Policy,
    key: &NamedKey,
    request: &DecisionRequest,
) -> anyhow::Result<Result<DecisionOutcome, DecisionError>> {
    let rules = review_rules(policy, request.action)?;
    Ok(store.decide(request, key, &rules))
}
