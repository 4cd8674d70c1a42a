//! `--color auto|always|never`: when diagnostics on stderr carry ANSI colour. Owns the choice
//! and its precedence over the environment: `always` and `never` win over everything; `auto`
//! (the default) colours only a terminal, never when `NO_COLOR` is set (non-empty), and also a
//! pipe when `CLICOLOR_FORCE` is set (non-zero) — `NO_COLOR` wins when both are. The styles
//! themselves are [`crate::scenario::Paint`]'s; every coloured write goes through `anstream`,
//! whose global choice this sets.

/// The value of `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colour a terminal, following `NO_COLOR` and `CLICOLOR_FORCE`.
    #[default]
    Auto,
    /// Always colour, even a pipe or a file, whatever the environment says.
    Always,
    /// Never colour.
    Never,
}

impl ColorWhen {
    /// Makes this the choice of every `anstream` stream of the process.
    pub fn apply(self) {
        let choice = match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        };
        choice.write_global();
    }
}
