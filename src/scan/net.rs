//! Contact and network identifiers: e-mail, IPv4/IPv6 and MAC addresses, phone numbers. The
//! regexes find candidates; these checks parse them and look at the characters around them so
//! that versions, code paths and parts of longer numbers are not reported.

use super::rule::MatchCtx;
use super::validate::Outcome;

pub(super) fn email(ctx: &MatchCtx<'_>) -> Outcome {
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
    if in_url_userinfo(ctx.before) || scp_remote(ctx.after) {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

/// Whether an address is followed by `:` and a path, as in a git SSH remote or an scp target
/// (`git@github.com:org/repo.git`, `deploy@build01.corp.net:/srv/app`): a login, not a mailbox.
fn scp_remote(after: &str) -> bool {
    after.strip_prefix(':').is_some_and(|rest| {
        rest.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'~' | b'_' | b'.'))
    })
}

/// Whether text ending in `before` is inside a URL's user-info: after `scheme://` with no path,
/// query, fragment or space since. There `user@host` or `user:password@host` is a login, not
/// an e-mail address (`url-credentials` reports the password).
fn in_url_userinfo(before: &str) -> bool {
    before.rfind("://").is_some_and(|at| {
        !before[at + 3..].bytes().any(|b| {
            b.is_ascii_whitespace() || matches!(b, b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>')
        })
    })
}

pub(super) fn prev_char(ctx: &MatchCtx<'_>) -> Option<char> {
    ctx.before.chars().next_back()
}

pub(super) fn next_char(ctx: &MatchCtx<'_>) -> Option<char> {
    ctx.after.chars().next()
}

/// Which addresses an IP rule reports: ordinary ones, or only the reserved ones (loopback,
/// unspecified, broadcast, documentation ranges) that name no host or person and are reported
/// only when a policy asks for the `IP_ADDRESS` entity type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IpKind {
    Ordinary,
    Reserved,
}

fn kind_matches(reserved: bool, want: IpKind) -> bool {
    reserved == (want == IpKind::Reserved)
}

fn reserved_v4(a: std::net::Ipv4Addr) -> bool {
    let o = a.octets();
    a.is_loopback()
        || a.is_unspecified()
        || a.is_broadcast()
        || matches!(o[..3], [192, 0, 2] | [198, 51, 100] | [203, 0, 113])
}

/// The prefix length written right after an address (`/24`), if any.
fn prefix_after(ctx: &MatchCtx<'_>) -> Option<u32> {
    let rest = ctx.after.strip_prefix('/')?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// A network rather than a host: a prefix shorter than the address with every host bit zero
/// (`10.0.0.0/8`, `fc00::/7`). It names no host, let alone a person, so it is reported with
/// the reserved addresses, only when a policy asks for `IP_ADDRESS`.
fn network(bits: u128, width: u32, prefix: Option<u32>) -> bool {
    match prefix {
        Some(p) if p < width => bits & (u128::MAX >> (128 - width + p)) == 0,
        _ => false,
    }
}

fn reserved_v6(a: std::net::Ipv6Addr) -> bool {
    let s = a.segments();
    a.is_loopback()
        || a.is_unspecified()
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        || a.to_ipv4_mapped().is_some_and(reserved_v4)
}

pub(super) fn ipv4(ctx: &MatchCtx<'_>, want: IpKind) -> Outcome {
    let s = ctx.secret;
    let addr = s.split('/').next().unwrap_or(s);
    let Ok(parsed) = addr.parse::<std::net::Ipv4Addr>() else {
        return Outcome::Reject;
    };
    let net = network(u128::from(u32::from(parsed)), 32, prefix_after(ctx));
    if !kind_matches(reserved_v4(parsed) || net, want) {
        return Outcome::Reject;
    }
    // A digit right after it: the last group is cut out of a longer number, as in the version
    // `1.3.4.20200120-3.1`. (A fifth group, `192.168.1.1.1`, is still reported: Presidio's
    // examples label it an address.)
    if prev_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        || next_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
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

pub(super) fn ipv6(ctx: &MatchCtx<'_>, want: IpKind) -> Outcome {
    let s = ctx.secret;
    let addr = s.split('/').next().unwrap_or(s);
    let addr = addr.split('%').next().unwrap_or(addr);
    if !addr.bytes().any(|b| b.is_ascii_digit()) {
        return Outcome::Reject;
    }
    // A Python or NumPy slice, `attrs[0::2]`: two decimal groups at most, in brackets. A path
    // in code, `C::C1` or `Foo::Bar`: two groups at most, in capitals (addresses that short
    // are written in lower case).
    let groups: Vec<&str> = addr.split(':').filter(|g| !g.is_empty()).collect();
    let slice =
        prev_char(ctx) == Some('[') && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()));
    let path = addr.bytes().any(|b| b.is_ascii_uppercase());
    if groups.len() <= 2 && (slice || path) {
        return Outcome::Reject;
    }
    let Ok(parsed) = addr.parse::<std::net::Ipv6Addr>() else {
        return Outcome::Reject;
    };
    let net = network(u128::from(parsed), 128, prefix_after(ctx));
    if !kind_matches(reserved_v6(parsed) || net, want) {
        return Outcome::Reject;
    }
    if prev_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || ":_-".contains(c))
        || next_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || ":_-{<(".contains(c))
    {
        return Outcome::Reject;
    }
    Outcome::Neutral
}

pub(super) fn mac(s: &str) -> Outcome {
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

pub(super) fn phone(ctx: &MatchCtx<'_>, d: &[u8]) -> Outcome {
    // One digit making up four fifths of it: a round or filler number (`1000000`).
    if d.len() < 7 || d.len() > 15 || super::filter::dominant_fraction(d) >= 0.8 {
        return Outcome::Reject;
    }
    // A decimal fraction after it: a number such as `+35236450.6`, not a phone.
    let mut after = ctx.after.bytes();
    if after.next() == Some(b'.') && after.next().is_some_and(|b| b.is_ascii_digit()) {
        return Outcome::Reject;
    }
    if prev_char(ctx)
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '/' || c == '-' || c == '+')
        || next_char(ctx).is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '-')
    {
        return Outcome::Reject;
    }
    // The number before any extension (`x623`, `ext. 12`).
    let number = ctx.secret.split(['x', 'X', 'e', 'E']).next().unwrap_or("");
    let seps: String = number.chars().filter(|c| "./".contains(*c)).collect();
    if !seps.is_empty() && number.matches('.').count() == 1 {
        return Outcome::Reject;
    }
    Outcome::Neutral
}
