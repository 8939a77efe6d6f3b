//! Values inside names and paths. A controlled language puts a value in an identifier or path
//! slot, where a secret-named part is the value's key name just as `=` would make it in code:
//! `aws/secret_access_key/<key>`, `password_<pw>`, `db.password.<pw>`. Names like that are
//! common in code too (`password_reset_handler`, `src/auth/token.rs`), so the part after the
//! name counts only when it does not read as more name: a password-named part needs a value
//! shaped like a password (a capital or a symbol with a digit, or digits inside letters), any
//! other secret name a generated-looking value. Keys in bare hex or UUID form next to a
//! vendor's name are judged here too.

use super::filter;
use super::rule::MatchCtx;
use super::validate::Outcome;
use super::values;

/// The last words of a name that say its value is a secret.
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
    "secret",
    "secrets",
    "token",
    "key",
    "apikey",
    "credential",
    "credentials",
    "creds",
    "auth",
    "pat",
];

/// The value after a secret-named part of a path or identifier (`key` is that name).
pub(super) fn named_value(ctx: &MatchCtx<'_>) -> Outcome {
    let key = ctx.key.unwrap_or("");
    let strength = values::key_strength(key);
    let s = ctx.secret;
    // The name must read as one (`secret_access_key`, `db.password`), not as random text
    // that happens to hold `key` (`…Xk9keY/…` inside base64), and end in what it names
    // (`api_key`, not `key-values` or `TokenStream`).
    let named = key_name_like(key)
        && values::key_words(key)
            .last()
            .is_some_and(|w| SECRET_NAMES.contains(&w.as_str()));
    if strength == 0
        || !named
        || filter::is_placeholder(s)
        || filter::is_reference(s)
        || filter::is_sequential(s)
        || filter::is_version_or_number(s)
        || filter::inside_base64_blob(ctx.before, s, ctx.after)
    {
        return Outcome::Reject;
    }
    // Inside a URL the parts are its path, not a name and its value.
    let token_start = ctx.before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    if ctx.before[token_start..].contains("://") {
        return Outcome::Reject;
    }
    // A key or token is random bytes; base64 that decodes to text names something.
    if strength < 2 && super::decode::decodes_to_text(s) {
        return Outcome::Reject;
    }
    let parts = s.split(['/', '_', '.', '-', ':']).filter(|p| !p.is_empty());
    let shaped = |p: &str| generated(p) || strength == 2 && password_shaped(p);
    if parts.into_iter().any(shaped) || base64_key(s) {
        Outcome::Neutral
    } else {
        Outcome::Reject
    }
}

/// A whole base64 value (`wJalrXUtnFEMI/K7MDENG/bPxRfiCY…`): long, both cases, digits, dense.
fn base64_key(s: &str) -> bool {
    let c = filter::classes(s);
    s.len() >= 20
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        && c.digit > 0
        && c.upper > 0
        && c.lower > 0
        && filter::shannon_entropy(s) >= 4.0
}

/// A key in bare hex or UUID form next to a vendor's name (`key` is the name with the words
/// after it). Vendors number dashboards and projects with UUIDs too, so a UUID counts only
/// under a name that says key, token, secret or password; hex of 32 digits or more needs none.
pub(super) fn vendor_value(ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    let named = ctx.key.is_some_and(|k| {
        let k = k.to_ascii_lowercase();
        ["key", "token", "secret", "pat", "password"]
            .iter()
            .any(|w| k.contains(w))
    });
    let uuid = s.len() == 36 && s.bytes().filter(|&b| b == b'-').count() == 4;
    let c = filter::classes(s);
    if uuid && !named
        || filter::is_placeholder(s)
        || filter::is_sequential(s)
        || c.digit == 0
        || c.lower + c.upper == 0
        || filter::shannon_entropy(s) < 3.0
    {
        Outcome::Reject
    } else {
        Outcome::Neutral
    }
}

/// A key of 64 random bytes in base64 (an Azure storage key) on its own or as the last part of
/// a path of names (`backup/<key>`), not the tail of a longer base64 run that happens to end
/// 88 characters after a `/`, nor a wrapped blob's next line, nor encoded text.
pub(super) fn bare_base64_key(ctx: &MatchCtx<'_>) -> Outcome {
    let b64 = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    let run = ctx.before.bytes().rev().take_while(|&c| b64(c)).count();
    let prefix = ctx.before.get(ctx.before.len() - run..).unwrap_or("");
    let path = prefix.ends_with('/') && prefix.split('/').all(|p| p.is_empty() || name_like(p));
    // A blob wrapped over lines or split into concatenated strings goes on before the break.
    let wrapped = ctx
        .before
        .get(..ctx.before.len() - run)
        .unwrap_or("")
        .trim_end_matches([' ', '\t', '\n', '\r', '\\', '"', '\'', '+'])
        .bytes()
        .rev()
        .take_while(|&c| b64(c))
        .count()
        >= 16;
    let text = super::decode::decodes_to_text(ctx.secret);
    if (prefix.is_empty() || path) && !wrapped && !text {
        Outcome::Neutral
    } else {
        Outcome::Reject
    }
}

/// Long, varied and mixed: a key or token rather than a name. Hex has 16 symbols, so its
/// random strings measure less (32 random hex digits range down to about 3.3 bits).
fn generated(s: &str) -> bool {
    let c = filter::classes(s);
    let floor = if s.bytes().all(|b| b.is_ascii_hexdigit()) {
        3.0
    } else {
        3.5
    };
    s.len() >= 16
        && c.digit > 0
        && c.lower + c.upper > 0
        && filter::shannon_entropy(s) >= floor
        && !wordish(s.as_bytes())
}

/// Three kinds of character of lower case, capitals, digits and symbols (`Summer2024`,
/// `Tr0ub4dor&3`, `Tr0AbcDefx9`), or digits in two places inside letters (`p4ssw0rd`); not a
/// lower-case word with a number (`hunter2`, `sha256sum`), a word with a symbol
/// (`super$ecret`) nor CamelCase words around a number (`Base64Encoded`).
fn password_shaped(s: &str) -> bool {
    let c = filter::classes(s);
    if s.len() < 6 || c.lower + c.upper == 0 {
        return false;
    }
    let b = s.as_bytes();
    let inner_digit_groups = (1..b.len().saturating_sub(1))
        .filter(|&i| {
            b[i].is_ascii_digit()
                && !b[i - 1].is_ascii_digit()
                && b[..i].iter().any(u8::is_ascii_alphabetic)
                && b[i..]
                    .iter()
                    .skip_while(|x| x.is_ascii_digit())
                    .any(u8::is_ascii_alphabetic)
        })
        .count();
    let symbol = b
        .iter()
        .any(|x| !x.is_ascii_alphanumeric() && !b"_-./:".contains(x));
    let kinds = [c.lower > 0, c.upper > 0, c.digit > 0, symbol]
        .iter()
        .filter(|&&k| k)
        .count();
    // Words of a name on both sides of one number (`Base64Encoded`), with no short word
    // among them as a generated value has (`Tr0AbcDefx9`); a second number makes it a
    // password again (`Hunter2Prod99`).
    let digit_groups = (0..b.len())
        .filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()))
        .count();
    let name_words =
        digit_groups <= 1 && word_counts(b).is_some_and(|(short, long)| short == 0 && long >= 2);
    (kinds >= 3 || inner_digit_groups >= 2) && !name_words
}

/// A key name: words as in [`name_like`], or abbreviations in one case (`smtp_password`).
fn key_name_like(key: &str) -> bool {
    key.split(['/', '_', '.', '-', ':']).all(|p| {
        let b = p.as_bytes();
        wordish(b)
            || b.len() <= 12
                && (b.iter().all(u8::is_ascii_lowercase) || b.iter().all(u8::is_ascii_uppercase))
    })
}

/// A name made of words (`ExternalSecret`, `my-namespace`, `src/auth/token.rs`, `db.password`):
/// every part reads as words, or is a word of up to three letters.
pub(super) fn name_like(s: &str) -> bool {
    s.as_bytes()
        .split(|b| matches!(b, b'/' | b'_' | b'.' | b'-' | b':'))
        .all(|p| wordish(p) || p.len() <= 3 && p.iter().all(u8::is_ascii_alphabetic))
}

/// A part that reads as words of a name: camel-case words in lower case, capitalised or as
/// an acronym, with numbers of up to five digits between them (`Terminal256Formatter`,
/// `Ed25519PrivateKey`, `OAuth2Error`, `v1beta1`), at least one word of three letters or more
/// and at most one shorter (which alone may be one letter, at the start), every longer word
/// but an acronym with a vowel; or a number of up to five digits. Generated text alternates
/// case and digits too often for that (`wJalrXUtnFEMI`, `Vb9Tq3Wn`, `9f86d081…`).
fn wordish(part: &[u8]) -> bool {
    part.is_empty()
        || word_counts(part)
            .is_some_and(|(short, long)| short + long == 0 || short <= 1 && long >= 1)
}

/// The short (one or two letters) and long words of `part` read as camel-case words and
/// numbers, or `None` when it cannot be read so (a number over five digits, a one-letter word
/// after the first, a longer word that is neither an acronym nor has a vowel).
fn word_counts(b: &[u8]) -> Option<(usize, usize)> {
    if !b.iter().all(u8::is_ascii_alphanumeric) {
        return None;
    }
    let (mut words, mut short, mut long) = (0, 0, 0);
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i - start > 5 {
                return None;
            }
            continue;
        }
        // One word: an acronym (a run of capitals that a capitalised word may follow), or a
        // capital or lower-case letter and the lower-case letters after it.
        if b[i].is_ascii_uppercase() {
            while i < b.len() && b[i].is_ascii_uppercase() {
                i += 1;
            }
            let caps = i - start;
            if caps > 1 && b.get(i).is_some_and(u8::is_ascii_lowercase) {
                i -= 1;
            }
        }
        if i == start || b[i - 1].is_ascii_uppercase() && i - start == 1 {
            i = start + 1;
        }
        while i < b.len() && b[i].is_ascii_lowercase() {
            i += 1;
        }
        let word = &b[start..i];
        if word.len() < 2 && words > 0 {
            return None;
        }
        // A word of three letters or more that is not an acronym has a vowel.
        let acronym = word.iter().all(u8::is_ascii_uppercase);
        let vowel = word.iter().any(|c| {
            matches!(
                c.to_ascii_lowercase(),
                b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
            )
        });
        if word.len() >= 3 && !acronym && !vowel {
            return None;
        }
        words += 1;
        if word.len() < 3 {
            short += 1;
        } else {
            long += 1;
        }
    }
    Some((short, long))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(key: &str, value: &str) -> Outcome {
        named_value(&MatchCtx {
            secret: value,
            key: Some(key),
            before: "",
            after: "",
            keywords: &[],
        })
    }

    #[test]
    fn values_after_a_secret_name_are_judged_by_shape() {
        assert_eq!(judge("password", "Summer2024"), Outcome::Neutral);
        assert_eq!(judge("db.password", "Tr0ub4dor-3x"), Outcome::Neutral);
        assert_eq!(judge("password", "p4ssw0rd"), Outcome::Neutral);
        assert_eq!(judge("password", "Summer2024_old"), Outcome::Neutral);
        assert_eq!(judge("smtp_password", "Tr0AbcDefx9"), Outcome::Neutral);
        assert_eq!(judge("password", "Hunter2Prod99"), Outcome::Neutral);
        let key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9Hk3Lq2vN8pTmR";
        assert_eq!(judge("secret_access_key", key), Outcome::Neutral);
        assert_eq!(
            judge("api_key", "9f86d081884c7d659a2feaa0c55ad015"),
            Outcome::Neutral
        );
    }

    #[test]
    fn a_random_hex_key_of_low_measured_entropy_is_still_a_key() {
        // 3.48 bits: below the floor for mixed text, ordinary for 32 random hex digits.
        let hex = "2d5a3b9ada7297a8a961d135f7d75764";
        assert_eq!(judge("stripe_api_key", hex), Outcome::Neutral);
    }

    #[test]
    fn words_of_names_are_told_from_generated_text() {
        for name in [
            "Terminal256Formatter",
            "Ed25519PrivateKey",
            "OAuth2Error",
            "v1beta1",
            "XMLParser",
            "refund",
            "412",
        ] {
            assert!(wordish(name.as_bytes()), "{name}");
        }
        for random in [
            "wJalrXUtnFEMI",
            "9f86d081884c7d659a2f",
            "Xk9nNyjOq9wM7q",
            "abc1234567",
            "Vb9Tq3Wn",
            "fjgvvq",
        ] {
            assert!(!wordish(random.as_bytes()), "{random}");
        }
    }

    #[test]
    fn names_are_words_and_short_parts() {
        for name in [
            "db.password",
            "my-namespace",
            "src/auth/token.rs",
            "ExternalSecret",
        ] {
            assert!(name_like(name), "{name}");
        }
        assert!(!name_like("ghp_x7Qk2LmZ"));
    }

    #[test]
    fn names_and_paths_of_words_are_not_values() {
        for (key, value) in [
            ("password", "reset_handler_v2"),
            ("password", "reset.py"),
            ("password", "hunter2"),
            ("password", "sha256sum"),
            ("password", "Base64Encoded"),
            ("passwordReset", "ResetHandler.ts"),
            ("token", "bucket_capacity1000"),
            ("auth", "token.rs"),
            ("token", "Summer2024"),
            ("public_key", "9f86d081884c7d659a2feaa0c55ad015"),
            ("monkey", "Island2024x"),
            ("Xk9keY", "Qm7rT2vXk9LpZ4wN8cHs"),
            ("bedrock-api-key", "YmVkcm9jay5hbWF6b25hd3MuY29x"),
            ("credentials", "url=dev-lb1.api.f4ke.com"),
            ("password", "value="),
            ("token", "Terminal256Formatter"),
            ("PrivateKey", "ed25519.Ed25519PrivateKey"),
            ("RefreshTokenGrant", "OAuth2RefreshTokenGrant"),
            (
                "key-values",
                "jD2NZc+h35LJzMWoxr5nqAPV2DnS1WGaSNGMvej6oTOnEzKcIpF4rjDD3WPsMb5i",
            ),
        ] {
            assert_eq!(judge(key, value), Outcome::Reject, "{key} {value}");
        }
    }
}
