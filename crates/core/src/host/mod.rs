//! The machine rein runs on, touched carefully: rein's own files are the user's alone
//! (`private_fs`), the file tools' link-proof access (`safe_fs`), finding a program in
//! absolute `PATH` folders only (`program_path`), killing all a child started
//! (`process_tree`), the signals that end rein (`signals`) and a `.git` read as data
//! (`git_pointer`).

pub mod git_pointer;
pub mod private_fs;
pub mod process_tree;
pub mod program_path;
pub mod safe_fs;
pub mod signals;
