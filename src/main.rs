//! The `rein` command line: parse the flags, install color-eyre, start a front end (or
//! answer a subcommand) through [`cli::run`]; an error is one line on stderr and exit
//! code 2.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    if let Err(e) = color_eyre::install() {
        cli::out::errln!("rein: {e}");
    }
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        // Output that could not be written (not a closed pipe: that ends quietly) fails
        // a command that would have succeeded.
        Ok(code) if cli::out::failed() && code == ExitCode::SUCCESS => ExitCode::FAILURE,
        Ok(code) => code,
        Err(message) => {
            cli::out::errln!("rein: {message}");
            ExitCode::from(2)
        }
    }
}
