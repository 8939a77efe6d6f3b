//! The keymap: which keys trigger which [`Action`], from an embedded default plus user
//! overrides.
//!
//! The default lives in `assets/keymap.toml`; a user's `[keys]` table replaces an action's
//! keys one action at a time. Key strings and action names from a user file are parsed, never
//! unwrapped: an unknown action, a key string that does not parse, or one key bound to two
//! actions is a [`KeymapError`] that says what to fix. The help overlay and the footer are
//! generated from the same table, so they never disagree with what the keys do.

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::review::action::Action;

/// The default keymap file.
pub const DEFAULT_KEYMAP: &str = include_str!("../../assets/keymap.toml");

/// A key with its modifiers, as written in keymap files (`ctrl-c`, `G`, `space`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

/// A keymap that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeymapError {
    #[error("unknown action \"{0}\" in [keys]; known actions: {known}", known = known_actions())]
    UnknownAction(String),
    #[error("bad key \"{key}\" for \"{action}\": {why}")]
    BadKey {
        action: String,
        key: String,
        why: String,
    },
    #[error("\"{action}\" must be a list of key strings, e.g. {action} = [\"j\", \"down\"]")]
    NotAList { action: String },
    #[error("key \"{key}\" is bound to both \"{first}\" and \"{second}\"; remove one")]
    Conflict {
        key: String,
        first: String,
        second: String,
    },
    #[error("keymap is not valid TOML: {0}")]
    Toml(String),
}

fn known_actions() -> String {
    Action::ALL.map(Action::name).join(", ")
}

impl Key {
    /// Parses a key string (see `assets/keymap.toml` for the vocabulary).
    pub fn parse(s: &str) -> Result<Key, String> {
        let mut modifiers = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            let lower = rest.to_ascii_lowercase();
            if rest.chars().count() > 1 && lower.starts_with("ctrl-") {
                modifiers |= KeyModifiers::CONTROL;
                rest = &rest[5..];
            } else if rest.chars().count() > 1 && lower.starts_with("alt-") {
                modifiers |= KeyModifiers::ALT;
                rest = &rest[4..];
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (None, _) => return Err("empty key".into()),
            (Some(c), None) if !c.is_control() => KeyCode::Char(c),
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "backtab" | "shift-tab" => KeyCode::BackTab,
                "space" => KeyCode::Char(' '),
                "backspace" => KeyCode::Backspace,
                "delete" | "del" => KeyCode::Delete,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pageup" => KeyCode::PageUp,
                "pagedown" => KeyCode::PageDown,
                other => match other.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    Some(n @ 1..=12) => KeyCode::F(n),
                    _ => {
                        return Err(
                            "expected one character or a key name such as enter, esc, tab, \
                             space, up, pagedown, f1, optionally after ctrl- or alt-"
                                .into(),
                        )
                    }
                },
            },
        };
        let code = match code {
            // Terminals report ctrl-letters in lower case.
            KeyCode::Char(c) if modifiers.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            code => code,
        };
        Ok(Key { code, modifiers })
    }

    /// The key of a terminal key event, normalised so `G` matches whether or not the terminal
    /// reports shift.
    pub fn from_event(event: &KeyEvent) -> Key {
        let modifiers = event.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
        let code = match event.code {
            KeyCode::Char(c) if modifiers.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            code => code,
        };
        Key { code, modifiers }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("S-tab"),
            KeyCode::Backspace => f.write_str("bksp"),
            KeyCode::Delete => f.write_str("del"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::F(n) => write!(f, "f{n}"),
            _ => f.write_str("?"),
        }
    }
}

/// Actions with their keys, in [`Action::ALL`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    pub bindings: Vec<(Action, Vec<Key>)>,
}

impl Keymap {
    /// The embedded default keymap.
    pub fn default_keymap() -> Result<Keymap, KeymapError> {
        let table: toml::Table =
            toml::from_str(DEFAULT_KEYMAP).map_err(|e| KeymapError::Toml(e.to_string()))?;
        let empty = Keymap {
            bindings: Action::ALL.iter().map(|&a| (a, Vec::new())).collect(),
        };
        empty.with_overrides(table.get("keys"))
    }

    /// This keymap with a `[keys]` table's actions replaced.
    pub fn with_overrides(mut self, keys: Option<&toml::Value>) -> Result<Keymap, KeymapError> {
        let Some(keys) = keys else {
            return Ok(self);
        };
        let table = keys.as_table().ok_or_else(|| KeymapError::NotAList {
            action: "keys".into(),
        })?;
        for (name, value) in table {
            let action =
                Action::from_name(name).ok_or_else(|| KeymapError::UnknownAction(name.clone()))?;
            let list = value.as_array().ok_or_else(|| KeymapError::NotAList {
                action: name.clone(),
            })?;
            let mut parsed = Vec::new();
            for item in list {
                let s = item.as_str().ok_or_else(|| KeymapError::NotAList {
                    action: name.clone(),
                })?;
                parsed.push(Key::parse(s).map_err(|why| KeymapError::BadKey {
                    action: name.clone(),
                    key: s.into(),
                    why,
                })?);
            }
            if let Some(slot) = self.bindings.iter_mut().find(|(a, _)| *a == action) {
                slot.1 = parsed;
            }
        }
        self.check_conflicts()?;
        Ok(self)
    }

    fn check_conflicts(&self) -> Result<(), KeymapError> {
        let mut seen: Vec<(Key, Action)> = Vec::new();
        for (action, keys) in &self.bindings {
            for key in keys {
                if let Some((_, first)) = seen.iter().find(|(k, a)| k == key && a != action) {
                    return Err(KeymapError::Conflict {
                        key: key.to_string(),
                        first: first.name().into(),
                        second: action.name().into(),
                    });
                }
                seen.push((*key, *action));
            }
        }
        Ok(())
    }

    /// The action a key event triggers, if any.
    pub fn action_for(&self, event: &KeyEvent) -> Option<Action> {
        let key = Key::from_event(event);
        self.bindings
            .iter()
            .find(|(_, keys)| keys.contains(&key))
            .map(|(a, _)| *a)
    }

    /// The keys of an action.
    pub fn keys_of(&self, action: Action) -> &[Key] {
        self.bindings
            .iter()
            .find(|(a, _)| *a == action)
            .map_or(&[], |(_, k)| k.as_slice())
    }

    /// The first key of an action as shown in the footer (`j`), or `-` when unbound.
    pub fn label(&self, action: Action) -> String {
        self.keys_of(action)
            .first()
            .map_or_else(|| "-".into(), ToString::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn embedded_keymap_parses_and_binds_every_action() {
        let km = Keymap::default_keymap().unwrap();
        for (action, keys) in &km.bindings {
            assert!(!keys.is_empty(), "{action} has no key");
        }
    }

    #[test]
    fn events_map_to_actions() {
        let km = Keymap::default_keymap().unwrap();
        let g = ev(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(km.action_for(&g), Some(Action::Bottom));
        let c = ev(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(km.action_for(&c), Some(Action::Quit));
        let bt = ev(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(km.action_for(&bt), Some(Action::PrevPane));
        assert_eq!(
            km.action_for(&ev(KeyCode::Down, KeyModifiers::NONE)),
            Some(Action::MoveDown)
        );
    }

    #[test]
    fn user_override_replaces_one_action() {
        let user: toml::Table = toml::from_str("[keys]\nquit = [\"Q\"]").unwrap();
        let km = Keymap::default_keymap()
            .unwrap()
            .with_overrides(user.get("keys"))
            .unwrap();
        assert_eq!(km.label(Action::Quit), "Q");
        assert_eq!(km.label(Action::MoveDown), "j");
    }

    #[test]
    fn bad_user_keymaps_are_clear_errors() {
        let load = |s: &str| {
            let user: toml::Table = toml::from_str(s).unwrap();
            Keymap::default_keymap()
                .unwrap()
                .with_overrides(user.get("keys"))
                .unwrap_err()
                .to_string()
        };
        assert!(load("[keys]\nfly = [\"f\"]").starts_with("unknown action \"fly\""));
        assert!(load("[keys]\nquit = [\"ctrl-\"]").contains("bad key \"ctrl-\" for \"quit\""));
        assert!(load("[keys]\nquit = [\"hyper-q\"]").contains("bad key"));
        assert!(load("[keys]\nquit = \"q\"").contains("must be a list"));
        assert!(load("[keys]\nquit = [\"j\"]").contains("bound to both"));
        let user: toml::Table = toml::from_str("[keys]\nquit = [\"ctrl-Q\", \"ctrl-q\"]").unwrap();
        let km = Keymap::default_keymap()
            .unwrap()
            .with_overrides(user.get("keys"))
            .unwrap();
        let ev = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL);
        assert_eq!(km.action_for(&ev), Some(Action::Quit));
    }

    #[test]
    fn key_strings_round_trip_through_display() {
        for s in ["j", "G", "ctrl-c", "space", "enter", "f1", "alt-x"] {
            assert_eq!(Key::parse(s).unwrap().to_string(), s);
        }
    }
}
