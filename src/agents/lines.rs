//! JSONL lines with a per-line size cap: memory stays bounded by the cap whatever a line
//! holds, a line over the cap, a line that is not UTF-8 or not a JSON object is reported with
//! its 1-based number and skipped, and reading goes on. Blank lines are skipped silently.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::ImportProblem;

/// Reads `reader` line by line and hands every JSON object line to `each` with its number;
/// every bad line becomes a problem. A read error ends the file with one last problem.
pub(crate) fn for_each_object(
    mut reader: impl BufRead,
    path: &Path,
    max_line_bytes: usize,
    problems: &mut Vec<ImportProblem>,
    mut each: impl FnMut(u64, Map<String, Value>),
) {
    let mut buffer = Vec::new();
    let mut number = 0u64;
    loop {
        buffer.clear();
        number += 1;
        let read = match read_capped(&mut reader, &mut buffer, max_line_bytes) {
            Ok(read) => read,
            Err(error) => {
                problems.push(problem(
                    path,
                    number,
                    format!("the file could not be read from here on ({error}); the lines before were imported"),
                ));
                return;
            }
        };
        let overflow = match read {
            Read::End => return,
            Read::Line { overflow } => overflow,
        };
        if let Some(total) = overflow {
            problems.push(problem(
                path,
                number,
                format!(
                    "the line is {total} bytes, over the cap of {max_line_bytes}; it was skipped (raise the cap to read it)"
                ),
            ));
            continue;
        }
        let bytes = trim_line_end(&buffer);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => {
                problems.push(problem(
                    path,
                    number,
                    format!(
                        "the line is not valid UTF-8 (at byte {}); it was skipped",
                        error.valid_up_to()
                    ),
                ));
                continue;
            }
        };
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => each(number, object),
            Ok(_) => problems.push(problem(
                path,
                number,
                "the line is JSON but not an object; it was skipped".into(),
            )),
            Err(error) => problems.push(problem(
                path,
                number,
                format!("the line is not JSON ({error}); it was skipped"),
            )),
        }
    }
}

fn problem(path: &Path, line: u64, message: String) -> ImportProblem {
    ImportProblem {
        file: path.to_path_buf(),
        line,
        message,
    }
}

enum Read {
    End,
    /// A line was read; `overflow` is its whole length when it was over the cap (its bytes
    /// were then dropped, not kept).
    Line {
        overflow: Option<u64>,
    },
}

fn read_capped(
    reader: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Read> {
    let mut total = 0u64;
    let mut overflowed = false;
    let mut any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            if !any {
                return Ok(Read::End);
            }
            break;
        }
        any = true;
        let (chunk, done) = match available.iter().position(|&byte| byte == b'\n') {
            Some(at) => (available.get(..at).unwrap_or_default(), Some(at + 1)),
            None => (available, None),
        };
        total += chunk.len() as u64;
        if !overflowed && buffer.len() + chunk.len() <= cap {
            buffer.extend_from_slice(chunk);
        } else {
            overflowed = true;
            buffer.clear();
        }
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    Ok(Read::Line {
        overflow: overflowed.then_some(total),
    })
}

fn trim_line_end(bytes: &[u8]) -> &[u8] {
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

/// A string field, `None` when absent, not a string, or empty.
pub(crate) fn str_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
}

/// A boolean field that is exactly `true`.
pub(crate) fn is_true(object: &Map<String, Value>, key: &str) -> bool {
    object.get(key).and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8], cap: usize) -> (Vec<(u64, String)>, Vec<ImportProblem>) {
        let mut problems = Vec::new();
        let mut seen = Vec::new();
        for_each_object(
            input,
            Path::new("t.jsonl"),
            cap,
            &mut problems,
            |number, object| {
                seen.push((number, serde_json::to_string(&object).unwrap()));
            },
        );
        (seen, problems)
    }

    #[test]
    fn bad_lines_are_numbered_and_the_rest_is_read() {
        let input = b"{\"a\":1}\nnot json\n\n[1]\n{\"b\":\xff}\n{\"c\":3}\r\n{\"d\":4}";
        let (seen, problems) = run(input, 1024);
        assert_eq!(
            seen,
            vec![
                (1, "{\"a\":1}".to_string()),
                (6, "{\"c\":3}".to_string()),
                (7, "{\"d\":4}".to_string())
            ]
        );
        let lines: Vec<u64> = problems.iter().map(|problem| problem.line).collect();
        assert_eq!(lines, vec![2, 4, 5]);
        assert!(problems[2].message.contains("not valid UTF-8"));
    }

    #[test]
    fn deeply_nested_lines_are_reported_not_recursed_into() {
        let deep = format!(
            "{}{}\n{{\"ok\":1}}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let (seen, problems) = run(deep.as_bytes(), 1 << 20);
        assert_eq!(seen, vec![(2, "{\"ok\":1}".to_string())]);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].message.contains("recursion limit"),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn a_line_over_the_cap_is_skipped_without_being_kept() {
        let long = format!("{{\"x\":\"{}\"}}", "y".repeat(10_000));
        let input = format!("{{\"a\":1}}\n{long}\n{{\"b\":2}}\n");
        let (seen, problems) = run(input.as_bytes(), 100);
        assert_eq!(seen.len(), 2);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].line, 2);
        assert!(
            problems[0].message.contains("10008 bytes"),
            "{}",
            problems[0].message
        );
    }
}
