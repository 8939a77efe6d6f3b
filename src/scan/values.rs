//! Judging the value next to a secret-looking name: in code (`db_password = "..."`), in
//! config, on command lines, in headers and in prose ("the token is ..."). The regex finds a
//! name and a value; these checks decide whether the value is a live secret or an identifier,
//! a reference to another value, a path, a version, a placeholder or an ordinary word.

use super::filter;
use super::net::prev_char;
use super::rule::MatchCtx;
use super::validate::Outcome;

/// Words that, as the last part of a variable name, mean the value is not itself a secret.
const NON_SECRET_SUFFIXES: &[&str] = &[
    "id",
    "ids",
    "name",
    "names",
    "url",
    "uri",
    "urls",
    "endpoint",
    "file",
    "files",
    "path",
    "dir",
    "size",
    "length",
    "len",
    "type",
    "types",
    "version",
    "format",
    "label",
    "field",
    "count",
    "index",
    "prefix",
    "suffix",
    "header",
    "event",
    "pressed",
    "mode",
    "policy",
    "store",
    "vault",
    "manager",
    "provider",
    "class",
    "style",
    "selector",
    "hash",
    "algorithm",
    "alg",
    "expiry",
    "expires",
    "timeout",
    "ttl",
    "enabled",
    "required",
    "min",
    "max",
    "limit",
    "location",
    "region",
    "arn",
    "ref",
    "reference",
    "env",
    "variable",
    "var",
    "method",
    "scheme",
    "usage",
    "frame",
    "frames",
    "code",
    "column",
    "col",
    "table",
    "keys",
    "list",
    "map",
    "set",
    "regex",
    "pattern",
    "hint",
    "help",
    "label",
    "placeholder",
    "text",
    "message",
    "msg",
    "title",
];

/// Qualifiers that make a key-like word something other than a credential.
const NON_SECRET_QUALIFIERS: &[&str] = &[
    "public",
    "foreign",
    "primary",
    "sort",
    "partition",
    "sequence",
    "schema",
    "bucket",
    "cache",
    "csrf",
    "xsrf",
    "authenticity",
    "page",
    "next",
    "continuation",
    "cancellation",
    "pagination",
    "sync",
    "issuer",
    "kms",
    "store",
    "monkey",
    "turkey",
    "donkey",
    "hockey",
    "whiskey",
    "jockey",
    "hot",
    "short",
    "shortcut",
    "keyboard",
    "keyword",
    "keyframe",
    "keystore",
    "keytab",
    "keychain",
    "keypair",
    "keyspace",
    "keypress",
    "keydown",
    "keyup",
    "keycode",
    "keyed",
    "keying",
];

pub(super) fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in key.chars() {
        if !ch.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        cur.push(ch.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// How strongly a variable name says "secret": 2 for passwords, 1 for tokens and keys,
/// 0 when it names something else (`public_key`, `token_url`, `keyboard`).
pub(super) fn key_strength(key: &str) -> u8 {
    let words = key_words(key);
    let Some(last) = words.last() else {
        return 0;
    };
    if NON_SECRET_SUFFIXES.contains(&last.as_str()) {
        return 0;
    }
    if words
        .iter()
        .any(|w| NON_SECRET_QUALIFIERS.contains(&w.as_str()))
    {
        return 0;
    }
    let joined = words.concat();
    let password_like = [
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "passwort",
        "pass",
    ];
    if last == "secret" {
        return 2;
    }
    if words.iter().any(|w| password_like.contains(&w.as_str())) || joined.contains("password") {
        return 2;
    }
    let secret_like = [
        "secret",
        "token",
        "apikey",
        "api",
        "key",
        "credential",
        "credentials",
        "auth",
        "bearer",
        "private",
        "access",
        "license",
        "licence",
        "pat",
        "session",
        "cookie",
        "salt",
        "hmac",
        "seed",
        "sid",
        "passcode",
        "pin",
    ];
    if words.iter().any(|w| secret_like.contains(&w.as_str()))
        || ["secret", "token", "apikey", "credential"]
            .iter()
            .any(|w| joined.contains(w))
    {
        return 1;
    }
    0
}

/// A value cut short for display (`ops_eyJzaWdu...`, `ops_eyJz..[Redacted]`): only a prefix
/// is shown.
fn elided(ctx: &MatchCtx<'_>) -> bool {
    ctx.secret.ends_with("..")
        || ctx.secret.ends_with('\u{2026}')
        || ctx.after.starts_with("..")
        || ctx.after.starts_with('\u{2026}')
}

/// A value assigned to a secret-looking name in code or config.
pub(super) fn generic_secret(ctx: &MatchCtx<'_>) -> Outcome {
    let strength = ctx.key.map_or(1, key_strength);
    let s = without_stray_closers(ctx.secret);
    if strength == 0 || filter::is_reference(s) || filter::is_path_or_url(s) || elided(ctx) {
        return Outcome::Reject;
    }
    // The next item after the name is another name, or a keyword argument (`timer=default`).
    let kwarg = s.split_once('=').is_some_and(|(name, rest)| {
        !rest.starts_with('=')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && is_identifier(name)
    });
    if listed_after_name(ctx.before) && (is_identifier(s) || kwarg) || type_name(s) {
        return Outcome::Reject;
    }
    if filter::is_placeholder(s) || filter::is_sequential(s) || filter::is_version_or_number(s) {
        return Outcome::Reject;
    }
    if scheme_prefixed(s) {
        return Outcome::Reject;
    }
    if ctx.key.is_some_and(|k| restates_name(k, s)) || ends_with_version(s) || constant_name(s) {
        return Outcome::Reject;
    }
    if strength == 2 {
        return password_value(s);
    }
    let c = filter::classes(s);
    let kinds = [c.lower, c.upper, c.digit, c.symbol]
        .iter()
        .filter(|&&n| n > 0)
        .count();
    let entropy = filter::shannon_entropy(s);
    let long_enough = s.len() >= 10;
    if long_enough && entropy >= 3.0 && kinds >= 2 && c.digit > 0 && !s.ends_with(['-', '_']) {
        if entropy >= 3.5 && s.len() >= 16 {
            Outcome::Neutral
        } else {
            Outcome::Weak
        }
    } else if s.len() >= 16 && entropy >= 3.5 && scrambled(s) {
        Outcome::Neutral
    } else {
        Outcome::Reject
    }
}

/// `s` without the closing brackets at its end that close nothing in it, and any `:`, `;`, `.`
/// or `,` after them: `None` from `f(pwd=None):` or from "called f(pwd=None).", `self.secret`
/// from `(name, self.secret)`.
fn without_stray_closers(s: &str) -> &str {
    let mut t = s;
    loop {
        let stripped = t.strip_suffix([':', ';', '.', ',']).unwrap_or(t);
        let stray = [('(', ')'), ('[', ']'), ('{', '}')]
            .into_iter()
            .find(|&(open, close)| {
                stripped.ends_with(close)
                    && stripped.matches(open).count() < stripped.matches(close).count()
            });
        match stray {
            Some(_) => t = &stripped[..stripped.len() - 1],
            None => return t,
        }
    }
}

/// A type in a declaration (`pub const IFLA_INET6_TOKEN: _bindgen_ty_7`, `log_passwd: __u32`,
/// `api_key: String`): a primitive type's name, or an identifier behind a leading `_`.
fn type_name(s: &str) -> bool {
    const PRIMITIVES: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "char", "str", "String",
    ];
    let bare = s.trim_start_matches('_');
    PRIMITIVES.contains(&bare) || (bare.len() < s.len() && is_identifier(bare))
}

/// Whether the value is the next item after its name in a list or a call (`"name", "value"`),
/// where a plain word is another name (`'PKPaymentPass', 'PKPaymentRequest'`), not a secret.
fn listed_after_name(before: &str) -> bool {
    before
        .trim_end_matches(['"', '\'', '`', '@'])
        .trim_end()
        .ends_with(',')
}

/// An identifier or keyword: words joined by `_`, `-`, `.` or `:`, each with at most a short
/// number after it and cased like a name (all lower, all upper, capitals for at most a third
/// of it, or short), or a short number after the first part: `NO_FINDING`, `PKPaymentRequest`,
/// `PKTool`, `gss_krb5_rfc1964_keydata`, `bindgen_ty_3`,
/// and a keyword argument's name (`setup=`); not `test_e085ad2bb259…` or `AbCdEfGhIjKlMnOp`.
fn is_identifier(s: &str) -> bool {
    let s = s.strip_suffix('=').unwrap_or(s);
    let joiner = |c: char| matches!(c, '_' | '-' | '.' | ':');
    !s.is_empty()
        && s.split(joiner).enumerate().all(|(i, part)| {
            let word = part.trim_end_matches(|c: char| c.is_ascii_digit());
            let upper = word.bytes().filter(u8::is_ascii_uppercase).count();
            let number = part.len() - word.len();
            // A short number may stand as a part of its own after the first (`_bindgen_ty_3`).
            (word.is_empty() && i > 0 && (1..=4).contains(&number))
                || !word.is_empty()
                    && number <= 4
                    && word.bytes().all(|b| b.is_ascii_alphabetic())
                    && (upper == word.len() || upper * 3 <= word.len() || word.len() <= 12)
        })
}

/// A value without digits that still cannot be a name, code or a pattern: letters mixed with
/// at least three different symbols and brackets that do not nest (`{{h}o)p${e]nob(ody[…`).
/// Code, templates and regular expressions keep their brackets nested.
fn scrambled(s: &str) -> bool {
    let mut symbols: Vec<char> = s
        .chars()
        .filter(|c| c.is_ascii_punctuation() && !matches!(c, '-' | '_' | '.' | '/'))
        .collect();
    symbols.sort_unstable();
    symbols.dedup();
    symbols.len() >= 3 && !s.contains('\\') && filter::brackets_tangled(s)
}

/// A value assigned to a password-like name: anything that is not a word, reference or
/// placeholder.
pub(super) fn password(ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    if filter::is_reference(s) || filter::is_placeholder(s) || filter::is_path_or_url(s) {
        return Outcome::Reject;
    }
    password_value(s)
}

/// Words that are never a password in prose ("the password is required"); in code `secret`
/// is a (weak) hard-coded password and is still reported.
const COMMON_PASSWORD_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "token",
    "test",
    "changeit",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "required",
    "optional",
    "string",
    "undefined",
    "hidden",
    "empty",
    "invalid",
    "missing",
    "incorrect",
    "wrong",
    "correct",
    "expired",
    "masked",
    "unset",
    "set",
    "changed",
    "stored",
    "needed",
    "provided",
    "configured",
    "valid",
    "ignored",
    "username",
    "user",
    "secure",
    "encrypted",
    "generated",
    "rotated",
    "revoked",
    "sensitive",
    "blank",
];

/// A value that restates its own name (`KeyMeshing = "id-Gost-KeyMeshing"`).
fn restates_name(key: &str, value: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let (k, v) = (norm(key), norm(value));
    v.len() >= 6 && k.contains(&v)
}

/// A value that is an identifier with a scheme (`arn:aws:...`, `jdbc:mysql:...`), not a secret.
fn scheme_prefixed(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    !scheme.is_empty()
        && scheme.len() <= 12
        && scheme.chars().all(|c| c.is_ascii_lowercase())
        && (rest.contains(':') || rest.contains('/'))
        && !s.contains('@')
}

/// A CONSTANT_CASE name made of secret words (`ACCESS_TOKEN`, `API_KEY`).
fn constant_name(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    s.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        && ["token", "key", "secret", "password", "pass", "credential"]
            .iter()
            .any(|w| lower.contains(w))
}

/// A value ending in a version number (`jjwt-jackson-0.11.2`).
fn ends_with_version(s: &str) -> bool {
    let tail = s.rsplit(['-', '_', ':', '@']).next().unwrap_or("");
    let t = tail.trim_start_matches(['v', 'V']);
    tail.len() < s.len()
        && t.contains('.')
        && t.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Whether one of `vendors` starts a word of `key` (or a run of whole words), so `sumObj` and
/// `rookTable` do not count as `sumo` and `okta`.
fn vendor_aligned(key: &str, vendors: &[String]) -> bool {
    let words = key_words(key);
    (0..words.len()).any(|i| {
        let mut joined = String::new();
        let mut bounds = Vec::new();
        for w in &words[i..] {
            joined.push_str(w);
            bounds.push(joined.len());
        }
        vendors.iter().any(|v| {
            let v: String = v
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect();
            joined.starts_with(&v) && (v.len() <= words[i].len() || bounds.contains(&v.len()))
        })
    })
}

/// A value next to a vendor's name (`cloudflare: "..."`): must look generated.
pub(super) fn vendor_secret(ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    if let Some(key) = ctx.key {
        if !vendor_aligned(key, ctx.keywords) {
            return Outcome::Reject;
        }
        let words = key_words(key);
        let non_secret = [
            "url", "uri", "path", "file", "dir", "name", "version", "region", "endpoint", "host",
            "domain", "email", "user", "username", "org", "project",
        ];
        if words
            .last()
            .is_some_and(|w| non_secret.contains(&w.as_str()))
        {
            return Outcome::Reject;
        }
    }
    if filter::is_reference(s) || filter::is_path_or_url(s) || filter::is_placeholder(s) {
        return Outcome::Reject;
    }
    let c = filter::classes(s);
    let entropy = filter::shannon_entropy(s);
    if s.len() >= 10 && entropy >= 3.0 && c.digit > 0 && c.lower + c.upper > 0 {
        Outcome::Neutral
    } else {
        Outcome::Reject
    }
}

/// The password part of a URL's user-info.
pub(super) fn url_password(s: &str) -> Outcome {
    let lower = s.to_ascii_lowercase();
    if filter::is_reference(s)
        || filter::is_placeholder(s)
        || s.starts_with('<')
        || s.starts_with('{')
    {
        return Outcome::Reject;
    }
    if ["password", "pass", "passwd", "pwd", "pw", "xxx"].contains(&lower.as_str()) {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

/// `user:password` on a command line; an empty password means the user part is the token.
pub(super) fn user_pass(s: &str) -> Outcome {
    let (user, pass) = s.split_once(':').unwrap_or((s, ""));
    let value = if pass.is_empty() { user } else { pass };
    // A usage line's `<NAME>` (`-p <PASSWORD>).value_parser(…)`) names the value, it is none.
    let named = value
        .strip_prefix('<')
        .and_then(|r| r.split_once('>'))
        .is_some_and(|(n, _)| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b' '))
        });
    if value.is_empty()
        || named
        || filter::is_reference(value)
        || filter::is_placeholder(value)
        || user.starts_with('$')
        || user.contains("${")
        || user.contains("$(")
        || filter::is_path_or_url(value)
    {
        return Outcome::Reject;
    }
    match password_value(value) {
        Outcome::Weak if !s.contains(':') => Outcome::Reject,
        other => other,
    }
}

/// A Slack token: its last dash-separated part is a real value, not a placeholder or nothing.
pub(super) fn slack(s: &str) -> Outcome {
    let last = s.rsplit('-').next().unwrap_or("");
    if filter::is_placeholder(s)
        || last.len() < 8
        || !last.bytes().any(|b| b.is_ascii_alphabetic()) && s.split('-').count() < 4
    {
        Outcome::Reject
    } else {
        Outcome::Neutral
    }
}

/// The credential part of an Authorization header.
pub(super) fn auth_header(s: &str) -> Outcome {
    let lower = s.to_ascii_lowercase();
    let schemes = [
        "bearer",
        "basic",
        "token",
        "digest",
        "negotiate",
        "apikey",
        "api-token",
        "ssws",
    ];
    if s.len() < 8
        || schemes.contains(&lower.as_str())
        || filter::is_reference(s)
        || filter::is_placeholder(s)
    {
        return Outcome::Reject;
    }
    let c = filter::classes(s);
    if c.digit + c.upper == 0 && c.symbol == 0 {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

fn password_value(s: &str) -> Outcome {
    let c = filter::classes(s);
    let lower = s.to_ascii_lowercase();
    if s.len() < 4 || COMMON_PASSWORD_WORDS.contains(&lower.as_str()) || filter::is_sequential(s) {
        return Outcome::Reject;
    }
    let letters = c.lower + c.upper;
    let mixed_case = c.lower > 0
        && c.upper > 0
        && !(c.upper == 1 && s.chars().next().is_some_and(|ch| ch.is_ascii_uppercase()));
    let symbolic = s
        .chars()
        .any(|ch| !ch.is_ascii_alphanumeric() && ch != '_' && ch != '-' && ch != '.');
    if letters > 0 && (c.digit > 0 || symbolic) || mixed_case {
        if s.len() >= 6 {
            Outcome::Neutral
        } else if s.len() >= 5 {
            Outcome::Weak
        } else {
            Outcome::Reject
        }
    } else if letters > 0 && s.len() >= 5 {
        Outcome::Weak
    } else {
        Outcome::Reject
    }
}

/// A value stated in prose ("the db password is hunter2-Prod!"): it must look like a secret,
/// not an English word, a path, a URL without credentials or a version.
pub(super) fn prose_secret(ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    if filter::is_reference(s)
        || filter::is_path_or_url(s)
        || filter::is_placeholder(s)
        || elided(ctx)
    {
        return Outcome::Reject;
    }
    let lower = s.to_ascii_lowercase();
    if COMMON_PASSWORD_WORDS.contains(&lower.as_str()) || lower == "secret" {
        return Outcome::Reject;
    }
    let quoted = prev_char(ctx).is_some_and(|c| "\"'`“‘".contains(c));
    if quoted && s.len() >= 4 && s.chars().any(|c| c.is_alphanumeric()) {
        return Outcome::Neutral;
    }
    if filter::is_version_or_number(s) && s.len() < 6 {
        return Outcome::Reject;
    }
    if s.contains("::") || s.starts_with(['&', '*', ':']) {
        return Outcome::Reject;
    }
    let c = filter::classes(s);
    let letters = c.lower + c.upper;
    let strong_symbol = s
        .chars()
        .any(|ch| !ch.is_ascii_alphanumeric() && !"-_.'".contains(ch));
    let long_number = c.digit >= 6 && c.digit == s.len();
    if (letters > 0 && (c.digit > 0 || strong_symbol)) || long_number {
        Outcome::Neutral
    } else {
        Outcome::Reject
    }
}

/// A value written straight after a secret's name in prose, with no "is" or ":" to say it is
/// the value ("use password Xk9#mP2q"): it must mix at least three kinds of character (lower,
/// upper, digits, symbols other than `-_.`), so words, versions and hyphenated terms are left.
pub(super) fn prose_direct(ctx: &MatchCtx<'_>) -> Outcome {
    if prose_secret(ctx) == Outcome::Reject || filter::is_sequential(ctx.secret) {
        return Outcome::Reject;
    }
    let s = ctx.secret;
    let c = filter::classes(s);
    let strong_symbol = s
        .chars()
        .any(|ch| !ch.is_ascii_alphanumeric() && !"-_./".contains(ch));
    let kinds = [c.lower > 0, c.upper > 0, c.digit > 0, strong_symbol]
        .iter()
        .filter(|&&k| k)
        .count();
    if s.len() >= 8 && kinds >= 3 {
        Outcome::Neutral
    } else {
        Outcome::Reject
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names() {
        assert_eq!(key_strength("db_password"), 2);
        assert_eq!(key_strength("genericToken"), 1);
        assert_eq!(key_strength("kms_key_id"), 0);
        assert_eq!(key_strength("public_key"), 0);
        assert_eq!(key_strength("access_token_url"), 0);
    }
}
