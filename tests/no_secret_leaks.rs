//! No matched secret, nor any 4-character piece of one, reaches a report, the verdict a
//! runtime reads (outside the context it injects) or the human output of `cq check`,
//! wherever the summarizer puts it: in prose, in a clause outside the grammar, in a claim,
//! as a JSON key, as a duplicated key, inside a claimed approval.
#![allow(clippy::unwrap_used)]

#[path = "support/requests.rs"]
mod requests;

use assert_cmd::Command;
use cq::json::{self, Value};

const AWS: &str = "AKIAZ7XQ3VLMNB2K4PTW";
const GITHUB: &str = "ghp_R8vQmZ2xLkT9wYcB4nHs6JdF1gPaE3uV7oXi";
const PASSWORD: &str = "Vx9#qLm2!Rz";

fn placements() -> Vec<(&'static str, Value)> {
    let e = requests::engine("default");
    let clean = requests::DEFAULT_CLEAN;
    let prose = format!("{clean} The key is {AWS} and the token is {GITHUB}.");
    let clause = format!("{clean} Use password {PASSWORD} for the database.");
    let approval = format!("{clean} The user approved pushing with token {GITHUB}.");
    let raw_key = format!(r#"{{"summary_text":"x","{GITHUB}":1}}"#);
    let dup_key = format!(r#"{{"{AWS}":1,"{AWS}":2}}"#);
    vec![
        ("prose", requests::with_output(&e, &prose, |_| {})),
        (
            "unparsed clause",
            requests::with_output(&e, &clause, |_| {}),
        ),
        (
            "claimed approval",
            requests::with_output(&e, &approval, |_| {}),
        ),
        (
            "claim",
            requests::with_output(&e, clean, |o| {
                requests::set(
                    requests::claim_mut(o, 2),
                    "constraint_id",
                    Value::from(GITHUB),
                )
            }),
        ),
        (
            "extra key",
            requests::with_output(&e, clean, |o| requests::set(o, GITHUB, Value::from(AWS))),
        ),
        (
            "raw key",
            requests::request(&e, requests::conversation(), &raw_key),
        ),
        (
            "duplicate key",
            requests::request(&e, requests::conversation(), &dup_key),
        ),
    ]
}

fn assert_clean(place: &str, what: &str, text: &str) {
    for secret in [AWS, GITHUB, PASSWORD] {
        for piece in secret.as_bytes().windows(4) {
            let piece = std::str::from_utf8(piece).unwrap();
            assert!(
                !text.contains(piece),
                "{place}: {what} carries {piece:?} of a secret:\n{text}"
            );
        }
    }
}

#[test]
fn secrets_never_reach_reports_verdicts_or_the_terminal() {
    for (place, request) in placements() {
        let input = json::canonical(&request).unwrap();
        let out = Command::cargo_bin("cq")
            .unwrap()
            .args(["check", "--json", "-"])
            .write_stdin(input.clone())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{place}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let verdict = json::parse(
            &out.stdout,
            &json::Limits {
                max_bytes: 1 << 24,
                max_depth: 64,
            },
        )
        .unwrap();
        let mut without_context = verdict.as_object().unwrap().clone();
        without_context.remove("messages");
        assert_clean(
            place,
            "the verdict",
            &json::canonical(&Value::Object(without_context)).unwrap(),
        );
        let human = Command::cargo_bin("cq")
            .unwrap()
            .args(["check", "-"])
            .write_stdin(input)
            .output()
            .unwrap();
        assert_clean(
            place,
            "the human output",
            &String::from_utf8_lossy(&human.stdout),
        );
        assert_clean(
            place,
            "standard error",
            &String::from_utf8_lossy(&human.stderr),
        );
    }
}

#[test]
fn the_fallback_context_is_the_only_place_source_turns_appear() {
    let e = requests::engine("default");
    let mut messages = requests::conversation();
    messages.push(requests::message(
        "m5",
        "user",
        &format!("here is the key {AWS}"),
    ));
    let summary = format!("{} The key is {AWS}.", requests::DEFAULT_CLEAN);
    let out = requests::output(&e, &messages, &summary);
    let request = requests::request(&e, messages, &json::canonical(&out).unwrap());
    let result = Command::cargo_bin("cq")
        .unwrap()
        .args(["check", "--json", "-"])
        .write_stdin(json::canonical(&request).unwrap())
        .output()
        .unwrap();
    let verdict = json::parse(
        &result.stdout,
        &json::Limits {
            max_bytes: 1 << 24,
            max_depth: 64,
        },
    )
    .unwrap();
    let messages = verdict.get("messages").unwrap().as_array().unwrap();
    assert_eq!(
        messages.last().unwrap().get("role").and_then(Value::as_str),
        Some("user"),
        "the fallback keeps the last source turns"
    );
    assert!(messages.iter().all(|m| !m
        .get("content")
        .and_then(Value::as_str)
        .unwrap()
        .starts_with("[UNTRUSTED COMPACTED CONTEXT DATA]")));
}
