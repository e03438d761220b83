//! What the user consented to, kept where the project cannot write, and the guards that
//! compare a project against it: the project MCP servers allowed to run (`trust`), the tools
//! allowed from the approval prompt (`allowed_tools`), what a project told the model when
//! rein last started with it (`guidance`), the host-tool files as the user last saw them
//! (`host_tools`), a file's state as an approval pins it (`file_pin`) and the files that
//! steer what runs outside the sandbox (`steering`).

pub mod allowed_tools;
pub mod file_pin;
pub mod guidance;
pub mod host_tools;
pub mod steering;
pub mod trust;
