//! Check every fixture and print its verdict; `--json NAME` prints that fixture's receipt.
use ferromotion_core::check::fixtures::{check_fixture, FIXTURES};
use ferromotion_core::check::CheckOptions;

fn main() -> Result<(), ferromotion_core::FerroError> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--json" {
        println!(
            "{}",
            check_fixture(&args[2], &CheckOptions::default())?.to_json()?
        );
        return Ok(());
    }
    for name in FIXTURES {
        println!(
            "{name:>20}: {}",
            check_fixture(name, &CheckOptions::default())?.summary()
        );
    }
    Ok(())
}
