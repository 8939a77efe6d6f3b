//! Where a store lives: a SQLite file, or a PostgreSQL database named by a `postgres://` (or
//! `postgresql://`) URL, as given to `--store` or `CQ_STORE`.
//!
//! It guarantees that a password in a URL never reaches a message: every error, log line and
//! `Debug` output names a store by [`Location::shown`], which masks it.

use std::path::{Path, PathBuf};

/// The URL schemes that select the PostgreSQL backend.
const SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// A store's location.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    File(PathBuf),
    /// The connection URL as given (it may hold a password).
    Postgres(String),
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

impl Location {
    /// What `--store` names: a URL with one of the PostgreSQL schemes, else a file path.
    pub fn of(path: &Path) -> Location {
        match path.to_str() {
            Some(text) if is_url(text) => Location::Postgres(text.to_owned()),
            _ => Location::File(path.to_owned()),
        }
    }

    /// The location as messages show it: a URL with its password masked.
    pub fn shown(&self) -> String {
        match self {
            Location::File(path) => path.display().to_string(),
            Location::Postgres(url) => mask_password(url),
        }
    }

    /// [`Location::shown`] as a path, for errors that carry one.
    pub fn shown_path(&self) -> PathBuf {
        match self {
            Location::File(path) => path.clone(),
            Location::Postgres(_) => PathBuf::from(self.shown()),
        }
    }

    /// A file name that stands for this database (host, port, database and options, never
    /// the user or password): where its signing key is kept by default.
    pub(crate) fn key_name(&self) -> String {
        let text = match self {
            Location::File(path) => path.display().to_string(),
            Location::Postgres(url) => {
                let rest = SCHEMES
                    .iter()
                    .find_map(|s| url.strip_prefix(s))
                    .unwrap_or(url);
                let (authority, tail) = rest
                    .find(['/', '?'])
                    .map_or((rest, ""), |at| rest.split_at(at));
                let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                let tail = strip_param(tail, "password");
                let tail = strip_param(&tail, "user");
                format!("{host}{tail}")
            }
        };
        let mut name: String = text
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        name.truncate(120);
        format!("pg-{name}")
    }
}

/// Whether `text` is a PostgreSQL URL.
pub fn is_url(text: &str) -> bool {
    SCHEMES
        .iter()
        .any(|s| text.len() >= s.len() && text[..s.len()].eq_ignore_ascii_case(s))
}

/// How messages show the store at `path` (a URL's password masked).
pub fn shown(path: &Path) -> String {
    Location::of(path).shown()
}

/// `url` with the password of its user part and of a `password=` parameter replaced by `***`.
fn mask_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_owned();
    };
    let (scheme, rest) = url.split_at(scheme_end);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => format!("{user}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let masked: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_owned(),
                })
                .collect();
            format!("{path}?{}", masked.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}{authority}{tail}")
}

/// `tail` (`/db?query`) without the parameter `key`.
fn strip_param(tail: &str, key: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_owned();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| {
            !kv.split_once('=')
                .is_some_and(|(k, _)| k.eq_ignore_ascii_case(key))
        })
        .collect();
    if kept.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", kept.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked_wherever_a_url_carries_them() {
        let url = "postgresql://cq:s3cret@db.example:5432/cq?password=other&sslmode=require";
        let shown = Location::of(Path::new(url)).shown();
        assert_eq!(
            shown,
            "postgresql://cq:***@db.example:5432/cq?password=***&sslmode=require"
        );
        assert!(!format!("{:?}", Location::of(Path::new(url))).contains("s3cret"));
        assert_eq!(
            mask_password("postgres://cq@%2Ftmp%2Fpg/db"),
            "postgres://cq@%2Ftmp%2Fpg/db"
        );
    }

    #[test]
    fn the_key_name_leaves_out_who_connects() {
        let a = Location::of(Path::new("postgres://agent:pw@db:5432/cq?sslmode=require"));
        let b = Location::of(Path::new("postgres://reviewer@db:5432/cq?sslmode=require"));
        assert_eq!(a.key_name(), b.key_name());
        assert_eq!(a.key_name(), "pg-db_5432_cq_sslmode_require");
        assert!(matches!(
            Location::of(Path::new("store.db")),
            Location::File(_)
        ));
        assert!(is_url("PostgreSQL://x/y"));
    }
}
