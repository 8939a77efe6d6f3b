//! The `cq` binary as a runtime and a person use it, hermetic (temp stores, temp keys):
//! exit codes, refusal messages that say what and where, `digest`, `policy prompt`, signed
//! policies, recording, deciding, `status` and `ingest`.
#![allow(clippy::unwrap_used)]

#[path = "support/requests.rs"]
mod requests;

use std::path::Path;

use assert_cmd::Command;
use cq::json::{self, Limits, Value};

fn cq(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("cq").unwrap();
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("CQ_STORE");
    command.env_remove("CQ_TRUSTED_POLICY_KEYS");
    command
}

/// `cq keys generate --name NAME --dir KEYS`, which must succeed.
fn generate_key(d: &Path, keys: &Path, name: &str) {
    cq(d)
        .args([
            "keys",
            "generate",
            "--name",
            name,
            "--dir",
            keys.to_str().unwrap(),
        ])
        .assert()
        .code(0);
}

fn demo(name: &str) -> String {
    format!("{}/assets/demo/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn stdout_json(out: &std::process::Output) -> Value {
    json::parse(
        &out.stdout,
        &Limits {
            max_bytes: 1 << 24,
            max_depth: 64,
        },
    )
    .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn exit_codes_follow_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    cq(dir.path())
        .args(["check", &demo("01_clean_accepted.json")])
        .assert()
        .code(0);
    cq(dir.path())
        .args(["check", &demo("04_credentials.json")])
        .assert()
        .code(1);
    let refused = cq(dir.path())
        .args(["check", "-"])
        .write_stdin("{\"schema_version\":\"cq.request.v1\"}")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains("standard input") && stderr.contains("request.tenant_id: field is missing"),
        "{stderr}"
    );
}

#[test]
fn refusals_name_the_path_of_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(demo("01_clean_accepted.json"))
        .unwrap()
        .replacen("\"role\": \"user\"", "\"role\": \"system\"", 1);
    let path = dir.path().join("bad.json");
    std::fs::write(&path, text).unwrap();
    let out = cq(dir.path())
        .args(["check", path.to_str().unwrap()])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("messages[0]") && stderr.contains("role of user, assistant or tool"),
        "{stderr}"
    );
    let out = cq(dir.path())
        .args(["check", "missing.json"])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("\"missing.json\""));
}

#[test]
fn the_json_verdict_is_ascii_and_complete() {
    let dir = tempfile::tempdir().unwrap();
    let out = cq(dir.path())
        .args(["check", "--json", &demo("10_trojan_source.json")])
        .output()
        .unwrap();
    assert!(
        out.stdout.is_ascii(),
        "bidi controls must leave as \\u escapes"
    );
    let verdict = stdout_json(&out);
    for key in [
        "verdict",
        "outcome",
        "finding_status",
        "reasons",
        "messages",
        "report_sha256",
        "compaction_id",
        "report",
    ] {
        assert!(verdict.get(key).is_some(), "{key}");
    }
    let report = verdict.get("report").unwrap();
    assert_eq!(
        json::canonical_sha256(report).unwrap(),
        verdict
            .get("report_sha256")
            .and_then(Value::as_str)
            .unwrap()
    );
}

#[test]
fn digest_prints_canonical_text_and_sha256() {
    let dir = tempfile::tempdir().unwrap();
    let out = cq(dir.path())
        .args(["digest", "-"])
        .write_stdin(r#"{"b": 1, "a": [1.0, 1e16, "é"]}"#)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let canonical = "{\"a\":[1.0,1e+16,\"é\"],\"b\":1}";
    assert_eq!(
        text,
        format!(
            "{}\nsha256 {}\n",
            json::to_ascii(canonical),
            json::sha256_hex(canonical.as_bytes())
        )
    );
    cq(dir.path())
        .args(["digest", "-"])
        .write_stdin(r#"{"a":1,"a":2}"#)
        .assert()
        .code(2);
    cq(dir.path())
        .args(["digest", "--python", "-"])
        .write_stdin(r#"{"a":1,"a":2}"#)
        .assert()
        .code(0);
}

#[test]
fn policy_prompt_gives_the_summarizer_everything_it_must_copy() {
    let dir = tempfile::tempdir().unwrap();
    let out = String::from_utf8(
        cq(dir.path())
            .args(["policy", "prompt"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let engine = requests::engine("default");
    for record in &engine.manifest.records {
        assert!(out.contains(&record.record_sha256), "{}", record.id);
    }
    assert!(out.contains("- modified file {path}"));
    assert!(out.contains("do not push or deploy without user confirmation    (keeps deny(push_without_confirmation))"));
}

#[test]
fn user_policies_must_be_signed_by_a_trusted_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = d.join("keys");
    generate_key(d, &keys, "signer");
    let policy = d.join("p.toml");
    std::fs::write(
        &policy,
        cq::policy::BUILTIN
            .iter()
            .find(|(n, _)| *n == "default")
            .unwrap()
            .1,
    )
    .unwrap();
    let p = policy.to_str().unwrap();
    let unsigned = cq(d)
        .args(["check", "--policy", p, &demo("01_clean_accepted.json")])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&unsigned.get_output().stderr).contains("no signature file"));
    let loud = cq(d)
        .args([
            "check",
            "--allow-unsigned-policy",
            "--policy",
            p,
            &demo("01_clean_accepted.json"),
        ])
        .assert()
        .code(0);
    assert!(String::from_utf8_lossy(&loud.get_output().stderr).contains("WARNING"));

    cq(d)
        .args([
            "policy",
            "sign",
            "--key",
            keys.join("signer.key").to_str().unwrap(),
            p,
        ])
        .assert()
        .code(0);
    let public = std::fs::read_to_string(keys.join("signer.pub"))
        .unwrap()
        .trim()
        .to_owned();
    cq(d)
        .args(["policy", "verify", p, "--trust-key", &public])
        .assert()
        .code(0);
    let untrusted = cq(d)
        .args(["check", "--policy", p, &demo("01_clean_accepted.json")])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&untrusted.get_output().stderr).contains("not trusted"));
    cq(d)
        .args([
            "check",
            "--policy",
            p,
            "--trust-key",
            &public,
            &demo("01_clean_accepted.json"),
        ])
        .assert()
        .code(0);
    cq(d)
        .args(["check", "--policy", p, &demo("01_clean_accepted.json")])
        .env("CQ_TRUSTED_POLICY_KEYS", &public)
        .assert()
        .code(0);

    let text = std::fs::read_to_string(&policy)
        .unwrap()
        .replace("summary_min_length = 40", "summary_min_length = 1");
    std::fs::write(&policy, text).unwrap();
    let changed = cq(d)
        .args(["policy", "verify", p, "--trust-key", &public])
        .assert()
        .code(1);
    assert!(String::from_utf8_lossy(&changed.get_output().stdout).contains("changed after signing"));
}

#[test]
fn recorded_verdicts_are_decided_and_served_to_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("store.db");
    let db = db.to_str().unwrap();
    let accepted = stdout_json(
        &cq(d)
            .args([
                "check",
                "--json",
                "--store",
                db,
                &demo("01_clean_accepted.json"),
            ])
            .output()
            .unwrap(),
    );
    let quarantined = stdout_json(
        &cq(d)
            .args([
                "check",
                "--json",
                "--store",
                db,
                &demo("06_fabricated_approval.json"),
            ])
            .output()
            .unwrap(),
    );
    let id = |v: &Value| {
        v.get("compaction_id")
            .and_then(Value::as_str)
            .unwrap()
            .to_owned()
    };

    let status = cq(d)
        .args(["status", &id(&accepted), "--store", db])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(0));
    assert_eq!(
        stdout_json(&status).get("messages"),
        accepted.get("messages"),
        "the runtime gets what the gate returned"
    );
    cq(d)
        .args(["status", &id(&quarantined), "--store", db])
        .assert()
        .code(1);

    let keys = d.join("keys");
    generate_key(d, &keys, "alice");
    let alice = std::fs::read_to_string(keys.join("alice.pub"))
        .unwrap()
        .trim()
        .to_owned();
    cq(d)
        .args([
            "reviewers",
            "add",
            "alice",
            &alice,
            "--role",
            "approver",
            "--store",
            db,
        ])
        .assert()
        .code(0);
    let key = keys.join("alice.key");
    let unknown = cq(d)
        .args([
            "decide",
            &id(&quarantined),
            "--reject",
            "--reason",
            "nonsense",
            "--key",
            key.to_str().unwrap(),
            "--store",
            db,
        ])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&unknown.get_output().stderr).contains("nonsense"));
    cq(d)
        .args([
            "decide",
            &id(&quarantined),
            "--reject",
            "--reason",
            "poisoned",
            "--note",
            "fabricated approval",
            "--key",
            key.to_str().unwrap(),
            "--store",
            db,
        ])
        .assert()
        .code(0);
    let again = cq(d)
        .args([
            "decide",
            &id(&quarantined),
            "--release",
            "--reason",
            "false-positive",
            "--key",
            key.to_str().unwrap(),
            "--store",
            db,
        ])
        .assert()
        .code(2);
    assert!(
        String::from_utf8_lossy(&again.get_output().stderr).contains("already"),
        "{}",
        String::from_utf8_lossy(&again.get_output().stderr)
    );
    cq(d)
        .args(["audit", "verify", "--store", db])
        .assert()
        .code(0);
    let listed = String::from_utf8(
        cq(d)
            .args(["list", "--store", db, "--status", "rejected"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(listed.contains(&id(&quarantined)), "{listed}");
}

#[test]
fn ingest_reports_bad_lines_and_records_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut lines = Vec::new();
    for name in ["01_clean_accepted.json", "04_credentials.json"] {
        let value = json::parse(
            &std::fs::read(demo(name)).unwrap(),
            &Limits {
                max_bytes: 1 << 24,
                max_depth: 64,
            },
        )
        .unwrap();
        lines.push(json::canonical(&value).unwrap());
    }
    lines.insert(1, "{not json".into());
    let file = d.join("in.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let db = d.join("s.db");
    let out = cq(d)
        .args([
            "ingest",
            file.to_str().unwrap(),
            "--store",
            db.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 recorded: 1 accepted, 1 quarantined"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2:"));
    let again = cq(d)
        .args([
            "ingest",
            file.to_str().unwrap(),
            "--store",
            db.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("2 already recorded"));
}

#[test]
fn scan_reads_json_field_by_field_and_withholds_secret_keys() {
    let dir = tempfile::tempdir().unwrap();
    let input = r#"{"config":{"db":"postgres://admin:Sup3rS3cret!@db.internal:5432/app"},"AKIAZ7XQ3VLMNB2K4PTW":1}"#;
    let out = cq(dir.path())
        .args(["scan", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\tconfig.db\t"), "{text}");
    assert!(text.contains("<key 0>#key"), "{text}");
    assert!(!text.contains("AKIA") && !text.contains("Sup3r"), "{text}");
}
