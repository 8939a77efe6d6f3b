//! The theme: meaning-based roles (added, removed, error, badge, secret mask…) in ANSI colours.
//!
//! Widgets ask for a [`Role`], never for a colour. The default lives in `assets/theme.toml`; a
//! user's `[theme]` table overrides a role at a time, and unknown roles, colours or modifiers
//! are a [`ThemeError`]. With `NO_COLOR` [`Theme::without_colour`] drops every colour but keeps
//! the modifiers, and widgets always pair a role with a glyph or word, so colour is never the
//! only signal. The `badge` role is reserved for sanitizer badges: no untrusted text is ever
//! drawn in it.

use std::collections::BTreeMap;

use ratatui::style::{Color, Modifier, Style};

/// The default theme file.
pub const DEFAULT_THEME: &str = include_str!("../../assets/theme.toml");

/// What a piece of the screen means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Text,
    Dim,
    Title,
    Header,
    Selection,
    Focus,
    Added,
    Removed,
    AddedEmph,
    RemovedEmph,
    Error,
    Warning,
    Ok,
    Badge,
    SecretMask,
    Conflict,
    Authority,
    Pinned,
    /// The summary sentence the selected constraint is about.
    Evidence,
    /// Words a read-time guess matched (a user turn sharing a constraint's words).
    Matched,
    Tagged,
    Key,
    StatusBar,
}

impl Role {
    /// Every role.
    pub const ALL: [Role; 23] = [
        Role::Text,
        Role::Dim,
        Role::Title,
        Role::Header,
        Role::Selection,
        Role::Focus,
        Role::Added,
        Role::Removed,
        Role::AddedEmph,
        Role::RemovedEmph,
        Role::Error,
        Role::Warning,
        Role::Ok,
        Role::Badge,
        Role::SecretMask,
        Role::Conflict,
        Role::Authority,
        Role::Pinned,
        Role::Evidence,
        Role::Matched,
        Role::Tagged,
        Role::Key,
        Role::StatusBar,
    ];

    /// The name used in theme files.
    pub fn name(self) -> &'static str {
        match self {
            Role::Text => "text",
            Role::Dim => "dim",
            Role::Title => "title",
            Role::Header => "header",
            Role::Selection => "selection",
            Role::Focus => "focus",
            Role::Added => "added",
            Role::Removed => "removed",
            Role::AddedEmph => "added_emph",
            Role::RemovedEmph => "removed_emph",
            Role::Error => "error",
            Role::Warning => "warning",
            Role::Ok => "ok",
            Role::Badge => "badge",
            Role::SecretMask => "secret_mask",
            Role::Conflict => "conflict",
            Role::Authority => "authority",
            Role::Pinned => "pinned",
            Role::Evidence => "evidence",
            Role::Matched => "matched",
            Role::Tagged => "tagged",
            Role::Key => "key",
            Role::StatusBar => "status_bar",
        }
    }
}

/// A theme that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThemeError {
    #[error("unknown theme role \"{0}\"; known roles: {known}", known = Role::ALL.map(Role::name).join(", "))]
    UnknownRole(String),
    #[error("unknown colour \"{colour}\" for \"{role}\"; use an ANSI name such as red, light_blue or dark_gray")]
    UnknownColour { role: String, colour: String },
    #[error("unknown modifier \"{modifier}\" for \"{role}\"; use bold, dim, italic, underlined, reversed or crossed_out")]
    UnknownModifier { role: String, modifier: String },
    #[error("\"{0}\" must be a table such as {{ fg = \"red\", modifiers = [\"bold\"] }}")]
    NotATable(String),
    #[error("theme is not valid TOML: {0}")]
    Toml(String),
}

/// A style for every role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    styles: BTreeMap<Role, Style>,
}

impl Theme {
    /// Every role unstyled (for measuring text, and as the base the defaults apply to).
    pub fn plain() -> Theme {
        Theme {
            styles: Role::ALL.iter().map(|&r| (r, Style::default())).collect(),
        }
    }

    /// The embedded default theme.
    pub fn default_theme() -> Result<Theme, ThemeError> {
        let table: toml::Table =
            toml::from_str(DEFAULT_THEME).map_err(|e| ThemeError::Toml(e.to_string()))?;
        Theme::plain().with_overrides(table.get("theme"))
    }

    /// This theme with a `[theme]` table's roles replaced.
    pub fn with_overrides(mut self, theme: Option<&toml::Value>) -> Result<Theme, ThemeError> {
        let Some(theme) = theme else {
            return Ok(self);
        };
        let table = theme
            .as_table()
            .ok_or_else(|| ThemeError::NotATable("theme".into()))?;
        for (name, value) in table {
            let role = Role::ALL
                .into_iter()
                .find(|r| r.name() == name)
                .ok_or_else(|| ThemeError::UnknownRole(name.clone()))?;
            self.styles.insert(role, parse_style(name, value)?);
        }
        Ok(self)
    }

    /// The same theme with colours removed and modifiers kept (for `NO_COLOR`).
    pub fn without_colour(mut self) -> Theme {
        for style in self.styles.values_mut() {
            style.fg = None;
            style.bg = None;
        }
        self
    }

    /// The style of a role.
    pub fn style(&self, role: Role) -> Style {
        self.styles.get(&role).copied().unwrap_or_default()
    }
}

fn parse_style(role: &str, value: &toml::Value) -> Result<Style, ThemeError> {
    let table = value
        .as_table()
        .ok_or_else(|| ThemeError::NotATable(role.into()))?;
    let mut style = Style::default();
    for (key, v) in table {
        match key.as_str() {
            "fg" | "bg" => {
                let name = v.as_str().unwrap_or_default();
                let colour = parse_colour(name).ok_or_else(|| ThemeError::UnknownColour {
                    role: role.into(),
                    colour: v.to_string(),
                })?;
                if key == "fg" {
                    style = style.fg(colour);
                } else {
                    style = style.bg(colour);
                }
            }
            "modifiers" => {
                let list = v
                    .as_array()
                    .ok_or_else(|| ThemeError::NotATable(role.into()))?;
                for m in list {
                    let name = m.as_str().unwrap_or_default();
                    let modifier =
                        parse_modifier(name).ok_or_else(|| ThemeError::UnknownModifier {
                            role: role.into(),
                            modifier: m.to_string(),
                        })?;
                    style = style.add_modifier(modifier);
                }
            }
            _ => return Err(ThemeError::NotATable(role.into())),
        }
    }
    Ok(style)
}

fn parse_colour(name: &str) -> Option<Color> {
    Some(match name {
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" => Color::Gray,
        "dark_gray" => Color::DarkGray,
        "light_red" => Color::LightRed,
        "light_green" => Color::LightGreen,
        "light_yellow" => Color::LightYellow,
        "light_blue" => Color::LightBlue,
        "light_magenta" => Color::LightMagenta,
        "light_cyan" => Color::LightCyan,
        "white" => Color::White,
        "reset" => Color::Reset,
        _ => return None,
    })
}

fn parse_modifier(name: &str) -> Option<Modifier> {
    Some(match name {
        "bold" => Modifier::BOLD,
        "dim" => Modifier::DIM,
        "italic" => Modifier::ITALIC,
        "underlined" => Modifier::UNDERLINED,
        "reversed" => Modifier::REVERSED,
        "crossed_out" => Modifier::CROSSED_OUT,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_theme_parses_and_styles_every_meaningful_role() {
        let theme = Theme::default_theme().unwrap().without_colour();
        for role in [
            Role::Badge,
            Role::Error,
            Role::Selection,
            Role::AddedEmph,
            Role::SecretMask,
            Role::Evidence,
            Role::Matched,
        ] {
            assert!(
                !theme.style(role).add_modifier.is_empty(),
                "{} keeps a modifier",
                role.name()
            );
        }
    }

    #[test]
    fn no_colour_keeps_modifiers_only() {
        let theme = Theme::default_theme().unwrap().without_colour();
        let badge = theme.style(Role::Badge);
        assert_eq!(badge.fg, None);
        assert!(badge.add_modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn user_override_and_errors() {
        let ok: toml::Table = toml::from_str("[theme]\nerror = { fg = \"light_red\" }").unwrap();
        let theme = Theme::default_theme()
            .unwrap()
            .with_overrides(ok.get("theme"))
            .unwrap();
        assert_eq!(theme.style(Role::Error).fg, Some(Color::LightRed));
        let bad = |s: &str| {
            let t: toml::Table = toml::from_str(s).unwrap();
            Theme::default_theme()
                .unwrap()
                .with_overrides(t.get("theme"))
                .unwrap_err()
                .to_string()
        };
        assert!(bad("[theme]\nshiny = {}").starts_with("unknown theme role \"shiny\""));
        assert!(bad("[theme]\nerror = { fg = \"puce\" }").contains("unknown colour"));
        assert!(bad("[theme]\nerror = { modifiers = [\"blink\"] }").contains("unknown modifier"));
    }
}
