//! Validators: the checks a regex cannot express. Checksums (Luhn, mod-97, CRC32, base58check,
//! bech32) confirm a match and raise its confidence; structural checks (JWT header, SSN areas,
//! IP octets) reject impostors; the generic assignment and prose validators decide whether a
//! value next to a word like "password" is a live secret or an identifier, reference or word.

use sha2::{Digest, Sha256};

use super::filter;
use super::ids;
use super::names;
use super::net::{self, IpKind};
use super::rule::MatchCtx;
use super::values;

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
    ProseDirect => "prose_direct",
    Email => "email",
    Ipv4 => "ipv4",
    Ipv6 => "ipv6",
    Ipv4Reserved => "ipv4_reserved",
    Ipv6Reserved => "ipv6_reserved",
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
    NamedValue => "named_value",
    VendorValue => "vendor_value",
    BareBase64Key => "bare_base64_key",
    UrlPassword => "url_password",
    UserPass => "user_pass",
    AuthHeader => "auth_header",
    Slack => "slack",
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
        Validator::GenericSecret => values::generic_secret(ctx),
        Validator::Password => values::password(ctx),
        Validator::ProseSecret => values::prose_secret(ctx),
        Validator::ProseDirect => values::prose_direct(ctx),
        Validator::VendorSecret => values::vendor_secret(ctx),
        Validator::NamedValue => names::named_value(ctx),
        Validator::VendorValue => names::vendor_value(ctx),
        Validator::BareBase64Key => names::bare_base64_key(ctx),
        Validator::UrlPassword => values::url_password(s),
        Validator::UserPass => values::user_pass(s),
        Validator::AuthHeader => values::auth_header(s),
        Validator::Slack => values::slack(s),
        Validator::Email => net::email(ctx),
        Validator::Ipv4 => net::ipv4(ctx, IpKind::Ordinary),
        Validator::Ipv6 => net::ipv6(ctx, IpKind::Ordinary),
        Validator::Ipv4Reserved => net::ipv4(ctx, IpKind::Reserved),
        Validator::Ipv6Reserved => net::ipv6(ctx, IpKind::Reserved),
        Validator::Mac => net::mac(s),
        Validator::Phone => net::phone(ctx, &digits()),
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
    if d.len() < 12 || d.len() > 19 || d.iter().all(|&x| x == d[0]) {
        return Outcome::Reject;
    }
    confirm(luhn(d) && card_issuer_length_ok(d))
}

/// Whether the issuer prefix (IIN) admits a number of this length.
fn card_issuer_length_ok(d: &[u8]) -> bool {
    let n = d.len();
    let p2 = u32::from(d[0]) * 10 + u32::from(d[1]);
    let p4 = p2 * 100 + u32::from(d[2]) * 10 + u32::from(d[3]);
    match d[0] {
        1 => n == 15,
        4 => matches!(n, 13 | 16 | 19),
        2 => (2221..=2720).contains(&p4) && n == 16,
        3 => match p2 {
            34 | 37 => n == 15,
            35 => (3528..=3589).contains(&p4) && (16..=19).contains(&n),
            30 | 36 | 38 | 39 => (14..=19).contains(&n),
            _ => false,
        },
        5 => match p2 {
            51..=55 => n == 16,
            50 | 56..=59 => (12..=19).contains(&n),
            _ => false,
        },
        6 => (12..=19).contains(&n),
        _ => false,
    }
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
    let looks_like_object = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        text.trim_start().starts_with('{') && text.contains('"') && text.contains(':')
    };
    if !looks_like_object(&bytes) {
        return Outcome::Reject;
    }
    // Without a signature part (`header.claims`, an unsigned or cut token), the claims must
    // decode to an object too.
    let claims = parts.next().unwrap_or("");
    if parts.next().is_none() {
        match engine.decode(claims.trim_end_matches('=')) {
            Ok(c) if looks_like_object(&c) => {}
            _ => return Outcome::Reject,
        }
    }
    Outcome::Confirmed
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
}
