//! The price table every command that shows a cost uses (`ping`, `sessions stats`): the
//! built-in list with `config.toml`'s `[pricing."<model>"]` tables applied.

use crate::commands::Failure;
use crate::commands::settings::Settings;
use baton_core::pricing::{PriceOverride, PriceTable};

/// The built-in price list with the configuration's overrides; a bad override (a negative
/// price, or a model the list does not know without both `input` and `output`) is an error
/// naming the file and the model.
pub fn price_table(settings: &Settings) -> Result<PriceTable, Failure> {
    let overrides = settings.config.pricing.iter().map(|(model, o)| {
        (
            model.clone(),
            PriceOverride {
                input: o.input,
                output: o.output,
                cache_read: o.cache_read,
                cache_write: o.cache_write,
            },
        )
    });
    PriceTable::with_overrides(overrides)
        .map_err(|e| Failure::BadInput(format!("{}: {e}", settings.config.path.display())))
}
