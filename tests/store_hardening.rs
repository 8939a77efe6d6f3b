//! An attacker with write access to the store file but no key, and an insider with the store's
//! key but one approver's key: what reaches an agent and every two-person check must come from
//! verified, signed receipts. One test per way in, named after what it pins. (The ones that
//! need no CLI run on both backends in `store_authority.rs`.)
#![allow(clippy::unwrap_used)]

#[path = "store_fixtures/fixtures.rs"]
mod fixtures;

use std::path::Path;

use assert_cmd::Command;
use cq::audit::merkle::{leaf_hash, Frontier};
use cq::audit::{Checkpoint, NamedKey};
use cq::json::{self, Limits, Value};
use cq::store::{store_key_path, store_pub_path, Mode, OpenOptions, Store, StoreError};
use fixtures::*;
use sha2::{Digest, Sha256};

fn cq(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("cq").unwrap();
    command
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("CQ_STORE")
        .env_remove("CQ_STORE_KEY")
        .env_remove("CQ_TRUSTED_POLICY_KEYS");
    command
}

fn demo_request(name: &str) -> String {
    format!("{}/assets/demo/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The demo store: its path as text.
fn demo_store(dir: &Path) -> String {
    let db = dir.join("demo.db");
    cq(dir)
        .args(["demo", "--no-tui", "--store", db.to_str().unwrap()])
        .assert()
        .code(0);
    db.display().to_string()
}

/// The compaction id `cq check` gives a demo request.
fn id_of(dir: &Path, request: &str) -> String {
    let out = cq(dir)
        .args(["check", &demo_request(request), "--json"])
        .output()
        .unwrap();
    let v = json::parse(&out.stdout, &Limits::default()).unwrap();
    v.get("compaction_id").unwrap().as_str().unwrap().to_owned()
}

fn sql(db: &str, statement: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch(statement).unwrap();
}

fn run(command: &mut Command) -> (Option<i32>, String, String) {
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn checkpoints(db: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM checkpoints", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn status_ignores_a_status_column_set_to_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = demo_store(d);
    let leak = id_of(d, "04_credentials.json");
    for column in [
        "status = 'accepted'",
        "status = 'released'",
        "verdict = 'ACCEPTED', status = 'accepted'",
    ] {
        sql(
            &db,
            &format!("UPDATE compactions SET {column} WHERE id = '{leak}'"),
        );
        let (code, out, err) = run(cq(d).args(["status", &leak, "--store", &db]));
        assert_eq!(code, Some(1), "{column}: {err}");
        assert!(
            !out.contains("messages"),
            "{column}: nothing to inject: {out}"
        );
        assert!(err.contains("tampered"), "{column}: {err}");
        sql(&db, &format!("UPDATE compactions SET status = 'quarantined', verdict = 'QUARANTINED' WHERE id = '{leak}'"));
    }
    // Untouched, it is quarantined and says so.
    let (code, out, _) = run(cq(d).args(["status", &leak, "--store", &db]));
    assert_eq!(code, Some(1));
    assert!(out.contains("\"status\":\"quarantined\""), "{out}");
}

#[test]
fn status_of_a_compaction_whose_stored_request_is_gone_is_tamper() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = demo_store(d);
    for request in ["01_clean_accepted.json", "04_credentials.json"] {
        let id = id_of(d, request);
        sql(
            &db,
            &format!("DELETE FROM requests WHERE compaction_id = '{id}'"),
        );
        let (code, out, err) = run(cq(d).args(["status", &id, "--store", &db]));
        assert_eq!(code, Some(1), "{request}: {err}");
        assert!(
            !out.contains("messages"),
            "{request}: nothing to inject: {out}"
        );
        assert!(
            err.contains("tampered") && err.contains("stored request"),
            "{request}: {err}"
        );
    }
}

/// Rewrites receipt `seq`'s body with `edit`, recomputes its digest and leaf, and re-chains
/// every later unsigned entry: what an attacker without a key can do.
fn rewrite_and_rechain(db: &str, seq: i64, edit: impl Fn(&str) -> String) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let rows: Vec<(i64, String)> = conn
        .prepare("SELECT seq, receipt_json FROM audit_entries WHERE seq >= ?1 ORDER BY seq")
        .unwrap()
        .query_map([seq], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut prev: Option<String> = None;
    for (i, (s, body)) in rows.into_iter().enumerate() {
        let mut body = if i == 0 { edit(&body) } else { body };
        if let Some(p) = &prev {
            let at = body.find("\"prev_receipt_sha256\":\"").unwrap() + 23;
            body.replace_range(at..at + 64, p);
        }
        let sha = cq::audit::hex(&Sha256::digest(body.as_bytes()));
        let leaf = cq::audit::hex(&leaf_hash(body.as_bytes()));
        conn.execute(
            "UPDATE audit_entries SET receipt_json = ?2, receipt_sha256 = ?3, leaf_hash = ?4,
                 prev_hash = COALESCE(?5, prev_hash) WHERE seq = ?1",
            rusqlite::params![s, body, sha, leaf, prev],
        )
        .unwrap();
        prev = Some(sha);
    }
}

#[test]
fn a_keyless_forgery_with_recomputed_hashes_and_no_checkpoints_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = demo_store(d);
    let leak = id_of(d, "04_credentials.json");
    let seq: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT seq FROM audit_entries WHERE compaction_id = ?1 AND kind = 'verdict'",
            [&leak],
            |r| r.get(0),
        )
        .unwrap();
    rewrite_and_rechain(&db, seq, |b| {
        b.replace("\"verdict\":\"QUARANTINED\"", "\"verdict\":\"ACCEPTED\"")
    });
    sql(&db, &format!("DELETE FROM checkpoints; UPDATE compactions SET status = 'accepted', verdict = 'ACCEPTED' WHERE id = '{leak}'"));
    let (code, out, _) = run(cq(d).args(["audit", "verify", "--store", &db]));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("TAMPERED"), "{out}");
    let (code, out, err) = run(cq(d).args(["status", &leak, "--store", &db]));
    assert_eq!(code, Some(1), "{err}");
    assert!(!out.contains("messages"));
    // The next write refuses to build on the forged log, and signs nothing.
    let (code, _, err) =
        run(cq(d).args(["check", &demo_request("13_too_short.json"), "--store", &db]));
    assert_eq!(code, Some(1), "tamper is exit 1: {err}");
    assert!(err.contains("tampered"), "{err}");
    assert_eq!(
        checkpoints(&db),
        0,
        "no fresh checkpoint over the forged log"
    );
}

/// Appends `body` (an object without the envelope) as the next receipt and signs a new head
/// with the store's key: what an insider holding the store key, but one approver's key only,
/// can write.
fn insider_append(path: &Path, kind: &str, fields: &[(&str, Value)], signer: &NamedKey) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let (seq, prev_body): (i64, String) = conn
        .query_row(
            "SELECT seq, receipt_json FROM audit_entries ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let prev = cq::audit::hex(&Sha256::digest(prev_body.as_bytes()));
    let seq = seq + 1;
    let time = "2026-12-01T00:00:00.000Z";
    let mut map = std::collections::BTreeMap::new();
    for (k, v) in fields {
        map.insert(k.to_string(), v.clone());
    }
    map.insert("schema".into(), Value::from("cq.receipt.v1"));
    map.insert("seq".into(), Value::from(seq));
    map.insert("kind".into(), Value::from(kind));
    map.insert("time".into(), Value::from(time));
    map.insert("prev_receipt_sha256".into(), Value::from(prev.as_str()));
    let body = json::canonical(&Value::Object(map)).unwrap();
    let compaction = fields
        .iter()
        .find(|(k, _)| *k == "compaction_id")
        .and_then(|(_, v)| v.as_str().map(str::to_owned));
    let sig = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(signer.sign(body.as_bytes()).to_bytes())
    };
    conn.execute(
        "INSERT INTO audit_entries (seq, kind, compaction_id, receipt_json, receipt_sha256,
             prev_hash, leaf_hash, signature, key_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        rusqlite::params![
            seq,
            kind,
            compaction,
            body,
            cq::audit::hex(&Sha256::digest(body.as_bytes())),
            prev,
            cq::audit::hex(&leaf_hash(body.as_bytes())),
            sig,
            signer.key_id(),
            time
        ],
    )
    .unwrap();
    // Rebuild the stored tree and sign the new head with the store key.
    let bodies: Vec<String> = conn
        .prepare("SELECT receipt_json FROM audit_entries ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    conn.execute("DELETE FROM audit_nodes", []).unwrap();
    let mut frontier = Frontier::new();
    for b in &bodies {
        let leaf = leaf_hash(b.as_bytes());
        let index = frontier.size();
        conn.execute(
            "INSERT INTO audit_nodes (level, idx, hash) VALUES (0, ?1, ?2)",
            rusqlite::params![index as i64, leaf.as_slice()],
        )
        .unwrap();
        for (level, hash) in frontier.push_completed(leaf) {
            conn.execute(
                "INSERT INTO audit_nodes (level, idx, hash) VALUES (?1, ?2, ?3)",
                rusqlite::params![level, (index >> level) as i64, hash.as_slice()],
            )
            .unwrap();
        }
    }
    let store_key = NamedKey::load(&store_key_path(path)).unwrap();
    let note = Checkpoint {
        origin: store_key.name.clone(),
        size: frontier.size(),
        root: frontier.root(),
    }
    .sign(&store_key);
    conn.execute(
        "INSERT INTO checkpoints (tree_size, root_hash, note, created_at) VALUES (?1, ?2, ?3, ?4)",
        rusqlite::params![
            frontier.size() as i64,
            cq::audit::hex(&frontier.root()),
            note,
            time
        ],
    )
    .unwrap();
}

#[test]
fn verify_requires_two_distinct_approvers_for_a_two_person_release() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = open(&path);
    let team = team(&store);
    store.record_verdict(&compaction(2)).unwrap();
    let c = store.compaction("c-000002").unwrap().unwrap();
    drop(store);
    // Alice alone signs a release of a FAIL/FINDING item, citing no approvals; the insider
    // signs the new head with the store key.
    let fields = [
        ("compaction_id", Value::from("c-000002")),
        ("decision", Value::from("release")),
        ("approval_receipt_seqs", Value::Array(Vec::new())),
        ("reason", Value::from(REASONS[0])),
        ("note", Value::from("alone")),
        ("reviewer", Value::from("alice")),
        ("reviewer_key_id", Value::from(team.alice.key_id())),
        (
            "report_sha256",
            Value::from(c.summary.report_sha256.as_str()),
        ),
        ("request_sha256", Value::from(c.request_sha256.as_str())),
    ];
    insider_append(&path, "decision", &fields, &team.alice);
    let store = Store::open(&path, Mode::ReadOnly).unwrap();
    let report = store.verify(None).unwrap();
    assert!(
        !report.is_ok(),
        "a lone release of a two-person class passed"
    );
    assert!(
        report.to_string().contains("two distinct approvers"),
        "{report}"
    );
}

#[test]
fn a_truncated_store_is_not_silently_recreated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("s.db");
    cq(d)
        .args(["check", &demo_request("01_clean_accepted.json"), "--store"])
        .arg(&db)
        .assert()
        .code(0);
    std::fs::write(&db, b"").unwrap();
    let (code, _, err) = run(cq(d)
        .args(["check", &demo_request("01_clean_accepted.json"), "--store"])
        .arg(&db));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("truncated"), "{err}");
    assert_eq!(
        std::fs::metadata(&db).unwrap().len(),
        0,
        "nothing re-created"
    );
    // Deleted, with its key still there: the same.
    std::fs::remove_file(&db).unwrap();
    let r = Store::open(&db, Mode::ReadWrite);
    assert!(matches!(&r, Err(StoreError::Tampered(_))), "{r:?}");
}

/// `dir` made read-only media for as long as the guard lives: a read-only bind mount when
/// running as root (a read-only directory does not stop root), else a directory without write
/// permission. `None` (the test says it was skipped) when neither can be had.
struct ReadOnly {
    mounted: Option<std::path::PathBuf>,
    dir: std::path::PathBuf,
}

impl ReadOnly {
    fn make(dir: &Path, at: &Path) -> Option<ReadOnly> {
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
        if root {
            std::fs::create_dir_all(at).ok()?;
            let ok = |args: &[&str]| {
                std::process::Command::new("mount")
                    .args(args)
                    .status()
                    .is_ok_and(|s| s.success())
            };
            let (src, dst) = (dir.to_str()?, at.to_str()?);
            if ok(&["--bind", src, dst]) && ok(&["-o", "remount,ro,bind", dst]) {
                return Some(ReadOnly {
                    mounted: Some(at.to_owned()),
                    dir: at.to_owned(),
                });
            }
            let _ = std::process::Command::new("umount").arg(dst).status();
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).ok()?;
            Some(ReadOnly {
                mounted: None,
                dir: dir.to_owned(),
            })
        }
        #[cfg(not(unix))]
        None
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        match &self.mounted {
            Some(at) => {
                let _ = std::process::Command::new("umount").arg(at).status();
            }
            None => {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = std::fs::Permissions::from_mode(0o755);
                    let _ = std::fs::set_permissions(&self.dir, mode);
                }
            }
        }
    }
}

#[test]
fn read_only_media_open_with_readonly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let media = d.join("media");
    std::fs::create_dir(&media).unwrap();
    let db = media.join("demo.db");
    cq(d)
        .args(["demo", "--no-tui", "--store"])
        .arg(&db)
        .assert()
        .code(0);
    // Merged and closed, as a store copied onto read-only media is.
    sql(&db.display().to_string(), "PRAGMA wal_checkpoint(TRUNCATE)");
    for extra in ["demo.db-wal", "demo.db-shm"] {
        let _ = std::fs::remove_file(media.join(extra));
    }
    let Some(ro) = ReadOnly::make(&media, &d.join("mounted")) else {
        skipped("SKIPPED read_only_media_open_with_readonly: no read-only media can be made here");
        return;
    };
    let copy = ro.dir.join("demo.db").display().to_string();
    assert!(
        std::fs::write(ro.dir.join("probe"), b"x").is_err(),
        "the media must be read-only"
    );
    let (code, out, err) = run(cq(d).args(["list", "--store", &copy]));
    assert_eq!(code, Some(0), "{err}");
    let total = 18
        + cq::service::demo::agents::manifest()
            .unwrap()
            .scenario
            .len();
    assert!(out.contains(&format!("{total} of {total} shown")), "{out}");
    let (code, out, err) = run(cq(d).args(["audit", "verify", "--store", &copy]));
    assert_eq!(code, Some(0), "{out}{err}");
    drop(ro);
}

#[test]
fn an_unmerged_log_on_read_only_media_is_refused_not_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let live = d.join("live.db");
    cq(d)
        .args(["demo", "--no-tui", "--store"])
        .arg(&live)
        .assert()
        .code(0);
    let media = d.join("media");
    std::fs::create_dir(&media).unwrap();
    {
        // Copied while a writer still holds writes in the write-ahead log.
        let conn = rusqlite::Connection::open(&live).unwrap();
        conn.execute_batch(
            "PRAGMA wal_autocheckpoint = 0; INSERT INTO meta (key, value) VALUES ('probe', 'x')",
        )
        .unwrap();
        std::fs::copy(&live, media.join("demo.db")).unwrap();
        std::fs::copy(d.join("live.db-wal"), media.join("demo.db-wal")).unwrap();
    }
    assert!(std::fs::metadata(media.join("demo.db-wal")).unwrap().len() > 0);
    let Some(ro) = ReadOnly::make(&media, &d.join("mounted")) else {
        skipped("SKIPPED an_unmerged_log_on_read_only_media_is_refused_not_hidden: no read-only media can be made here");
        return;
    };
    let r = Store::open(&ro.dir.join("demo.db"), Mode::ReadOnly);
    assert!(matches!(r, Err(StoreError::UnmergedWal(_))), "{r:?}");
    drop(r);
    drop(ro);
}

#[test]
fn a_store_whose_key_nobody_vouches_for_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = demo_store(d);
    let public = std::fs::read_to_string(store_pub_path(Path::new(&db))).unwrap();
    let elsewhere = d.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let copy = elsewhere.join("demo.db");
    sql(&db, "PRAGMA wal_checkpoint(TRUNCATE)");
    std::fs::copy(&db, &copy).unwrap();
    let copy = copy.display().to_string();
    // No key beside it: verify fails and says how to trust it.
    let (code, out, _) = run(cq(d).args(["audit", "verify", "--store", &copy]));
    assert_eq!(code, Some(1));
    assert!(out.contains("--store-key"), "{out}");
    let (code, out, err) = run(cq(d).args([
        "audit",
        "verify",
        "--store",
        &copy,
        "--store-key",
        public.trim(),
    ]));
    assert_eq!(code, Some(0), "{out}{err}");
    // A store re-keyed by an attacker: its recorded key is not the trusted one.
    let other = NamedKey::generate("cq.store/0000000000000000").unwrap();
    sql(
        &copy,
        &format!(
            "UPDATE meta SET value = '{}' WHERE key = 'public_key'",
            other.verifier_text()
        ),
    );
    let r = Store::open_with(
        Path::new(&copy),
        &OpenOptions {
            mode: Mode::ReadOnly,
            store_key: Some(public.trim().to_owned()),
        },
    );
    assert!(matches!(&r, Err(StoreError::Tampered(_))), "{r:?}");
}

#[test]
fn shown_decision_fields_are_bound_by_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = demo_store(d);
    let key = d.join("demo.db.reviewers/alice.key");
    let id = id_of(d, "13_too_short.json");
    cq(d)
        .args([
            "decide",
            &id,
            "--reject",
            "--reason",
            "malformed",
            "--note",
            "too short",
        ])
        .args(["--store", &db, "--key"])
        .arg(&key)
        .assert()
        .code(0);
    for edit in [
        "UPDATE decisions SET note = 'tampered note'",
        "UPDATE decisions SET reviewer = 'mallory'",
        "UPDATE decisions SET reason = 'false-positive'",
    ] {
        let copy = d.join("copy.db");
        let _ = std::fs::remove_file(&copy);
        sql(&db, "PRAGMA wal_checkpoint(TRUNCATE)");
        std::fs::copy(&db, &copy).unwrap();
        std::fs::copy(store_key_path(Path::new(&db)), store_key_path(&copy)).unwrap();
        let copy = copy.display().to_string();
        sql(&copy, edit);
        let (code, out, _) = run(cq(d).args(["audit", "verify", "--store", &copy]));
        assert_eq!(code, Some(1), "{edit}: {out}");
        assert!(out.contains("decision row"), "{edit}: {out}");
        std::fs::remove_file(store_key_path(Path::new(&copy))).unwrap();
    }
}
