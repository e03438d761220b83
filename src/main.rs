//! The `rein` command line: parse the flags, install color-eyre, start a front end (or
//! answer a subcommand) through [`cli::run`]; an error is one line on stderr and exit
//! code 2.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    if let Err(e) = color_eyre::install() {
        eprintln!("rein: {e}");
    }
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("rein: {message}");
            ExitCode::from(2)
        }
    }
}
