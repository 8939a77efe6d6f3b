//! Which files under a path are transcripts: every `*.jsonl` file, recursively, in path order
//! (component by component, so two runs over the same tree import in the same order, and a
//! session's `subagents/` come right before it), without following symbolic links to
//! directories (no loops), skipping files whose first line is not one the runtime writes
//! (`history.jsonl`, logs). A path that is itself a file is taken as it is. Sizes come along
//! so a caller can show progress over a large tree.

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Runtime;

/// A transcript to import and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptFile {
    pub path: PathBuf,
    pub bytes: u64,
}

/// The transcripts under `root` (a file or a directory). Directories that cannot be read are
/// skipped; the error for `root` itself is returned.
pub fn transcript_files(root: &Path, runtime: Runtime) -> std::io::Result<Vec<TranscriptFile>> {
    let meta = fs::metadata(root)?;
    if meta.is_file() {
        return Ok(vec![TranscriptFile {
            path: root.to_path_buf(),
            bytes: meta.len(),
        }]);
    }
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        // Reverse so the stack pops subdirectories in order.
        for child in children.into_iter().rev() {
            let Ok(kind) = fs::symlink_metadata(&child) else {
                continue;
            };
            if kind.is_dir() {
                pending.push(child);
            } else if child.extension().is_some_and(|ext| ext == "jsonl") {
                let Ok(meta) = fs::metadata(&child) else {
                    continue;
                };
                if meta.is_file() && looks_like(&child, runtime) {
                    found.push(TranscriptFile {
                        path: child,
                        bytes: meta.len(),
                    });
                }
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// Whether the first non-blank line of `path` is a line `runtime` writes. An empty file is
/// not a transcript; an unreadable one is taken (its import reports why).
fn looks_like(path: &Path, runtime: Runtime) -> bool {
    let Ok(file) = fs::File::open(path) else {
        return true;
    };
    let mut reader = BufReader::new(file.take(1 << 20));
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return false,
            Ok(_) if line.trim().is_empty() => continue,
            Ok(_) => break,
            // Not UTF-8 or over the sniff window: let the import report it.
            Err(_) => return true,
        }
    }
    let Ok(Value::Object(first)) = serde_json::from_str::<Value>(line.trim()) else {
        // A first line cut by the sniff window is still a candidate.
        return !line.ends_with('\n');
    };
    let kind = first.get("type").and_then(Value::as_str);
    match runtime {
        Runtime::ClaudeCode => {
            kind.is_some()
                && !first.contains_key("payload")
                && ["sessionId", "uuid", "leafUuid", "messageId"]
                    .iter()
                    .any(|key| first.contains_key(*key))
        }
        Runtime::Codex => {
            matches!(
                kind,
                Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
            ) || (kind.is_none() && first.contains_key("id") && first.contains_key("timestamp"))
        }
    }
}
