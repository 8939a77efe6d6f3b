//! Validators: the checks a regex cannot express. Checksums (Luhn, mod-97, CRC32, base58check,
//! bech32) confirm a match and raise its confidence; structural checks (JWT header, SSN areas,
//! IP octets) reject impostors; the generic assignment and prose validators decide whether a
//! value next to a word like "password" is a live secret or an identifier, reference or word.

use sha2::{Digest, Sha256};

use super::filter;
use super::ids;
use super::rule::MatchCtx;

/// The verdict of a validator on one match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Reject,
    /// A checksum or structure confirmed the value: confidence becomes high.
    Confirmed,
    /// Acceptable but doubtful: confidence becomes low.
    Weak,
    Neutral,
}

macro_rules! validators {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// Every validator a rule file may name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(super) enum Validator { $($variant),* }

        impl Validator {
            pub(super) fn from_name(name: &str) -> Option<Validator> {
                match name { $($name => Some(Validator::$variant),)* _ => None }
            }
        }
    };
}

validators! {
    Luhn => "luhn",
    Iban => "iban",
    Ssn => "ssn",
    Itin => "itin",
    Jwt => "jwt",
    GithubCrc32 => "github_crc32",
    GenericSecret => "generic_secret",
    Password => "password",
    ProseSecret => "prose_secret",
    Email => "email",
    Ipv4 => "ipv4",
    Ipv6 => "ipv6",
    Mac => "mac",
    Phone => "phone",
    Base58Check => "base58check",
    Bech32 => "bech32",
    NotPlaceholder => "not_placeholder",
    FiHetu => "fi_hetu",
    DeVat => "de_vat",
    SePersonnummer => "se_personnummer",
    SeOrgnr => "se_orgnr",
    ZaId => "za_id",
    DeKvnr => "de_kvnr",
    Verhoeff => "verhoeff",
    KrRrn => "kr_rrn",
    TrTckn => "tr_tckn",
    ThTnin => "th_tnin",
    Pesel => "pesel",
    Npi => "npi",
    EsNif => "es_nif",
    EsNie => "es_nie",
    DeSteuerId => "de_steuer_id",
    ItVat => "it_vat",
    UkNhs => "uk_nhs",
    Icao => "icao",
    SgNric => "sg_nric",
    AuAbn => "au_abn",
    AuAcn => "au_acn",
    AuTfn => "au_tfn",
    AuMedicare => "au_medicare",
    KrBrn => "kr_brn",
    Aba => "aba",
    DeRvnr => "de_rvnr",
    DeLanr => "de_lanr",
    LuhnId => "luhn_id",
    UkNino => "uk_nino",
    DePlz => "de_plz",
    Dea => "dea",
    VendorSecret => "vendor_secret",
    UrlPassword => "url_password",
    UserPass => "user_pass",
    AuthHeader => "auth_header",
}

pub(super) fn check(v: Validator, ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    let digits = || -> Vec<u8> {
        s.bytes()
            .filter(u8::is_ascii_digit)
            .map(|b| b - b'0')
            .collect()
    };
    match v {
        Validator::Luhn => card(&digits()),
        Validator::Iban => confirm(iban(s)),
        Validator::Ssn => ssn(s),
        Validator::Itin => itin(&digits()),
        Validator::Jwt => jwt(s),
        Validator::GithubCrc32 => github_crc32(s),
        Validator::GenericSecret => generic_secret(ctx),
        Validator::Password => password(ctx),
        Validator::ProseSecret => prose_secret(ctx),
        Validator::VendorSecret => vendor_secret(ctx),
        Validator::UrlPassword => url_password(s),
        Validator::UserPass => user_pass(s),
        Validator::AuthHeader => auth_header(s),
        Validator::Email => email(ctx),
        Validator::Ipv4 => ipv4(ctx),
        Validator::Ipv6 => ipv6(ctx),
        Validator::Mac => mac(s),
        Validator::Phone => phone(ctx, &digits()),
        Validator::Base58Check => confirm(base58check(s)),
        Validator::Bech32 => confirm(bech32(s)),
        Validator::NotPlaceholder => {
            if filter::is_placeholder(s) || filter::is_sequential(s) {
                Outcome::Reject
            } else {
                Outcome::Neutral
            }
        }
        other => ids::check(other, s, &digits(), ctx.before),
    }
}

pub(super) fn confirm(ok: bool) -> Outcome {
    if ok {
        Outcome::Confirmed
    } else {
        Outcome::Reject
    }
}

/// Luhn checksum over decimal digits.
pub(super) fn luhn(d: &[u8]) -> bool {
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| {
            let x = u32::from(x);
            if i % 2 == 1 {
                let y = x * 2;
                if y > 9 {
                    y - 9
                } else {
                    y
                }
            } else {
                x
            }
        })
        .sum();
    !d.is_empty() && sum % 10 == 0
}

fn card(d: &[u8]) -> Outcome {
    if d.len() < 13 || d.len() > 19 || d.iter().all(|&x| x == d[0]) {
        return Outcome::Reject;
    }
    confirm(luhn(d) && (1..=6).contains(&d[0]))
}

/// IBAN: country length table and ISO 7064 mod-97.
fn iban(s: &str) -> bool {
    iban_exact(s)
        || s.rsplit_once(' ')
            .is_some_and(|(head, tail)| tail.len() < 4 && iban_exact(head))
}

fn iban_exact(s: &str) -> bool {
    let compact: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if compact.len() < 15 || !compact[..2].iter().all(u8::is_ascii_uppercase) {
        return false;
    }
    let Some(len) = iban_length(&compact[..2]) else {
        return false;
    };
    if compact.len() != len || !compact[2..4].iter().all(u8::is_ascii_digit) {
        return false;
    }
    if compact[4..].iter().any(|b| b.is_ascii_lowercase()) {
        return false;
    }
    let rotated = compact[4..].iter().chain(&compact[..4]);
    let mut rem: u32 = 0;
    for &b in rotated {
        let v = match b {
            b'0'..=b'9' => u32::from(b - b'0'),
            b'A'..=b'Z' => u32::from(b - b'A') + 10,
            _ => return false,
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    rem == 1
}

fn iban_length(cc: &[u8]) -> Option<usize> {
    const TABLE: &str = "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DJ27 DK18 DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HN28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 PS29 PT25 QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30";
    TABLE.split(' ').find_map(|e| {
        let e = e.as_bytes();
        (e[..2] == *cc).then(|| usize::from(e[2] - b'0') * 10 + usize::from(e[3] - b'0'))
    })
}

/// US SSN: same separator throughout, area not 000/666/9xx, group and serial not zero, and not
/// a famous advertising or test number.
fn ssn(s: &str) -> Outcome {
    let seps: Vec<char> = s.chars().filter(|c| !c.is_ascii_digit()).collect();
    if seps.windows(2).any(|w| w[0] != w[1]) {
        return Outcome::Reject;
    }
    let d: String = s.chars().filter(char::is_ascii_digit).collect();
    if d.len() != 9 {
        return Outcome::Reject;
    }
    let (area, group, serial) = (&d[..3], &d[3..5], &d[5..]);
    let bad = area == "000"
        || area == "666"
        || area.starts_with('9')
        || group == "00"
        || serial == "0000"
        || [
            "078051120",
            "219099999",
            "123456789",
            "111111111",
            "457555462",
        ]
        .contains(&d.as_str());
    if bad {
        Outcome::Reject
    } else if seps.is_empty() {
        Outcome::Weak
    } else {
        Outcome::Neutral
    }
}

/// US ITIN: 9xx with a group in 50–65, 70–88, 90–92 or 94–99.
fn itin(d: &[u8]) -> Outcome {
    if d.len() != 9 || d[0] != 9 {
        return Outcome::Reject;
    }
    let g = d[3] * 10 + d[4];
    confirm(matches!(g, 50..=65 | 70..=88 | 90..=92 | 94..=99))
}

/// A JWT: three dot-separated base64url parts whose header decodes to JSON naming `alg`.
fn jwt(s: &str) -> Outcome {
    use base64::Engine;
    let mut parts = s.split('.');
    let Some(header) = parts.next() else {
        return Outcome::Reject;
    };
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let Ok(bytes) = engine.decode(header.trim_end_matches('=')) else {
        return Outcome::Reject;
    };
    let text = String::from_utf8_lossy(&bytes);
    if text.trim_start().starts_with('{') && text.contains('"') && text.contains(':') {
        Outcome::Confirmed
    } else {
        Outcome::Reject
    }
}

/// GitHub tokens (`ghp_` etc.) end in a base62 CRC32 of the rest; a match raises confidence,
/// a mismatch does not reject (published examples are often hand-mangled).
fn github_crc32(s: &str) -> Outcome {
    let Some((_, body)) = s.split_once('_') else {
        return Outcome::Neutral;
    };
    if body.len() != 36 {
        return Outcome::Neutral;
    }
    let (payload, check) = body.split_at(30);
    let crc = crc32(payload.as_bytes());
    if base62(crc, 6) == check {
        Outcome::Confirmed
    } else {
        Outcome::Neutral
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

fn base62(mut n: u32, width: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = vec![b'0'; width];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8_lossy(&out).into_owned()
}

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

fn key_words(key: &str) -> Vec<String> {
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
fn key_strength(key: &str) -> u8 {
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

/// A value assigned to a secret-looking name in code or config.
fn generic_secret(ctx: &MatchCtx<'_>) -> Outcome {
    let strength = ctx.key.map_or(1, key_strength);
    let s = ctx.secret;
    if strength == 0 || filter::is_reference(s) || filter::is_path_or_url(s) {
        return Outcome::Reject;
    }
    if filter::is_placeholder(s) || filter::is_sequential(s) || filter::is_version_or_number(s) {
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
    if long_enough && entropy >= 3.0 && kinds >= 2 && c.digit + c.upper > 0 {
        if entropy >= 3.5 && s.len() >= 16 {
            Outcome::Neutral
        } else {
            Outcome::Weak
        }
    } else {
        Outcome::Reject
    }
}

/// A value assigned to a password-like name: anything that is not a word, reference or
/// placeholder.
fn password(ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    if filter::is_reference(s) || filter::is_placeholder(s) || filter::is_path_or_url(s) {
        return Outcome::Reject;
    }
    password_value(s)
}

const COMMON_PASSWORD_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
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
fn vendor_secret(ctx: &MatchCtx<'_>) -> Outcome {
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
fn url_password(s: &str) -> Outcome {
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
fn user_pass(s: &str) -> Outcome {
    let (user, pass) = s.split_once(':').unwrap_or((s, ""));
    let value = if pass.is_empty() { user } else { pass };
    if value.is_empty()
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

/// The credential part of an Authorization header.
fn auth_header(s: &str) -> Outcome {
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
    if c.digit > 0 && letters > 0 || symbolic && letters > 0 || mixed_case {
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
fn prose_secret(ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    if filter::is_reference(s) || filter::is_path_or_url(s) || filter::is_placeholder(s) {
        return Outcome::Reject;
    }
    let lower = s.to_ascii_lowercase();
    if COMMON_PASSWORD_WORDS.contains(&lower.as_str()) {
        return Outcome::Reject;
    }
    let quoted = prev_char(ctx).is_some_and(|c| "\"'`“‘".contains(c));
    if quoted && s.len() >= 4 && s.chars().any(|c| c.is_alphanumeric()) {
        return Outcome::Neutral;
    }
    if filter::is_version_or_number(s) && s.len() < 6 {
        return Outcome::Reject;
    }
    let c = filter::classes(s);
    let letters = c.lower + c.upper;
    let strong_symbol = s
        .chars()
        .any(|ch| !ch.is_ascii_alphanumeric() && !"-_.'".contains(ch));
    let inner_upper = s.chars().skip(1).any(|ch| ch.is_ascii_uppercase()) && c.lower > 0;
    if (c.digit > 0 && (letters > 0 || s.len() >= 6))
        || (strong_symbol && letters > 0)
        || inner_upper
    {
        Outcome::Neutral
    } else {
        Outcome::Reject
    }
}

fn email(ctx: &MatchCtx<'_>) -> Outcome {
    let lower = ctx.secret.to_ascii_lowercase();
    let Some((local, domain)) = lower.rsplit_once('@') else {
        return Outcome::Reject;
    };
    let reserved = [
        "example.com",
        "example.org",
        "example.net",
        "localhost",
        ".test",
        ".invalid",
        ".example",
        ".local",
    ];
    if local.is_empty()
        || reserved
            .iter()
            .any(|r| domain == r.trim_start_matches('.') || domain.ends_with(r))
    {
        return Outcome::Reject;
    }
    let tld = domain.rsplit('.').next().unwrap_or("");
    let file_ext = [
        "png", "jpg", "jpeg", "gif", "svg", "webp", "js", "css", "py", "rs", "go", "json",
    ];
    if file_ext.contains(&tld) {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

fn prev_char(ctx: &MatchCtx<'_>) -> Option<char> {
    ctx.before.chars().next_back()
}

fn next_char(ctx: &MatchCtx<'_>) -> Option<char> {
    ctx.after.chars().next()
}

fn ipv4(ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    let addr = s.split('/').next().unwrap_or(s);
    if addr.parse::<std::net::Ipv4Addr>().is_err() {
        return Outcome::Reject;
    }
    if prev_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        || next_char(ctx).is_some_and(|c| c.is_ascii_alphabetic() || c == '-')
    {
        return Outcome::Reject;
    }
    let before = ctx.before.to_ascii_lowercase();
    let t = before.trim_end();
    if t.ends_with("version") || t.ends_with(" v") || t.ends_with("release") {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

fn ipv6(ctx: &MatchCtx<'_>) -> Outcome {
    let s = ctx.secret;
    let addr = s.split('/').next().unwrap_or(s);
    let addr = addr.split('%').next().unwrap_or(addr);
    if !addr.bytes().any(|b| b.is_ascii_digit()) || addr.parse::<std::net::Ipv6Addr>().is_err() {
        return Outcome::Reject;
    }
    if prev_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || c == ':' || c == '_')
        || next_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || c == ':' || c == '_')
    {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

fn mac(s: &str) -> Outcome {
    let hex: String = s.chars().filter(char::is_ascii_hexdigit).collect();
    let lower = hex.to_ascii_lowercase();
    if lower.chars().all(|c| c == '0') || lower.chars().all(|c| c == 'f') {
        return Outcome::Reject;
    }
    let seps: Vec<char> = s.chars().filter(|c| !c.is_ascii_hexdigit()).collect();
    if seps.windows(2).any(|w| w[0] != w[1]) {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

fn phone(ctx: &MatchCtx<'_>, d: &[u8]) -> Outcome {
    if d.len() < 7 || d.len() > 15 || d.iter().all(|&x| x == d[0]) {
        return Outcome::Reject;
    }
    if prev_char(ctx)
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '/' || c == '-' || c == '+')
        || next_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '-')
    {
        return Outcome::Reject;
    }
    let seps: String = ctx.secret.chars().filter(|c| "./".contains(*c)).collect();
    if !seps.is_empty() && ctx.secret.matches('.').count() == 1 {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

const BASE58: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Bitcoin-style base58check: the last four bytes are the double SHA-256 of the rest.
fn base58check(s: &str) -> bool {
    let mut bytes: Vec<u8> = Vec::new();
    for c in s.bytes() {
        let Some(mut carry) = BASE58.iter().position(|&a| a == c) else {
            return false;
        };
        for b in bytes.iter_mut().rev() {
            carry += usize::from(*b) * 58;
            *b = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.insert(0, (carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = s.bytes().take_while(|&c| c == b'1').count();
    let mut full = vec![0u8; zeros];
    full.extend(bytes);
    if full.len() < 5 {
        return false;
    }
    let (payload, check) = full.split_at(full.len() - 4);
    let digest = Sha256::digest(Sha256::digest(payload));
    digest[..4] == *check
}

/// Bech32 / bech32m checksum (segwit addresses, age keys).
fn bech32(s: &str) -> bool {
    const CHARSET: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    let lower = s.to_ascii_lowercase();
    let Some(pos) = lower.rfind('1') else {
        return false;
    };
    let (hrp, data) = (&lower[..pos], &lower[pos + 1..]);
    if hrp.is_empty() || data.len() < 6 {
        return false;
    }
    let mut values: Vec<u32> = hrp.bytes().map(|b| u32::from(b >> 5)).collect();
    values.push(0);
    values.extend(hrp.bytes().map(|b| u32::from(b & 31)));
    for c in data.bytes() {
        match CHARSET.iter().position(|&x| x == c) {
            Some(v) => values.push(v as u32),
            None => return false,
        }
    }
    let gen = [
        0x3b6a_57b2u32,
        0x2650_8e6d,
        0x1ea1_19fa,
        0x3d42_33dd,
        0x2a14_62b3,
    ];
    let mut chk: u32 = 1;
    for v in values {
        let top = chk >> 25;
        chk = ((chk & 0x01ff_ffff) << 5) ^ v;
        for (i, g) in gen.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    chk == 1 || chk == 0x2bc8_30a3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums() {
        assert!(luhn(&[4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]));
        assert!(iban("DE89370400440532013000"));
        assert!(!iban("DE89370400440532013001"));
        assert!(base58check("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"));
        assert!(bech32(
            "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"
        ));
        assert_eq!(base62(0, 6), "000000");
    }

    #[test]
    fn key_names() {
        assert_eq!(key_strength("db_password"), 2);
        assert_eq!(key_strength("genericToken"), 1);
        assert_eq!(key_strength("kms_key_id"), 0);
        assert_eq!(key_strength("public_key"), 0);
        assert_eq!(key_strength("access_token_url"), 0);
    }
}
