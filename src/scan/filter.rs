//! Value filters shared by all rules: Shannon entropy, placeholder detection, and the shape
//! checks that keep generic rules off identifiers, references, paths and plain words.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

/// Shannon entropy of `s` in bits per byte.
pub(super) fn shannon_entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s.as_bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    if n == 0.0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Substrings (lower case) that mark a documentation placeholder rather than a live value.
const PLACEHOLDER_WORDS: &[&str] = &[
    "example",
    "xxxx",
    "your_",
    "your-",
    "yourkey",
    "yourtoken",
    "yourpass",
    "yoursecret",
    "youraccount",
    "<your",
    "changeme",
    "change_me",
    "placeholder",
    "redacted",
    "dummy",
    "sample",
    "insert_",
    "insert-",
    "replace_me",
    "replaceme",
    "******",
    "......",
    "<%",
    "abcdefg",
    "0123456789",
    "a1b2c3d4",
    "d4c3b2a1",
    "put_your",
    "_here",
    "-here",
    "notreal",
    "not_real",
    "not-a-real",
    "somevalue",
    "othervalue",
    "anothervalue",
    "somesecret",
    "somepassword",
    "sometoken",
];

/// Whether `s` looks like a placeholder: a known word, a template reference, or one character
/// repeated for most of its length.
pub(super) fn is_placeholder(s: &str) -> bool {
    if has_placeholder_word(s) || has_expansion(s) || says_fake(s) || repeats_a_unit(s) {
        return true;
    }
    let ends_here = s.len() >= 4 && s.as_bytes()[s.len() - 4..].eq_ignore_ascii_case(b"here");
    if (s.contains("%(") && (s.contains(")s") || s.contains(")S"))) || ends_here {
        return true;
    }
    let b = s.as_bytes();
    let enclosed = |open: u8, close: u8| b.len() >= 2 && b[0] == open && b[b.len() - 1] == close;
    let braced = enclosed(b'{', b'}') && nests_from(s);
    if enclosed(b'<', b'>') || braced || enclosed(b'[', b']') || enclosed(b'%', b'%') {
        return true;
    }
    let env_var = b.len() > 1
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if b.first() == Some(&b'$') && (env_var || b.get(1).is_some_and(|c| *c == b'{' || *c == b'(')) {
        return true;
    }
    dominant_fraction(s.as_bytes()) >= 0.8 && s.len() >= 6
}

/// A unit of 2 to 8 characters repeated from the start over at least three quarters of `s`
/// (`abcd1234abcd1234ABCD1234…`, ASCII case ignored): typed by hand, not generated.
fn repeats_a_unit(s: &str) -> bool {
    let b = s.as_bytes();
    (2..=8).any(|unit| {
        let mut run = unit;
        while run < b.len() && b[run].eq_ignore_ascii_case(&b[run - unit]) {
            run += 1;
        }
        run >= unit * 3 && run * 4 >= b.len() * 3
    })
}

/// Lower-case words that call themselves fake (`fakesecret`, `fake-token`). Test fixtures also
/// write `FakeValues99…` or `12fakehijk…` into real-looking keys, so those are still reported.
fn says_fake(s: &str) -> bool {
    s.contains("fake")
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
}

/// [`PLACEHOLDER_WORDS`] as one automaton (ASCII case-insensitive, like comparing lower case).
static PLACEHOLDER_SEARCH: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(PLACEHOLDER_WORDS)
        .ok()
});

/// Whether `s`, in ASCII lower case, contains one of [`PLACEHOLDER_WORDS`]; one pass over `s`.
fn has_placeholder_word(s: &str) -> bool {
    match &*PLACEHOLDER_SEARCH {
        Some(ac) => ac.is_match(s),
        None => {
            let lower = s.to_ascii_lowercase();
            PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w))
        }
    }
}

/// Fraction of `s` taken by its most common byte.
pub(super) fn dominant_fraction(s: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s {
        counts[usize::from(b)] += 1;
    }
    let max = counts.iter().copied().max().unwrap_or(0);
    if s.is_empty() {
        0.0
    } else {
        f64::from(max) / s.len() as f64
    }
}

/// Whether `s` is a run of consecutive characters such as `abcdefgh` or `12345678`.
pub(super) fn is_sequential(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 6 && b.windows(2).all(|w| w[1] == w[0].wrapping_add(1))
}

#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Classes {
    pub lower: usize,
    pub upper: usize,
    pub digit: usize,
    pub symbol: usize,
}

pub(super) fn classes(s: &str) -> Classes {
    let mut c = Classes::default();
    for ch in s.chars() {
        if ch.is_ascii_lowercase() {
            c.lower += 1;
        } else if ch.is_ascii_uppercase() {
            c.upper += 1;
        } else if ch.is_ascii_digit() {
            c.digit += 1;
        } else {
            c.symbol += 1;
        }
    }
    c
}

/// Whether `s` holds a template or variable expansion (`${NAME}`, `{{ .Values.key }}`,
/// `#{datastore['PASS']}`, `$(cat key)`): from the opener on, brackets nest properly until it
/// closes, or until `s` ends (a value cut short). A generated secret may contain `${` or `{{`
/// too, but then its brackets do not nest (`{{h}o)p${e]nob(...`), and it is not an expansion.
pub(super) fn has_expansion(s: &str) -> bool {
    // Every opener holds a `$` or a `{`; most values hold neither.
    if memchr::memchr2(b'$', b'{', s.as_bytes()).is_none() {
        return false;
    }
    ["${", "{{", "#{", "$("].iter().any(|open| {
        s.match_indices(open).any(|(at, _)| {
            let first = if open.starts_with('{') { at } else { at + 1 };
            nests_from(&s[first..])
        })
    })
}

/// Whether the brackets in `s` fail to nest: a closer without its opener, or openers left open.
pub(super) fn brackets_tangled(s: &str) -> bool {
    walk_brackets(s, false) != Nesting::Balanced
}

/// `t` starts with an opening bracket: whether brackets nest properly until that bracket
/// closes, or until `t` ends.
fn nests_from(t: &str) -> bool {
    walk_brackets(t, true) != Nesting::Tangled
}

#[derive(PartialEq, Eq)]
enum Nesting {
    Balanced,
    LeftOpen,
    Tangled,
}

/// Follows `()`, `[]` and `{}` through `t`; with `first_only`, stops when the first bracket
/// group closes.
fn walk_brackets(t: &str, first_only: bool) -> Nesting {
    let mut open = Vec::new();
    for c in t.chars() {
        let want = match c {
            '(' | '[' | '{' => {
                open.push(c);
                continue;
            }
            ')' => '(',
            ']' => '[',
            '}' => '{',
            _ => continue,
        };
        if open.pop() != Some(want) {
            return Nesting::Tangled;
        }
        if first_only && open.is_empty() {
            return Nesting::Balanced;
        }
    }
    if open.is_empty() {
        Nesting::Balanced
    } else {
        Nesting::LeftOpen
    }
}

/// A dotted or path-like reference to another value: `var.db_password`, `process.env.X`,
/// `self.token`, `config["key"]`, `getPassword()`.
pub(super) fn is_reference(s: &str) -> bool {
    if s.starts_with(['$', '%', '#', '@', '(', ':', '&', '*'])
        || s.contains(".$")
        || s.contains("::")
    {
        return true;
    }
    if has_expansion(s) {
        return true;
    }
    if let Some(open) = s.find(['(', '[']) {
        let head = &s[..open];
        if !head.is_empty()
            && head
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == ' ')
        {
            return true;
        }
    }
    s.contains('.')
        && s.split('.').all(|p| {
            !p.is_empty()
                && p.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !looks_random(p)
        })
}

/// A part long and mixed enough to be a generated value rather than a name.
fn looks_random(p: &str) -> bool {
    let c = classes(p);
    p.len() >= 12 && c.digit > 0 && c.lower > 0 && c.upper > 0
}

/// A file-system path or plain URL (without credentials).
pub(super) fn is_path_or_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    if lower.contains("://") {
        return !lower.contains('@');
    }
    let word_segments = s
        .split(['/', '#', '?'])
        .filter(|p| p.len() >= 3 && p.chars().all(|c| c.is_ascii_lowercase()))
        .count();
    if s.contains('/') && word_segments >= 2 {
        return true;
    }
    s.starts_with('/')
        || s.starts_with("./")
        || s.starts_with("../")
        || s.starts_with("~/")
        || s.starts_with('\\')
        || (s.len() > 2 && s.as_bytes()[1] == b':' && s.as_bytes()[2] == b'\\')
        || (s.contains('/')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
            && !s.contains("//"))
}

/// Whether a match continues a longer run of groups: digits joined to it by a single space,
/// dash, dot, colon or slash before it, or an IBAN-style four-character group before it.
pub(super) fn embedded_in_digit_run(before: &str) -> bool {
    let b = before.as_bytes();
    let joiner = |c: u8| matches!(c, b' ' | b'-' | b'.' | b':' | b'/');
    if b.len() >= 2 && joiner(b[b.len() - 1]) && b[b.len() - 2].is_ascii_digit() {
        return true;
    }
    // An IBAN-style group before it: `AL47 212A ` + the digits.
    let prev_token = before
        .trim_end_matches(' ')
        .rsplit(' ')
        .next()
        .unwrap_or("");
    before.ends_with(' ')
        && prev_token.len() == 4
        && prev_token
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && prev_token.bytes().any(|c| c.is_ascii_digit())
}

/// Whether a value sits inside a long random-looking base64 run (`…Qz+L01X00T44/kX…`): such a
/// run is encoded data, and a PII shape in it is chance (a check digit passes one time in ten).
/// The run is measured over the value and the context around it, across line breaks (MIME and
/// PEM wrap base64 at 64 or 76 characters); prose, paths and identifiers have far less entropy
/// than the 4.8 bits per character this asks for.
pub(super) fn inside_base64_blob(before: &str, value: &str, after: &str) -> bool {
    let b64 = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    let in_run = |c: u8| b64(c) || c == b'\n' || c == b'\r';
    let left = before.bytes().rev().take_while(|&c| in_run(c)).count();
    let right = after.bytes().take_while(|&c| in_run(c)).count();
    if left < 8 || right < 8 || !value.bytes().all(b64) {
        return false;
    }
    let run: String = [&before[before.len() - left..], value, &after[..right]]
        .concat()
        .replace(['\n', '\r'], "");
    let c = classes(&run);
    run.len() >= 64 && c.upper > 0 && c.lower > 0 && c.digit > 0 && shannon_entropy(&run) >= 4.8
}

/// A version string or number: `1.2.3`, `v2.0.0-rc1`, `2021`.
pub(super) fn is_version_or_number(s: &str) -> bool {
    let t = s.trim_start_matches(['v', 'V']);
    !t.is_empty()
        && t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert!(is_placeholder("AKIAXXXXXXXXXXXXXXXX"));
        assert!(is_placeholder("<your-key>"));
        assert!(is_placeholder("${API_KEY}"));
        assert!(is_placeholder("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaend"));
        assert!(!is_placeholder("hunter2-Prod!"));
        assert!(!is_placeholder("Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB"));
    }

    #[test]
    fn expansions_nest_and_generated_values_do_not() {
        for s in [
            "${DB_PASSWORD}",
            "${DB_PASSWORD:-x}",
            "{{ .Values.db.password }}",
            "#{datastore['PASS']}",
            "$(cat /run/secrets/key)",
            "pre-${VAR",
        ] {
            assert!(has_expansion(s), "{s}");
            assert!(is_placeholder(s), "{s}");
        }
        for s in [
            "{{h}o)p${e]nob(ody[finds>-_$#thisone}}",
            "Zf3${D0]LXC",
            "a{{b)c",
        ] {
            assert!(!has_expansion(s), "{s}");
            assert!(!is_placeholder(s), "{s}");
        }
        assert!(brackets_tangled("{{h}o)p${e]nob(ody"));
        assert!(!brackets_tangled("[A-Za-z0-9_]{20,}(?:[.-][A-Za-z0-9]+)*"));
        assert!(says_fake("fakesecret") && says_fake("fake-token"));
        assert!(repeats_a_unit(
            "abcd1234abcd1234abcd1234ABCD1234ABCD1234--__"
        ));
        assert!(repeats_a_unit("xyzXYZxyz"));
        assert!(!repeats_a_unit(
            "ukYEEX38RiGgq1BPf2m-nIeTM_lEGizKKn49RRoC_6fn"
        ));
        assert!(!says_fake("FakeValues99ESPW3ALMEZ6U"));
    }

    #[test]
    fn placeholder_words_ignore_ascii_case() {
        assert!(has_placeholder_word("my-EXAMPLE-key"));
        assert!(has_placeholder_word("Put_Your_Token"));
        assert!(!has_placeholder_word("Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB"));
        assert!(is_placeholder("%(password)S"));
        assert!(is_placeholder("token_goes_HERE"));
        for w in PLACEHOLDER_WORDS {
            assert!(has_placeholder_word(&format!(
                "a{}b",
                w.to_ascii_uppercase()
            )));
        }
    }

    #[test]
    fn references_and_paths() {
        assert!(is_reference("var.db_password"));
        assert!(is_reference("getMasterUserPassword()"));
        assert!(!is_reference("hunter2-Prod!"));
        assert!(is_path_or_url("/etc/ssl/private"));
        assert!(is_path_or_url("https://example.org/a"));
        assert!(!is_path_or_url("postgres://u:p@h/db"));
        assert!(is_version_or_number("1.2.3"));
    }

    #[test]
    fn base64_runs_around_a_value() {
        // A German ID card number's shape inside random base64, on one line and wrapped.
        let before = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj/";
        let after = "/Mz8fR2wXq7Hn4Ue9sLkPdA1bGyTcV3jN6oZi5EhW0rYx";
        assert!(inside_base64_blob(before, "L01X00T44", after));
        let wrapped = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj/";
        assert!(inside_base64_blob(wrapped, "L01X00T44", after));
        // Prose, a URL path and a value at a run's edge are not inside a blob.
        assert!(!inside_base64_blob(
            "Personalausweis: ",
            "L01X00T44",
            ". Danke"
        ));
        let path = "https://shop.example.com/customers/Berlin/accounts/";
        assert!(!inside_base64_blob(
            path,
            "L01X00T44",
            "/orders/Summary2024/"
        ));
        assert!(!inside_base64_blob(before, "L01X00T44", ""));
    }

    #[test]
    fn entropy_orders_values() {
        assert!(shannon_entropy("aaaaaaaa") < 0.1);
        assert!(shannon_entropy("Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB") > 4.0);
    }
}
