//! Check every example and print its verdict; `--json NAME` prints that example's receipt.
use ferromotion_core::check::examples::{check_example, EXAMPLES};
use ferromotion_core::check::CheckOptions;

fn main() -> Result<(), ferromotion_core::FerroError> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--json" {
        println!(
            "{}",
            check_example(&args[2], &CheckOptions::default())?.to_json()?
        );
        return Ok(());
    }
    for name in EXAMPLES {
        println!(
            "{name:>20}: {}",
            check_example(name, &CheckOptions::default())?.summary()
        );
    }
    Ok(())
}
