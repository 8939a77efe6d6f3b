//! The sanitizer against a corpus of real terminal-attack payloads, and a property test that no
//! input can get a dangerous code point past it.
#![allow(clippy::unwrap_used)]

use cq::review::action::Action;
use cq::review::app::AppOptions;
use cq::review::fake::{FakeSource, FAKE_NOW};
use cq::review::headless::Headless;
use cq::sanitize::{sanitize, SegmentKind};
use proptest::prelude::*;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct Expected {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    file: String,
    anomalies: usize,
    badges: Vec<String>,
}

/// Written independently of the sanitizer's own classifier: every class the terminal could
/// interpret or that hides text.
fn forbidden(c: char) -> bool {
    let cp = c as u32;
    c.is_control()
        || matches!(cp, 0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C)
        || matches!(cp, 0x200B..=0x200D | 0x2060..=0x2064 | 0xFEFF | 0x180E | 0x00AD | 0x034F)
        || matches!(cp, 0xE0000..=0xE0FFF | 0xFE00..=0xFE0F | 0x180B..=0x180F)
        || matches!(cp, 0xE000..=0xF8FF | 0xF0000..=0x10FFFF | 0x2028 | 0x2029)
        || matches!(cp, 0x115F | 0x1160 | 0x3164 | 0xFFA0 | 0xFFF0..=0xFFFB)
        || matches!(cp, 0x27E8 | 0x27E9)
}

fn assert_safe(input: &str) {
    for segment in sanitize(input).segments {
        match segment.kind {
            SegmentKind::Text => {
                assert!(
                    !segment.text.chars().any(forbidden),
                    "text segment {:?} of {input:?}",
                    segment.text
                );
                assert_eq!(&input[segment.source.clone()], segment.text);
            }
            SegmentKind::Badge => {
                let inner = segment
                    .text
                    .strip_prefix('⟨')
                    .and_then(|s| s.strip_suffix('⟩'))
                    .unwrap();
                assert!(
                    inner
                        .chars()
                        .all(|c| c.is_ascii_graphic() || " …·".contains(c)),
                    "badge {:?}",
                    segment.text
                );
            }
            SegmentKind::LineBreak => assert_eq!(segment.text, "\n"),
        }
    }
}

#[test]
fn every_corpus_payload_is_neutralised_and_counted() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sanitize_corpus");
    let expected: Expected =
        toml::from_str(&std::fs::read_to_string(dir.join("expected.toml")).unwrap()).unwrap();
    let mut payloads: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name != "expected.toml")
        .collect();
    payloads.sort();
    let mut listed: Vec<String> = expected.case.iter().map(|c| c.file.clone()).collect();
    listed.sort();
    assert_eq!(payloads, listed, "every payload has an expectation");

    for case in &expected.case {
        let input = std::fs::read_to_string(dir.join(&case.file)).unwrap();
        assert!(
            input.chars().any(forbidden),
            "{} holds a payload",
            case.file
        );
        assert_safe(&input);
        let out = sanitize(&input);
        let plain = out.to_plain();
        assert_eq!(out.anomaly_count, case.anomalies, "{}: {plain}", case.file);
        for badge in &case.badges {
            assert!(
                plain.contains(badge.as_str()),
                "{}: {badge} in {plain}",
                case.file
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn output_never_holds_a_dangerous_char(input in any::<String>()) {
        assert_safe(&input);
    }

    #[test]
    fn dangerous_heavy_input_is_safe(
        input in proptest::collection::vec(
            prop_oneof![
                Just('\u{1b}'), Just('['), Just(']'), Just('\u{7}'), Just('\\'), Just('\u{9c}'),
                Just('\u{9b}'), Just('\u{202e}'), Just('\u{e0041}'), Just('\n'), Just('\r'),
                Just('⟨'), Just('⟩'), Just('P'), Just('3'), Just(';'), any::<char>(),
            ],
            0..64,
        ).prop_map(|chars| chars.into_iter().collect::<String>())
    ) {
        assert_safe(&input);
        let out = sanitize(&input);
        let badges = out.segments.iter().filter(|s| s.kind == SegmentKind::Badge).count();
        prop_assert!(out.anomaly_count <= badges);
    }
}

/// Puts `evil` into every untrusted field of the first item.
fn poisoned_source(evil: &str) -> FakeSource {
    let mut source = FakeSource::new();
    let item = &mut source.items[0];
    item.tenant = format!("acme{evil}");
    item.task = format!("deploy{evil}");
    item.main_reason = format!("reason{evil}");
    item.summary_text = format!("{evil}{}{evil}", item.summary_text);
    item.summary_spans.clear();
    for message in &mut item.sources {
        message.content = format!("{evil}{}", message.content);
        message.masked.clear();
        message.message_id = format!("m{evil}");
    }
    for check in &mut item.checks {
        check.detail = format!("detail{evil}");
        check.code = Some(format!("code{evil}"));
        for row in &mut check.constraints {
            row.constraint_id = format!("INV{evil}");
            row.claim_status = evil.to_string();
        }
    }
    for claim in &mut item.claims {
        claim.preserved_predicate = format!("x {evil} y");
    }
    for pinned in &mut item.pinned {
        pinned.returned = Some(format!("{evil} {}", pinned.text));
    }
    item.previous_summary = Some(format!("old {evil}"));
    for receipt in &mut item.receipts {
        receipt.body = format!("{{\"x\":\"{evil}\"}}");
        receipt.kind = format!("verdict{evil}");
    }
    source
}

fn assert_screen_clean(h: &Headless<FakeSource>, what: &str) {
    let buffer = h.render().unwrap();
    for cell in buffer.content() {
        let symbol = cell.symbol();
        assert!(
            !symbol.chars().any(|c| forbidden(c) && c != '⟨' && c != '⟩'),
            "{what}: {symbol:?} reached the screen"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever an attacker writes into any field, no dangerous code point is drawn on any
    /// screen: every untrusted string goes through the sanitizer.
    #[test]
    fn no_screen_draws_a_dangerous_char(
        evil in proptest::collection::vec(
            prop_oneof![
                Just('\u{1b}'), Just('['), Just(']'), Just('\u{7}'), Just('\u{9b}'),
                Just('\u{202e}'), Just('\u{2066}'), Just('\u{200b}'), Just('\u{e0041}'),
                Just('\u{feff}'), Just('\u{fe0f}'), Just('\u{e000}'), Just('\r'), Just('\t'),
                Just('\n'), Just('\u{85}'), Just('\u{7f}'), Just('\u{2028}'), any::<char>(),
            ],
            1..24,
        ).prop_map(|chars| chars.into_iter().collect::<String>())
    ) {
        let options = AppOptions {
            readonly: false,
            reviewer: "alice".into(),
            now_unix: FAKE_NOW,
            page_size: 50,
        };
        let mut h = Headless::new(poisoned_source(&evil), options, 160, 40).unwrap();
        h.update(Action::Sort).update(Action::Sort);
        h.update(Action::Filter).type_text("q-0001").update(Action::Back);
        assert_screen_clean(&h, "queue");
        h.update(Action::Open);
        assert_screen_clean(&h, "detail");
        h.update(Action::ToggleDiff);
        for kind in ["summary diff", "claims diff", "report diff", "pinned diff"] {
            assert_screen_clean(&h, kind);
            h.update(Action::NextPane);
        }
        h.update(Action::Back).update(Action::Audit);
        assert_screen_clean(&h, "audit");
        h.update(Action::Back).update(Action::Reject);
        assert_screen_clean(&h, "decision dialog");
    }
}
