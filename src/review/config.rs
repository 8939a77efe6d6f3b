//! User configuration: one TOML file with optional `[keys]` and `[theme]` tables.
//!
//! The file is `--config FILE` when given (it must exist), otherwise `config.toml` in the
//! user's config directory (`~/.config/cq/` on Linux) when it exists. Each table overrides
//! the embedded defaults key by key; every mistake is an error that names the file.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::review::keymap::Keymap;
use crate::review::theme::Theme;

/// The keymap and theme the UI runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub keymap: Keymap,
    pub theme: Theme,
}

impl Config {
    /// The embedded defaults.
    pub fn defaults() -> anyhow::Result<Config> {
        Ok(Config {
            keymap: Keymap::default_keymap().context("while loading the embedded keymap")?,
            theme: Theme::default_theme().context("while loading the embedded theme")?,
        })
    }

    /// The defaults overridden by `text` (the contents of a user file).
    pub fn from_user_toml(text: &str) -> anyhow::Result<Config> {
        let table: toml::Table = toml::from_str(text).context("the file is not valid TOML")?;
        if let Some(unknown) = table.keys().find(|k| *k != "keys" && *k != "theme") {
            anyhow::bail!("unknown table \"{unknown}\"; a config file has [keys] and [theme]");
        }
        let defaults = Config::defaults()?;
        Ok(Config {
            keymap: defaults.keymap.with_overrides(table.get("keys"))?,
            theme: defaults.theme.with_overrides(table.get("theme"))?,
        })
    }

    /// Loads `explicit` if given, else the user's config file if it exists, else defaults.
    pub fn load(explicit: Option<&Path>) -> anyhow::Result<Config> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => user_config_path().filter(|p| p.exists()),
        };
        match path {
            None => Config::defaults(),
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("while reading config \"{}\"", path.display()))?;
                Config::from_user_toml(&text)
                    .with_context(|| format!("while loading config \"{}\"", path.display()))
            }
        }
    }
}

/// `config.toml` in the user's config directory, if there is one.
pub fn user_config_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "cq").map(|d| d.config_dir().join("config.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::action::Action;

    #[test]
    fn user_file_overrides_both_tables() {
        let c = Config::from_user_toml("[keys]\nhelp = [\"H\"]\n[theme]\ndim = {}").unwrap();
        assert_eq!(c.keymap.label(Action::Help), "H");
    }

    #[test]
    fn unknown_table_and_missing_file_are_errors() {
        assert!(Config::from_user_toml("[colours]\n").is_err());
        let err = Config::load(Some(Path::new("/nonexistent/cq.toml"))).unwrap_err();
        assert!(format!("{err:#}").contains("while reading config \"/nonexistent/cq.toml\""));
    }
}
