//! The last line of defence for what `cq` prints about a failure: an error message may quote
//! untrusted input (a field name, an id, a pattern), so before it reaches standard error every
//! span the built-in scanner matches is replaced and the whole message is sanitized.

use crate::scan::Scanner;

/// `message` with each matched secret replaced by `[REDACTED:<rule>]`, sanitized for a
/// terminal. When the scanner cannot be built the message is still sanitized.
pub fn error_message(message: &str) -> String {
    let Ok(scanner) = Scanner::builtin() else {
        return crate::sanitize::plain(message);
    };
    let findings = scanner.scan_text("error", message);
    let leaf: Vec<crate::engine::secret_scan::LeafFinding> = findings
        .into_iter()
        .map(|f| crate::engine::secret_scan::LeafFinding {
            field_path: "error".into(),
            span: f.span,
            rule_id: f.rule_id,
            category: f.category.as_str().to_owned(),
            confidence: String::new(),
        })
        .collect();
    crate::sanitize::plain(&crate::engine::redact::redact(message, &leaf, usize::MAX))
}
