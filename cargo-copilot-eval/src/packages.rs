//! The package selection of a suite run and of `drift` (`-p/--package`, `--workspace`,
//! `--manifest-path`, `--test`): one set of options, one reading into core's build options.

use std::path::PathBuf;

use copilot_eval_core::suite::list;

/// Which packages to build and test.
#[derive(clap::Args)]
pub(crate) struct PackageArgs {
    /// Package(s) to test (repeatable).
    #[arg(
        short = 'p',
        long = "package",
        value_name = "PKG",
        conflicts_with = "workspace"
    )]
    packages: Vec<String>,
    /// Test every package of the workspace.
    #[arg(long)]
    workspace: bool,
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH")]
    manifest_path: Option<PathBuf>,
    /// Only the evals of this integration test file (`tests/NAME.rs`), as `cargo test --test
    /// NAME` selects it (repeatable).
    #[arg(long = "test", value_name = "NAME")]
    test_targets: Vec<String>,
}

impl PackageArgs {
    /// `--manifest-path`, as given.
    pub(crate) fn manifest_path(&self) -> Option<&std::path::Path> {
        self.manifest_path.as_deref()
    }

    /// The build options of this selection: the workspace, the named packages, else Cargo's
    /// default.
    pub(crate) fn build_options(self) -> list::BuildOptions {
        let packages = if self.workspace {
            list::PackageSelection::Workspace
        } else if !self.packages.is_empty() {
            list::PackageSelection::Packages(self.packages)
        } else {
            list::PackageSelection::Default
        };
        let mut options = list::BuildOptions::new(self.manifest_path, packages);
        options.test_targets = self.test_targets;
        options
    }
}
