//! Redaction and secrecy: redacted text rescans clean, and no finding (nor its Debug or Display
//! form) contains any substring of four or more characters of the value it found. The scanner
//! never panics on arbitrary input (proptest).

#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;

use cq::scan::{redact, Finding, Scanner};
use proptest::prelude::*;

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| Scanner::builtin().unwrap())
}

/// Texts that carry secrets and personal data of many kinds, in code and in prose.
const LEAKY: &[&str] = &[
    "the db password is hunter2-Prod! and the deploy token is ghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg",
    "export AWS_ACCESS_KEY_ID=AKIALALEMEL33243OLIB\nexport AWS_SECRET_ACCESS_KEY=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",
    "Stripe.api_key = \"sk_live_dhhfUUyfrAace5dBAZ10JrAD\" # rotate me",
    "postgres://spot_app:Pseg2020@calling-mr-bones.c0qsadyxbf4k.us-east-1.redshift.amazonaws.com:5439/db",
    "Reach Jane at jane.roe@corp-mail.net or +44 20 7946 0958; card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00.",
    "SSN 536-22-5677, server 203.0.113.77, wallet 3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEogIBAAKCAQEAmHJ8BqU2yP8d7u1fQ4m9Zx0vW3kL5nS2tR8pO1qE6cY4hJ7g\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gt\n-----END RSA PRIVATE KEY-----",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "config: c2xhY2tfdG9rZW49eG94Yi03ODEyMzY1NDI3MzYtMjM2NDUzNTc4OTY1Mi1Ha3dGRFFvSHF6WERWc0M2R3pxWVV5cEQ=",
];

fn leaked(finding_text: &str, secret: &str) -> Option<String> {
    let chars: Vec<char> = secret.chars().collect();
    for w in chars.windows(4) {
        let piece: String = w.iter().collect();
        if piece.chars().all(|c| c.is_alphanumeric()) && finding_text.contains(&piece) {
            return Some(piece);
        }
    }
    None
}

fn rendered(f: &Finding) -> String {
    format!(
        "{f:?} {f} {} {} {} {}",
        f.rule_id, f.category, f.field_path, f.confidence
    )
}

#[test]
fn redacted_text_rescans_clean() {
    for text in LEAKY {
        let findings = scanner().scan_text("summary_text", text);
        assert!(!findings.is_empty(), "nothing found in {text:?}");
        let redacted = redact(text, &findings);
        assert!(redacted.contains("[REDACTED:"), "{redacted}");
        let again = scanner().scan_text("summary_text", &redacted);
        assert!(
            again.is_empty(),
            "redacted text still has findings: {again:?}\n{redacted}"
        );
    }
}

#[test]
fn findings_never_carry_the_value() {
    for text in LEAKY {
        for f in scanner().scan_text("summary_text", text) {
            let secret = &text[f.span.clone()];
            // Rule ids and categories are fixed words; only compare the parts a value could
            // reach, and skip fixed words that happen to be in the value (e.g. "PRIVATE").
            let shown = rendered(&f);
            if let Some(piece) = leaked(&shown, secret) {
                let fixed = f.rule_id.contains(&piece.to_ascii_lowercase())
                    || "summary_text findingrule_idcategoryfield_pathspanconfidence"
                        .contains(&piece);
                assert!(
                    fixed,
                    "finding {shown:?} contains {piece:?} of the value it found"
                );
            }
        }
    }
}

#[test]
fn redact_ignores_spans_outside_the_text() {
    let f = Finding {
        rule_id: "r".into(),
        category: cq::scan::Category::Pii,
        field_path: "t".into(),
        span: 5..50,
        confidence: cq::scan::Confidence::Low,
    };
    assert_eq!(redact("short", &[f]), "short");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_spans_are_in_bounds(text in "\\PC{0,400}") {
        let findings = scanner().scan_text("p", &text);
        for f in &findings {
            prop_assert!(f.span.start < f.span.end && f.span.end <= text.len());
            prop_assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end));
        }
        let redacted = redact(&text, &findings);
        prop_assert!(redacted.len() + 64 * findings.len() >= text.len() / 2);
    }

    #[test]
    fn never_panics_on_secret_shaped_noise(text in "[A-Za-z0-9+/=_:@.\\- \\n\"']{0,300}") {
        let findings = scanner().scan_text("p", &text);
        let redacted = redact(&text, &findings);
        prop_assert!(scanner().scan_text("p", &redacted).len() <= findings.len() + 1);
    }
}
