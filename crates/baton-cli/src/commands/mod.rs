//! One module per subcommand.

pub mod tokens;
