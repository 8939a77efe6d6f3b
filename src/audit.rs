//! The tamper-evident audit log. Every verdict, rerun, approval, decision, reveal and reviewer
//! registration becomes a receipt: canonical JSON (schema `cq.receipt.v1`) that binds the
//! digests it is about and the hash of the receipt before it. Receipts made by a reviewer are
//! signed with the reviewer's Ed25519 key; all receipts are RFC 6962 Merkle leaves, and signed
//! checkpoints (C2SP signed notes, signed by the store's own key) commit to the tree head.
//!
//! Receipts hold digests, codes and reviewer notes only: never a request, a summary or a
//! matched secret. [`verify`] recomputes everything from the stored bytes and names the first
//! entry that does not check out; an exported checkpoint kept elsewhere proves that the log
//! was neither rewritten nor rolled back. Reviewer registrations form a signed chain of
//! authority ([`authority`]).
//!
//! This module is pure: it reads no database. The store hands it rows ([`rows::LogRows`]) and
//! writes what it builds.

pub mod authority;
pub mod export;
pub mod keys;
pub mod merkle;
pub mod note;
pub mod receipt;
pub mod receipt_fields;
pub mod rows;
pub mod verify;

pub use authority::{Authority, Registration, Role};
pub use keys::{generate_key, parse_public, GeneratedKey, KeyError, NamedKey};
pub use note::{Checkpoint, NoteError};
pub use receipt::{Receipt, ReceiptKind, RECEIPT_SCHEMA};
pub use rows::{EntryRow, LogRows};
pub use verify::{verify, verify_with, ChainCheck, Problem, VerifyReport, Workers};

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// Parses 64 hex digits into a hash.
pub fn unhex32(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let hi = char::from(pair[0]).to_digit(16)?;
        let lo = char::from(pair[1]).to_digit(16)?;
        if pair.iter().any(u8::is_ascii_uppercase) {
            return None;
        }
        out[i] = (hi * 16 + lo) as u8;
    }
    Some(out)
}

/// The current UTC time as RFC 3339 with millisecond precision, e.g. `2026-11-29T21:15:40.123Z`.
pub fn utc_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format_utc(now.as_secs() as i64, now.subsec_millis())
}

/// Formats seconds since the Unix epoch (proleptic Gregorian, UTC).
pub fn format_utc(secs: i64, millis: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Parses what [`format_utc`] writes (`YYYY-MM-DDTHH:MM:SS[.mmm]Z`) into Unix seconds.
pub fn parse_utc(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    if !text.ends_with('Z') {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formatting_matches_known_dates() {
        assert_eq!(format_utc(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_utc(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(format_utc(1_795_986_940, 0), "2026-11-29T21:15:40.000Z");
        for secs in [0, 951_782_400, 1_795_986_940, 4_102_444_799] {
            assert_eq!(parse_utc(&format_utc(secs, 123)), Some(secs));
        }
        assert_eq!(parse_utc("2026-13-01T00:00:00Z"), None);
    }

    #[test]
    fn hex_round_trips() {
        let h = [0xabu8; 32];
        assert_eq!(unhex32(&hex(&h)), Some(h));
        assert_eq!(unhex32(&hex(&h).to_uppercase()), None);
    }
}
