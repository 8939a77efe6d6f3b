//! Installing `cq`'s hook entries into a runtime's settings, as pure functions on the file's
//! text: Claude Code's `settings.json` (`.claude/settings.json` in a project, or
//! `~/.claude/settings.json`) and Codex's `hooks.json` (`.codex/hooks.json`, or
//! `~/.codex/hooks.json`), which share one shape:
//! `{"hooks": {"EVENT": [{"matcher": "…", "hooks": [{"type": "command", "command": "…"}]}]}}`.
//!
//! Guarantees: nothing that is there is lost, reordered or reformatted (the file is edited in
//! place, new text follows its indentation and line endings); installing twice changes
//! nothing (an event that already runs a `cq hook` command is left alone); uninstalling
//! removes only `cq`'s own entries, and after an install it gives back the original bytes
//! (when the original had no empty `"hooks": {}` of its own); a malformed file is an error
//! and nothing is written. Codex reads `hooks.json` next to its `config.toml` (hooks are on by
//! default since they left the `codex_hooks` feature flag) and asks the user to trust a new
//! hook once, in `/hooks`.

mod jsontext;

use std::path::{Path, PathBuf};

use jsontext::{Kind, Member, Node};

use super::Runtime;

/// Where the settings live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The project's own file, shared with everyone working in it.
    Project,
    /// The user's file, for every project.
    User,
}

/// The settings file for `runtime` and `scope`. `config_home` is `CLAUDE_CONFIG_DIR` or
/// `CODEX_HOME` when set.
pub fn settings_path(
    runtime: Runtime,
    scope: Scope,
    project_dir: &Path,
    home: &Path,
    config_home: Option<&Path>,
) -> PathBuf {
    let (dir, file) = match runtime {
        Runtime::ClaudeCode => (".claude", "settings.json"),
        Runtime::Codex => (".codex", "hooks.json"),
    };
    match scope {
        Scope::Project => project_dir.join(dir).join(file),
        Scope::User => config_home
            .map_or_else(|| home.join(dir), Path::to_path_buf)
            .join(file),
    }
}

/// What to install: the program that runs the hooks and the tools `PreToolUse` watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookInstall {
    pub runtime: Runtime,
    /// The `cq` binary, as the runtime's shell should find it.
    pub program: String,
    /// The `PreToolUse` matcher (a regex over tool names on both runtimes).
    pub tool_matcher: String,
}

impl HookInstall {
    /// Watches the default guarded tools.
    pub fn new(runtime: Runtime, program: &str) -> HookInstall {
        HookInstall {
            runtime,
            program: program.to_string(),
            tool_matcher: super::hooks::default_guarded_tools(runtime).join("|"),
        }
    }

    /// The command every entry runs: `PROGRAM hook claude-code` (or `codex`).
    pub fn command(&self) -> String {
        format!(
            "{} hook {}",
            shell_quote(&self.program),
            self.runtime.name()
        )
    }

    fn entries(&self) -> [(&'static str, Option<&str>); 4] {
        [
            ("SessionStart", Some("compact")),
            ("PostCompact", None),
            ("PreCompact", None),
            ("PreToolUse", Some(self.tool_matcher.as_str())),
        ]
    }
}

/// Why a settings file was not changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("the settings file is not valid JSON at line {line}, column {column} ({what}); fix it by hand, cq changed nothing")]
    Malformed {
        line: usize,
        column: usize,
        what: String,
    },
    #[error("{what} in the settings file is not {expected}; fix it by hand, cq changed nothing")]
    Shape {
        what: String,
        expected: &'static str,
    },
}

/// `text` with `spec`'s hook entries added where missing.
pub fn install(text: &str, spec: &HookInstall) -> Result<String, SettingsError> {
    let mut text = if text.trim().is_empty() {
        "{}\n".to_string()
    } else {
        text.to_string()
    };
    let command = spec.command();
    for (event, matcher) in spec.entries() {
        let root = parse_root(&text)?;
        let style = Style::of(&text, &root);
        let group = group_value(matcher, &command);
        let edit = match root.member("hooks") {
            None => insert_member(
                &text,
                &style,
                &root,
                "hooks",
                &Out::Object(vec![(event.to_string(), Out::Array(vec![group]))]),
            ),
            Some(hooks) => {
                let hooks = &hooks.value;
                if !matches!(hooks.kind, Kind::Object(_)) {
                    return Err(shape("\"hooks\"", "an object"));
                }
                match hooks.member(event) {
                    None => insert_member(&text, &style, hooks, event, &Out::Array(vec![group])),
                    Some(groups) => {
                        let Kind::Array(items) = &groups.value.kind else {
                            return Err(shape(&format!("\"hooks\".\"{event}\""), "an array"));
                        };
                        if items
                            .iter()
                            .any(|group| handlers(group).any(|h| is_cq(h, spec)))
                        {
                            continue;
                        }
                        append_item(&text, &style, &groups.value, &group)
                    }
                }
            }
        };
        text = edit.apply(&text);
    }
    Ok(text)
}

/// `text` without any of `cq`'s hook entries (commands `… cq hook RUNTIME`, or exactly
/// `spec`'s command); everything else stays as it is.
pub fn uninstall(text: &str, spec: &HookInstall) -> Result<String, SettingsError> {
    let mut text = text.to_string();
    if text.trim().is_empty() {
        return Ok(text);
    }
    // Each edit removes one handler, so this ends; the bound only guards against a bug.
    for _ in 0..=text.len() {
        let root = parse_root(&text)?;
        let Some(edit) = removal(&root, spec)? else {
            break;
        };
        if edit.start == edit.end {
            break;
        }
        text = edit.apply(&text);
    }
    Ok(text)
}

/// Whether `command` is a `cq hook` command for `runtime`: `… hook claude-code` (or `codex`)
/// run by a program named `cq` (or `cq.exe`), quoted or not.
pub fn is_cq_command(command: &str, runtime: Runtime) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let [program @ .., hook, name] = words.as_slice() else {
        return false;
    };
    if *hook != "hook" || *name != runtime.name() || program.is_empty() {
        return false;
    }
    let program = program.join(" ");
    let program = program.trim_matches(|c| c == '\'' || c == '"');
    let file = program.rsplit(['/', '\\']).next().unwrap_or(program);
    file == "cq" || file == "cq.exe"
}

fn is_cq(handler: &Node, spec: &HookInstall) -> bool {
    handler
        .member("command")
        .and_then(|m| m.value.as_str())
        .is_some_and(|command| {
            command.trim() == spec.command() || is_cq_command(command, spec.runtime)
        })
}

/// The handlers (`{"type": "command", …}` objects) of one matcher group.
fn handlers(group: &Node) -> impl Iterator<Item = &Node> {
    let items = match group.member("hooks").map(|m| &m.value.kind) {
        Some(Kind::Array(items)) => items.as_slice(),
        _ => &[],
    };
    items.iter()
}

fn parse_root(text: &str) -> Result<Node, SettingsError> {
    let root = jsontext::parse(text).map_err(|e| SettingsError::Malformed {
        line: e.line,
        column: e.column,
        what: e.what,
    })?;
    if !matches!(root.kind, Kind::Object(_)) {
        return Err(shape("the top level", "an object"));
    }
    Ok(root)
}

fn shape(what: &str, expected: &'static str) -> SettingsError {
    SettingsError::Shape {
        what: what.to_string(),
        expected,
    }
}

/// The next edit that removes one of `cq`'s handlers, `None` when there is none left.
fn removal(root: &Node, spec: &HookInstall) -> Result<Option<Edit>, SettingsError> {
    let Some(hooks) = root.member("hooks") else {
        return Ok(None);
    };
    let Kind::Object(events) = &hooks.value.kind else {
        return Err(shape("\"hooks\"", "an object"));
    };
    for (event_index, event) in events.iter().enumerate() {
        let Kind::Array(groups) = &event.value.kind else {
            continue;
        };
        for (group_index, group) in groups.iter().enumerate() {
            let all: Vec<&Node> = handlers(group).collect();
            let Some(handler_index) = all.iter().position(|h| is_cq(h, spec)) else {
                continue;
            };
            if !all.iter().all(|h| is_cq(h, spec)) {
                let Some(list) = group.member("hooks") else {
                    continue;
                };
                return Ok(remove_item(&list.value, handler_index));
            }
            if groups.len() > 1 {
                return Ok(remove_item(&event.value, group_index));
            }
            if events.len() > 1 {
                return Ok(remove_member(&hooks.value, event_index));
            }
            let Kind::Object(top) = &root.kind else {
                return Ok(None);
            };
            let Some(index) = top.iter().position(|m| m.key == "hooks") else {
                return Ok(None);
            };
            return Ok(remove_member(root, index));
        }
    }
    Ok(None)
}

/// Replace `start..end` with `with`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

impl Edit {
    fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + self.with.len());
        out.push_str(text.get(..self.start).unwrap_or(""));
        out.push_str(&self.with);
        out.push_str(text.get(self.end..).unwrap_or(""));
        out
    }
}

fn remove_member(object: &Node, index: usize) -> Option<Edit> {
    let Kind::Object(members) = &object.kind else {
        return None;
    };
    let spans: Vec<(usize, usize)> = members
        .iter()
        .map(|m: &Member| (m.key_start, m.value.end))
        .collect();
    remove_span(object, &spans, index)
}

fn remove_item(array: &Node, index: usize) -> Option<Edit> {
    let Kind::Array(items) = &array.kind else {
        return None;
    };
    let spans: Vec<(usize, usize)> = items.iter().map(|n| (n.start, n.end)).collect();
    remove_span(array, &spans, index)
}

/// Removes element `index` of a container whose elements span `spans`, with the separator
/// an insertion would have added: the one before a last element, the one after any other.
fn remove_span(container: &Node, spans: &[(usize, usize)], index: usize) -> Option<Edit> {
    let (start, end) = match (spans.len(), index) {
        (1, 0) => (container.start + 1, container.end - 1),
        (n, i) if i + 1 == n => (spans.get(i - 1)?.1, spans.get(i)?.1),
        (_, i) => (spans.get(i)?.0, spans.get(i + 1)?.0),
    };
    Some(Edit {
        start,
        end,
        with: String::new(),
    })
}

/// A value to write.
enum Out {
    Object(Vec<(String, Out)>),
    Array(Vec<Out>),
    String(String),
}

fn group_value(matcher: Option<&str>, command: &str) -> Out {
    let handler = Out::Object(vec![
        ("type".into(), Out::String("command".into())),
        ("command".into(), Out::String(command.into())),
    ]);
    let mut members = Vec::new();
    if let Some(matcher) = matcher {
        members.push(("matcher".into(), Out::String(matcher.into())));
    }
    members.push(("hooks".into(), Out::Array(vec![handler])));
    Out::Object(members)
}

/// How the file is written: line ending, indent unit, separators of a one-line file.
struct Style {
    newline: &'static str,
    unit: String,
    colon: &'static str,
    comma: &'static str,
}

impl Style {
    fn of(text: &str, root: &Node) -> Style {
        let unit = match &root.kind {
            Kind::Object(members) => members
                .first()
                .and_then(|m| indent_before(text, m.key_start))
                .filter(|indent| !indent.is_empty())
                .unwrap_or("  ")
                .to_string(),
            _ => "  ".to_string(),
        };
        Style {
            newline: if text.contains("\r\n") { "\r\n" } else { "\n" },
            unit,
            colon: if text.contains("\": ") || !text.contains("\":") {
                ": "
            } else {
                ":"
            },
            comma: if text.contains(", ") || !text.contains(',') {
                ", "
            } else {
                ","
            },
        }
    }

    fn pretty(&self, value: &Out, indent: &str) -> String {
        let inner = format!("{indent}{}", self.unit);
        let nl = self.newline;
        match value {
            Out::String(text) => quote(text),
            Out::Array(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|v| format!("{inner}{}", self.pretty(v, &inner)))
                    .collect();
                format!("[{nl}{}{nl}{indent}]", parts.join(&format!(",{nl}")))
            }
            Out::Object(members) => {
                let parts: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{inner}{}: {}", quote(k), self.pretty(v, &inner)))
                    .collect();
                format!("{{{nl}{}{nl}{indent}}}", parts.join(&format!(",{nl}")))
            }
        }
    }

    fn compact(&self, value: &Out) -> String {
        match value {
            Out::String(text) => quote(text),
            Out::Array(items) => {
                let parts: Vec<String> = items.iter().map(|v| self.compact(v)).collect();
                format!("[{}]", parts.join(self.comma))
            }
            Out::Object(members) => {
                let parts: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{}{}{}", quote(k), self.colon, self.compact(v)))
                    .collect();
                format!("{{{}}}", parts.join(self.comma))
            }
        }
    }
}

fn quote(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

/// The whitespace between the start of `at`'s line and `at`, if only whitespace is there.
fn indent_before(text: &str, at: usize) -> Option<&str> {
    let before = text.get(..at)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let indent = before.get(line_start..)?;
    indent
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then_some(indent)
}

/// The leading whitespace of `at`'s line.
fn line_indent(text: &str, at: usize) -> &str {
    let before = text.get(..at).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text.get(line_start..).unwrap_or("");
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    line.get(..width).unwrap_or("")
}

fn multiline(text: &str, node: &Node) -> bool {
    text.get(node.start..node.end)
        .is_some_and(|t| t.contains('\n'))
}

fn insert_member(text: &str, style: &Style, object: &Node, key: &str, value: &Out) -> Edit {
    let members = match &object.kind {
        Kind::Object(members) => members.as_slice(),
        _ => &[],
    };
    let first = members.first().map(|m| m.key_start);
    insert(
        text,
        style,
        object,
        first,
        members.last().map(|m| m.value.end),
        |indent| match indent {
            Some(indent) => format!("{}: {}", quote(key), style.pretty(value, indent)),
            None => format!("{}{}{}", quote(key), style.colon, style.compact(value)),
        },
    )
}

fn append_item(text: &str, style: &Style, array: &Node, value: &Out) -> Edit {
    let items = match &array.kind {
        Kind::Array(items) => items.as_slice(),
        _ => &[],
    };
    insert(
        text,
        style,
        array,
        items.first().map(|n| n.start),
        items.last().map(|n| n.end),
        |indent| match indent {
            Some(indent) => style.pretty(value, indent),
            None => style.compact(value),
        },
    )
}

/// Adds an element after the container's last one (or into an empty one), rendered by
/// `render` at the elements' indent (`None`: on one line).
fn insert(
    text: &str,
    style: &Style,
    container: &Node,
    first: Option<usize>,
    last_end: Option<usize>,
    render: impl Fn(Option<&str>) -> String,
) -> Edit {
    let base = line_indent(text, container.start).to_string();
    let nl = style.newline;
    match last_end {
        Some(end) if multiline(text, container) => {
            let indent = first
                .and_then(|at| indent_before(text, at))
                .map_or_else(|| format!("{base}{}", style.unit), str::to_string);
            Edit {
                start: end,
                end,
                with: format!(",{nl}{indent}{}", render(Some(&indent))),
            }
        }
        Some(end) => Edit {
            start: end,
            end,
            with: format!("{}{}", style.comma, render(None)),
        },
        None if text.contains('\n') || container.start == 0 => {
            let indent = format!("{base}{}", style.unit);
            Edit {
                start: container.start + 1,
                end: container.end - 1,
                with: format!("{nl}{indent}{}{nl}{base}", render(Some(&indent))),
            }
        }
        None => Edit {
            start: container.start + 1,
            end: container.end - 1,
            with: render(None),
        },
    }
}

/// The program as a POSIX shell word.
fn shell_quote(program: &str) -> String {
    let plain = !program.is_empty()
        && program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-+:@%,=".contains(c));
    if plain {
        program.to_string()
    } else {
        format!("'{}'", program.replace('\'', "'\\''"))
    }
}
