//! Check digits of national identifiers (tax, social security, health and identity numbers).
//!
//! A national-ID regex alone matches any run of digits; the published check-digit algorithm is
//! what tells a personnummer from a timestamp. Each function here implements one algorithm;
//! a pass confirms the match (high confidence), a fail rejects it.

use super::validate::{confirm, luhn, Outcome, Validator};

pub(super) fn check(v: Validator, s: &str, d: &[u8], before: &str) -> Outcome {
    let ok = match v {
        Validator::FiHetu => fi_hetu(s),
        Validator::DeVat => d.len() == 9 && iso7064_mod11_10(&d[..8]) == d[8],
        Validator::SePersonnummer => se_personnummer(d),
        Validator::SeOrgnr => d.len() == 10 && d[2] >= 2 && luhn(d),
        Validator::ZaId => d.len() == 13 && date_ok(d[2] * 10 + d[3], d[4] * 10 + d[5]) && luhn(d),
        Validator::DeKvnr => return confirm(de_kvnr(s)),
        Validator::Verhoeff => d.len() == 12 && d[0] >= 2 && verhoeff(d),
        Validator::KrRrn => return kr_rrn(d),
        Validator::TrTckn => tr_tckn(d),
        Validator::ThTnin => th_tnin(d),
        Validator::Pesel => return confirm(pesel(d)),
        Validator::Npi => npi(d),
        Validator::EsNif => return confirm(es_nif(s)),
        Validator::EsNie => return confirm(es_nie(s)),
        Validator::DeSteuerId => de_steuer_id(d),
        Validator::ItVat => d.len() == 11 && !all_same(d) && luhn(d),
        Validator::UkNhs => uk_nhs(d),
        Validator::Icao => icao(s),
        Validator::SgNric => sg_nric(s),
        Validator::AuAbn => au_abn(d),
        Validator::AuAcn => weighted(d, &[8, 7, 6, 5, 4, 3, 2, 1])
            .is_some_and(|s| (10 - s % 10) % 10 == u32::from(d[8])),
        Validator::AuTfn => {
            d.len() == 9 && weighted(d, &[1, 4, 3, 7, 5, 8, 6, 9, 10]).is_some_and(|s| s % 11 == 0)
        }
        Validator::AuMedicare => au_medicare(d),
        Validator::KrBrn => kr_brn(d),
        Validator::Aba => aba(d),
        Validator::DeRvnr => de_rvnr(s),
        Validator::DeLanr => {
            d.len() == 9
                && weighted(d, &[4, 9, 4, 9, 4, 9])
                    .is_some_and(|s| (10 - s % 10) % 10 == u32::from(d[6]))
        }
        Validator::LuhnId => luhn(d),
        Validator::UkNino => uk_nino(s),
        Validator::DePlz => return de_plz(s, before),
        Validator::Dea => dea(s),
        _ => false,
    };
    confirm(ok && !low_variety(d))
}

fn all_same(d: &[u8]) -> bool {
    d.len() > 1 && d.iter().all(|&x| x == d[0])
}

/// At most two distinct digits (`1111111112`, `0000000001`): test data, not an identifier.
fn low_variety(d: &[u8]) -> bool {
    let mut seen = [false; 10];
    for &x in d {
        seen[usize::from(x.min(9))] = true;
    }
    d.len() > 4 && seen.iter().filter(|&&s| s).count() <= 2
}

/// Sum of `d[i] * w[i]` over the weights' length, if `d` is long enough.
fn weighted(d: &[u8], w: &[u32]) -> Option<u32> {
    (d.len() >= w.len()).then(|| d.iter().zip(w).map(|(&x, &w)| u32::from(x) * w).sum())
}

fn date_ok(month: u8, day: u8) -> bool {
    let days = match month {
        2 => 29,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// ISO 7064 MOD 11,10 check digit over `d`.
fn iso7064_mod11_10(d: &[u8]) -> u8 {
    let mut product = 10u32;
    for &x in d {
        let mut sum = (u32::from(x) + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (sum * 2) % 11;
    }
    let check = (11 - product) % 10;
    check as u8
}

fn fi_hetu(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 11
        || !b[..6].iter().all(u8::is_ascii_digit)
        || !b[7..10].iter().all(u8::is_ascii_digit)
    {
        return false;
    }
    let n = |i: usize| b[i] - b'0';
    if !date_ok(n(2) * 10 + n(3), n(0) * 10 + n(1)) {
        return false;
    }
    let mut value: u64 = 0;
    for &c in b[..6].iter().chain(&b[7..10]) {
        value = value * 10 + u64::from(c - b'0');
    }
    let table = b"0123456789ABCDEFHJKLMNPRSTUVWXY";
    table[(value % 31) as usize] == b[10].to_ascii_uppercase()
}

fn se_personnummer(d: &[u8]) -> bool {
    let d = match d.len() {
        12 => &d[2..],
        10 => d,
        _ => return false,
    };
    let day = d[4] * 10 + d[5];
    let day = if day > 60 { day - 60 } else { day };
    date_ok(d[2] * 10 + d[3], day) && luhn(d)
}

fn de_kvnr(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || !b[0].is_ascii_alphabetic() || !b[1..].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let letter = b[0].to_ascii_uppercase() - b'A' + 1;
    let mut digits = vec![letter / 10, letter % 10];
    digits.extend(b[1..9].iter().map(|c| c - b'0'));
    let sum: u32 = digits
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let p = u32::from(x) * if i % 2 == 0 { 1 } else { 2 };
            p / 10 + p % 10
        })
        .sum();
    sum % 10 == u32::from(b[9] - b'0')
}

fn verhoeff(d: &[u8]) -> bool {
    const MUL: [[u8; 10]; 10] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
        [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
        [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
        [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
        [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
        [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
        [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
        [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
        [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ];
    const PERM: [[u8; 10]; 8] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
        [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
        [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
        [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
        [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
        [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
        [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
    ];
    let mut c = 0u8;
    for (i, &x) in d.iter().rev().enumerate() {
        c = MUL[usize::from(c)][usize::from(PERM[i % 8][usize::from(x)])];
    }
    c == 0
}

/// Korean RRN/FRN: date and gender digit are required; the check digit (dropped for numbers
/// issued since October 2020) confirms.
fn kr_rrn(d: &[u8]) -> Outcome {
    if d.len() != 13
        || !date_ok(d[2] * 10 + d[3], d[4] * 10 + d[5])
        || !(1..=8).contains(&d[6])
        || low_variety(d)
    {
        return Outcome::Reject;
    }
    let w = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5];
    let sum = weighted(d, &w).unwrap_or(0);
    let check = u32::from(d[12]);
    if (11 - sum % 11) % 10 == check || (d[6] >= 5 && (13 - sum % 11) % 10 == check) {
        Outcome::Confirmed
    } else {
        Outcome::Weak
    }
}

fn tr_tckn(d: &[u8]) -> bool {
    if d.len() != 11 || d[0] == 0 {
        return false;
    }
    let v: Vec<i32> = d.iter().map(|&x| i32::from(x)).collect();
    let odd = v[0] + v[2] + v[4] + v[6] + v[8];
    let even = v[1] + v[3] + v[5] + v[7];
    (odd * 7 - even).rem_euclid(10) == v[9] && v[..10].iter().sum::<i32>() % 10 == v[10]
}

fn th_tnin(d: &[u8]) -> bool {
    if d.len() != 13 || !(1..=8).contains(&d[0]) {
        return false;
    }
    let province = d[1] * 10 + d[2];
    let valid_province =
        matches!(province, 10..=27 | 30..=49 | 50..=58 | 60..=67 | 70..=77 | 80..=86 | 90..=96);
    let sum: u32 = d[..12]
        .iter()
        .enumerate()
        .map(|(i, &x)| u32::from(x) * (13 - i as u32))
        .sum();
    valid_province && (11 - sum % 11) % 10 == u32::from(d[12])
}

fn pesel(d: &[u8]) -> bool {
    if d.len() != 11 {
        return false;
    }
    let month = (d[2] * 10 + d[3]) % 20;
    let Some(sum) = weighted(d, &[1, 3, 7, 9, 1, 3, 7, 9, 1, 3]) else {
        return false;
    };
    date_ok(month, d[4] * 10 + d[5]) && (10 - sum % 10) % 10 == u32::from(d[10])
}

fn npi(d: &[u8]) -> bool {
    if d.len() != 10 || !(1..=2).contains(&d[0]) {
        return false;
    }
    let mut full = vec![8, 0, 8, 4, 0];
    full.extend_from_slice(d);
    luhn(&full)
}

const NIF_LETTERS: &[u8] = b"TRWAGMYFPDXBNJZSQVHLCKE";

fn es_nif(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    let Some(letter) = s.chars().next_back().filter(char::is_ascii_alphabetic) else {
        return false;
    };
    let Ok(n) = digits.parse::<u64>() else {
        return false;
    };
    (7..=8).contains(&digits.len())
        && NIF_LETTERS[(n % 23) as usize] == letter.to_ascii_uppercase() as u8
}

fn es_nie(s: &str) -> bool {
    let mut chars = s.chars();
    let prefix = match chars.next().map(|c| c.to_ascii_uppercase()) {
        Some('X') => '0',
        Some('Y') => '1',
        Some('Z') => '2',
        _ => return false,
    };
    let rest: String = chars.collect();
    es_nif(&format!("{prefix}{rest}"))
}

fn de_steuer_id(d: &[u8]) -> bool {
    if d.len() != 11 || d[0] == 0 {
        return false;
    }
    let mut counts = [0u8; 10];
    for &x in &d[..10] {
        counts[usize::from(x)] += 1;
    }
    counts.iter().all(|&c| c <= 3) && iso7064_mod11_10(&d[..10]) == d[10]
}

fn uk_nhs(d: &[u8]) -> bool {
    if d.len() != 10 {
        return false;
    }
    let Some(sum) = weighted(d, &[10, 9, 8, 7, 6, 5, 4, 3, 2]) else {
        return false;
    };
    let r = 11 - sum % 11;
    let r = if r == 11 { 0 } else { r };
    r != 10 && r == u32::from(d[9])
}

/// ICAO 9303 check digit (weights 7, 3, 1) over a 9-character document number.
fn icao(s: &str) -> bool {
    let b: Vec<u8> = s.bytes().map(|c| c.to_ascii_uppercase()).collect();
    if b.len() != 9 || !b[8].is_ascii_digit() {
        return false;
    }
    let value = |c: u8| match c {
        b'0'..=b'9' => Some(u32::from(c - b'0')),
        b'A'..=b'Z' => Some(u32::from(c - b'A') + 10),
        _ => None,
    };
    let mut sum = 0;
    for (i, &c) in b[..8].iter().enumerate() {
        let Some(v) = value(c) else {
            return false;
        };
        sum += v * [7, 3, 1][i % 3];
    }
    sum % 10 == u32::from(b[8] - b'0')
}

fn sg_nric(s: &str) -> bool {
    let b: Vec<u8> = s.bytes().map(|c| c.to_ascii_uppercase()).collect();
    if b.len() != 9 || !b[1..8].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let digits: Vec<u8> = b[1..8].iter().map(|c| c - b'0').collect();
    let Some(mut sum) = weighted(&digits, &[2, 7, 6, 5, 4, 3, 2]) else {
        return false;
    };
    let table: &[u8] = match b[0] {
        b'S' => b"JZIHGFEDCBA",
        b'T' => {
            sum += 4;
            b"JZIHGFEDCBA"
        }
        b'F' => b"XWUTRQPNMLK",
        b'G' => {
            sum += 4;
            b"XWUTRQPNMLK"
        }
        b'M' => {
            sum += 3;
            b"XWUTRQPNJLK"
        }
        _ => return false,
    };
    table[(sum % 11) as usize] == b[8]
}

fn au_abn(d: &[u8]) -> bool {
    if d.len() != 11 || d[0] == 0 {
        return false;
    }
    let mut v = d.to_vec();
    v[0] -= 1;
    weighted(&v, &[10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19]).is_some_and(|s| s % 89 == 0)
}

fn au_medicare(d: &[u8]) -> bool {
    if !(10..=11).contains(&d.len()) || !(2..=6).contains(&d[0]) {
        return false;
    }
    weighted(d, &[1, 3, 7, 9, 1, 3, 7, 9]).is_some_and(|s| s % 10 == u32::from(d[8]))
}

fn kr_brn(d: &[u8]) -> bool {
    if d.len() != 10 {
        return false;
    }
    let Some(mut sum) = weighted(d, &[1, 3, 7, 1, 3, 7, 1, 3, 5]) else {
        return false;
    };
    sum += u32::from(d[8]) * 5 / 10;
    (10 - sum % 10) % 10 == u32::from(d[9])
}

fn aba(d: &[u8]) -> bool {
    if d.len() != 9 {
        return false;
    }
    let prefix = d[0] * 10 + d[1];
    let sum: u32 = weighted(d, &[3, 7, 1, 3, 7, 1, 3, 7, 1]).unwrap_or(1);
    matches!(prefix, 0..=12 | 21..=32 | 61..=72 | 80) && sum % 10 == 0
}

/// German pension insurance number: area, birth date, initial letter, serial, check digit.
fn de_rvnr(s: &str) -> bool {
    let b: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    if b.len() != 12 || !b[8].is_ascii_alphabetic() {
        return false;
    }
    if !b[..8].iter().chain(&b[9..]).all(u8::is_ascii_digit) {
        return false;
    }
    let n = |i: usize| b[i] - b'0';
    let day = n(2) * 10 + n(3);
    if !date_ok(n(4) * 10 + n(5), if day > 50 { day - 50 } else { day }) {
        return false;
    }
    let letter = b[8].to_ascii_uppercase() - b'A' + 1;
    let mut digits: Vec<u8> = b[..8].iter().map(|c| c - b'0').collect();
    digits.extend([letter / 10, letter % 10]);
    digits.extend(b[9..11].iter().map(|c| c - b'0'));
    let w = [2, 1, 2, 5, 7, 1, 2, 1, 2, 1, 2, 1];
    let sum: u32 = digits
        .iter()
        .zip(w)
        .map(|(&x, w)| {
            let p = u32::from(x) * w;
            p / 10 + p % 10
        })
        .sum();
    sum % 10 == u32::from(b[11] - b'0')
}

/// German postal code: 01001–99998; a short all-caps word right before it (`HR 12345`,
/// `SD 20241`) marks a register or US ZIP code instead.
fn de_plz(s: &str, before: &str) -> Outcome {
    if s.len() != 5 || s.ends_with("000") || s == "99999" {
        return Outcome::Reject;
    }
    let prev = before
        .trim_end()
        .rsplit([' ', '\n', '\t'])
        .next()
        .unwrap_or("");
    if prev.eq_ignore_ascii_case("plz") || prev.eq_ignore_ascii_case("postleitzahl") {
        return Outcome::Confirmed;
    }
    if !prev.is_empty() && prev.len() <= 3 && prev.chars().all(|c| c.is_ascii_uppercase()) {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

fn uk_nino(s: &str) -> bool {
    let upper = s.to_ascii_uppercase();
    let prefix = upper.get(..2).unwrap_or("");
    !["BG", "GB", "NK", "KN", "TN", "NT", "ZZ"].contains(&prefix)
}

/// US DEA number: (d1 + d3 + d5) + 2 * (d2 + d4 + d6) ends in d7.
fn dea(s: &str) -> bool {
    let d: Vec<u32> = s
        .bytes()
        .skip(2)
        .filter_map(|b| (b as char).to_digit(10))
        .collect();
    if d.len() != 7 {
        return false;
    }
    ((d[0] + d[2] + d[4]) + 2 * (d[1] + d[3] + d[5])) % 10 == d[6]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(s: &str) -> Vec<u8> {
        s.bytes()
            .filter(u8::is_ascii_digit)
            .map(|b| b - b'0')
            .collect()
    }

    #[test]
    fn published_examples_validate() {
        assert!(fi_hetu("131052-308T"));
        assert!(tr_tckn(&digits("10000000146")));
        assert!(pesel(&digits("44051401458")));
        assert!(npi(&digits("1234567893")));
        assert!(es_nif("12345678Z"));
        assert!(uk_nhs(&digits("0032698674")));
        assert!(icao("C01234565") && !icao("C01234567"));
        assert!(au_abn(&digits("51824753556")));
        assert!(verhoeff(&digits("312345678909")));
    }
}
