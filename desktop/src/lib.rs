//! Launching apps and opening files the way a Linux desktop does: desktop entries
//! found by id or name, their Exec turned into an argv, and xdg-open's default handlers.

mod applications;
mod base_dirs;
mod entry;
mod exec;
mod key_file;
mod mime_apps;
mod mime_types;
mod target;
#[cfg(test)]
mod test_tree;

pub use applications::{Applications, LookupError};
pub use base_dirs::XdgDirs;
pub use entry::DesktopEntry;
pub use exec::{exec_argv, exec_argvs, find_executable, ExecError};
pub use mime_types::MimeDatabase;
pub use target::Target;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tree::path;
    use std::path::{Path, PathBuf};

    #[test]
    fn real_gtk_demo_entry_parses_and_its_program_is_on_path() {
        let system = XdgDirs {
            data_home: PathBuf::from("/nonexistent/wayrig-data-home"),
            data_dirs: vec![PathBuf::from("/usr/share")],
            config_home: PathBuf::from("/nonexistent/wayrig-config-home"),
            config_dirs: Vec::new(),
        };
        if !Path::new("/usr/share/applications/org.gtk.Demo4.desktop").exists() {
            println!("skipped: /usr/share/applications/org.gtk.Demo4.desktop is not installed (gtk-4-examples)");
            return;
        }
        let apps = Applications::load(&system);
        let demo = apps.by_id("org.gtk.Demo4").unwrap();
        let argv = exec_argv(demo, &[]).unwrap();
        let path_env = std::env::var_os("PATH");
        let program = find_executable(&argv[0], path_env.as_deref()).unwrap();
        assert!(program.ends_with(&argv[0]), "{program:?}");
        assert_eq!(apps.for_app_id("org.gtk.Demo4").unwrap().id, demo.id);
        if Path::new("/usr/share/mime/globs2").exists() {
            let mimes = MimeDatabase::load(&system);
            assert_eq!(mimes.mime_type_of(&path("/x/photo.png")), "image/png");
            assert_eq!(mimes.mime_type_of(&path("/x/page.html")), "text/html");
        }
    }
}
