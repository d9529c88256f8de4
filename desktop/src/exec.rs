//! An entry's Exec line as the argv that starts it, no shell involved: quoting,
//! field codes and the files or URLs they stand for, and finding the program on PATH.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::entry::DesktopEntry;
use crate::target::Target;

/// What turning an entry's Exec into a command can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("{id} has no Exec line, so it can't be started by command (it may be D-Bus activated only); choose another app")]
    NoExec { id: String },
    #[error("the Exec of {id} ({exec:?}) names no program; fix the entry")]
    NoProgram { id: String, exec: String },
    #[error("the Exec of {id} ({exec:?}) has an unterminated double quote; fix the entry")]
    UnterminatedQuote { id: String, exec: String },
    #[error(
        "the Exec of {id} ({exec:?}) has {character:?} outside quotes, which the Desktop Entry \
         spec reserves (it is shell syntax and no shell runs it); quote the argument in the entry"
    )]
    UnquotedReserved {
        id: String,
        exec: String,
        character: char,
    },
    #[error("the Exec of {id} ({exec:?}) has the unknown field code {code}; fix the entry (%% is a literal %)")]
    UnknownFieldCode {
        id: String,
        exec: String,
        code: String,
    },
    #[error("the Exec of {id} ({exec:?}) has the field code {code} inside quotes, which the spec forbids; fix the entry")]
    FieldCodeInQuotes {
        id: String,
        exec: String,
        code: String,
    },
    #[error("the Exec of {id} ({exec:?}) joins {code} to other text; it must be an argument of its own; fix the entry")]
    FieldCodeNotAlone {
        id: String,
        exec: String,
        code: String,
    },
    #[error("the Exec of {id} ({exec:?}) has more than one of %f %F %u %U; fix the entry")]
    SeveralFileFieldCodes { id: String, exec: String },
    #[error("{id} does not accept files (its Exec has no %f %F %u %U); start it without files, or choose an app that opens them")]
    TakesNoFiles { id: String },
    #[error("{id} opens one file per start (%f or %u) and {count} were given; start it once per file (exec_argvs)")]
    OnePerStart { id: String, count: usize },
    #[error("{id} opens local files only (%f or %F), not {url}; download it first, or choose an app that takes URLs")]
    NeedsLocalFile { id: String, url: String },
    #[error("the path {path:?} is not UTF-8 and can't be passed as an argument; rename it")]
    PathNotUtf8 { path: PathBuf },
    #[error("{name} was not found in {}; install it or fix the PATH", list_dirs(.searched))]
    ExecutableNotFound {
        name: String,
        searched: Vec<PathBuf>,
    },
    #[error("{} is not an executable file ({why}); install the program or make it executable (chmod +x)", .path.display())]
    NotExecutable { path: PathBuf, why: String },
}

fn list_dirs(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "an empty PATH".to_string();
    }
    let joined = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    format!("PATH {joined}")
}

/// Characters the Desktop Entry spec says must be quoted in Exec.
const RESERVED: &[char] = &[
    ' ', '\t', '\n', '"', '\'', '\\', '>', '<', '~', '|', '&', ';', '$', '*', '?', '#', '(', ')',
    '`',
];

/// One part of an Exec argument.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    /// A field code's letter.
    Code(char),
}

#[derive(Debug, Clone, Default)]
struct ExecArg {
    pieces: Vec<Piece>,
    /// Some of it was quoted: `""` is an empty argument, not nothing.
    quoted: bool,
}

impl ExecArg {
    fn push_char(&mut self, c: char) {
        match self.pieces.last_mut() {
            Some(Piece::Text(text)) => text.push(c),
            _ => self.pieces.push(Piece::Text(c.to_string())),
        }
    }

    fn is_one_code(&self) -> bool {
        !self.quoted && self.pieces.len() == 1 && matches!(self.pieces[0], Piece::Code(_))
    }
}

/// How an Exec takes files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileCodes {
    None,
    /// `%f`, `%u`: one file per start.
    One {
        urls: bool,
    },
    /// `%F`, `%U`: all files in one start.
    All {
        urls: bool,
    },
}

/// Splits an Exec value (string escapes already undone) into arguments.
fn split_exec(id: &str, exec: &str) -> Result<Vec<ExecArg>, ExecError> {
    let id_exec = || (id.to_string(), exec.to_string());
    let mut args = Vec::new();
    let mut current: Option<ExecArg> = None;
    let mut chars = exec.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => args.extend(current.take()),
            '"' => {
                let arg = current.get_or_insert_with(ExecArg::default);
                arg.quoted = true;
                loop {
                    let (id, exec) = id_exec();
                    match chars.next() {
                        None => return Err(ExecError::UnterminatedQuote { id, exec }),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '`' | '$' | '\\')) => arg.push_char(e),
                            Some(other) => {
                                arg.push_char('\\');
                                arg.push_char(other);
                            }
                            None => return Err(ExecError::UnterminatedQuote { id, exec }),
                        },
                        Some('%') => match chars.next() {
                            Some('%') => arg.push_char('%'),
                            Some(code) => {
                                let code = format!("%{code}");
                                return Err(ExecError::FieldCodeInQuotes { id, exec, code });
                            }
                            None => return Err(ExecError::UnterminatedQuote { id, exec }),
                        },
                        Some(other) => arg.push_char(other),
                    }
                }
            }
            '%' => {
                let arg = current.get_or_insert_with(ExecArg::default);
                match chars.next() {
                    Some('%') => arg.push_char('%'),
                    Some(code @ ('f' | 'F' | 'u' | 'U' | 'i' | 'c' | 'k')) => {
                        arg.pieces.push(Piece::Code(code))
                    }
                    // Deprecated: expand to nothing.
                    Some(code @ ('d' | 'D' | 'n' | 'N' | 'v' | 'm')) => {
                        arg.pieces.push(Piece::Code(code))
                    }
                    other => {
                        let (id, exec) = id_exec();
                        let code = other.map_or("%".to_string(), |c| format!("%{c}"));
                        return Err(ExecError::UnknownFieldCode { id, exec, code });
                    }
                }
            }
            c if RESERVED.contains(&c) => {
                let (id, exec) = id_exec();
                return Err(ExecError::UnquotedReserved {
                    id,
                    exec,
                    character: c,
                });
            }
            c => current.get_or_insert_with(ExecArg::default).push_char(c),
        }
    }
    args.extend(current);
    Ok(args)
}

/// Checks the field codes' placement and answers how the Exec takes files.
fn file_codes(id: &str, exec: &str, args: &[ExecArg]) -> Result<FileCodes, ExecError> {
    let mut found = FileCodes::None;
    for arg in args {
        for piece in &arg.pieces {
            let Piece::Code(code) = *piece else { continue };
            if matches!(code, 'F' | 'U' | 'i') && !arg.is_one_code() {
                return Err(ExecError::FieldCodeNotAlone {
                    id: id.to_string(),
                    exec: exec.to_string(),
                    code: format!("%{code}"),
                });
            }
            let this = match code {
                'f' => FileCodes::One { urls: false },
                'u' => FileCodes::One { urls: true },
                'F' => FileCodes::All { urls: false },
                'U' => FileCodes::All { urls: true },
                _ => continue,
            };
            if found != FileCodes::None {
                return Err(ExecError::SeveralFileFieldCodes {
                    id: id.to_string(),
                    exec: exec.to_string(),
                });
            }
            found = this;
        }
    }
    Ok(found)
}

/// The argv of one start of `entry` with `files` (all of them for `%F`/`%U`, at
/// most one for `%f`/`%u`).
fn expand(
    entry: &DesktopEntry,
    args: &[ExecArg],
    files: &[Target],
) -> Result<Vec<String>, ExecError> {
    let mut argv = Vec::new();
    for arg in args {
        if arg.is_one_code() {
            match arg.pieces[0] {
                Piece::Code('F' | 'U') => {
                    for file in files {
                        argv.push(file.as_arg()?);
                    }
                    continue;
                }
                Piece::Code('i') => {
                    if let Some(icon) = &entry.icon {
                        argv.push("--icon".to_string());
                        argv.push(icon.clone());
                    }
                    continue;
                }
                _ => {}
            }
        }
        let mut text = String::new();
        for piece in &arg.pieces {
            match piece {
                Piece::Text(t) => text.push_str(t),
                Piece::Code('f' | 'u') => {
                    if let Some(file) = files.first() {
                        text.push_str(&file.as_arg()?);
                    }
                }
                Piece::Code('c') => text.push_str(&entry.name),
                Piece::Code('k') => text.push_str(&entry.file.to_string_lossy()),
                Piece::Code(_) => {}
            }
        }
        // An argument of field codes only that expanded to nothing is no argument.
        let codes_only = !arg.quoted && arg.pieces.iter().all(|p| matches!(p, Piece::Code(_)));
        if !(codes_only && text.is_empty()) {
            argv.push(text);
        }
    }
    if argv.first().is_none_or(|program| program.is_empty()) {
        return Err(ExecError::NoProgram {
            id: entry.id.clone(),
            exec: entry.exec.clone().unwrap_or_default(),
        });
    }
    Ok(argv)
}

/// The commands that start `entry` on `targets`, no shell involved: one argv,
/// or one per target when its Exec takes a single file (`%f`, `%u`). Paths go
/// to every file code; URLs only to `%u`/`%U`. Run them in `entry.working_dir`
/// when set, and in a terminal when `entry.terminal`.
pub fn exec_argvs(entry: &DesktopEntry, targets: &[Target]) -> Result<Vec<Vec<String>>, ExecError> {
    let exec = entry.exec.as_deref().ok_or_else(|| ExecError::NoExec {
        id: entry.id.clone(),
    })?;
    let args = split_exec(&entry.id, exec)?;
    let codes = file_codes(&entry.id, exec, &args)?;
    if let FileCodes::One { urls: false } | FileCodes::All { urls: false } = codes {
        if let Some(Target::Url(url)) = targets.iter().find(|t| matches!(t, Target::Url(_))) {
            return Err(ExecError::NeedsLocalFile {
                id: entry.id.clone(),
                url: url.clone(),
            });
        }
    }
    match codes {
        FileCodes::None if !targets.is_empty() => Err(ExecError::TakesNoFiles {
            id: entry.id.clone(),
        }),
        FileCodes::One { .. } if targets.len() > 1 => targets
            .iter()
            .map(|target| expand(entry, &args, std::slice::from_ref(target)))
            .collect(),
        _ => Ok(vec![expand(entry, &args, targets)?]),
    }
}

/// The one command that starts `entry` on `targets`; an entry that opens one
/// file per start given several is an error (see [`exec_argvs`]).
pub fn exec_argv(entry: &DesktopEntry, targets: &[Target]) -> Result<Vec<String>, ExecError> {
    let mut argvs = exec_argvs(entry, targets)?;
    if argvs.len() > 1 {
        return Err(ExecError::OnePerStart {
            id: entry.id.clone(),
            count: targets.len(),
        });
    }
    Ok(argvs.remove(0))
}

/// The path of a program: `name` itself when it has a `/`, else the first
/// match in `path_env` (`$PATH`; unset means `/usr/local/bin:/usr/bin:/bin`),
/// which must be a regular file with an execute bit.
pub fn find_executable(name: &str, path_env: Option<&OsStr>) -> Result<PathBuf, ExecError> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return match executable_problem(&path) {
            None => Ok(path),
            Some(why) => Err(ExecError::NotExecutable { path, why }),
        };
    }
    let path_env = path_env.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    // Empty PATH entries (the current directory, historically) are not searched.
    let searched: Vec<PathBuf> = std::env::split_paths(path_env)
        .filter(|dir| !dir.as_os_str().is_empty())
        .collect();
    if !name.is_empty() {
        for dir in &searched {
            let candidate = dir.join(name);
            if executable_problem(&candidate).is_none() {
                return Ok(candidate);
            }
        }
    }
    Err(ExecError::ExecutableNotFound {
        name: name.to_string(),
        searched,
    })
}

/// Why `path` is not a runnable program, or `None` when it is.
fn executable_problem(path: &Path) -> Option<String> {
    match fs::metadata(path) {
        Err(e) => Some(e.to_string()),
        Ok(meta) if !meta.is_file() => Some("not a regular file".to_string()),
        Ok(meta) if meta.permissions().mode() & 0o111 == 0 => {
            Some("no execute permission".to_string())
        }
        Ok(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tree::{path, strings, url, TempTree};

    /// An entry with an Exec, as if read from /apps/<id>.
    fn entry(exec: &str) -> DesktopEntry {
        DesktopEntry {
            id: "org.example.App.desktop".to_string(),
            file: PathBuf::from("/apps/org.example.App.desktop"),
            data_dir_index: 0,
            name: "Example App".to_string(),
            exec: Some(exec.to_string()),
            try_exec: None,
            working_dir: None,
            icon: Some("org.example.App".to_string()),
            mime_types: Vec::new(),
            no_display: false,
            terminal: false,
            startup_wm_class: None,
        }
    }

    fn argv(exec: &str, targets: &[Target]) -> Result<Vec<String>, ExecError> {
        exec_argv(&entry(exec), targets)
    }

    #[test]
    fn exec_splits_on_spaces_and_undoes_quoting() {
        assert_eq!(
            argv("app  -x   y", &[]).unwrap(),
            strings(&["app", "-x", "y"])
        );
        assert_eq!(
            argv(r#"app "two words" "" --t="A B""#, &[]).unwrap(),
            strings(&["app", "two words", "", "--t=A B"])
        );
        assert_eq!(
            argv(r#"sh -c "echo \"hi\" \$HOME \`x\` a\\b""#, &[]).unwrap(),
            strings(&["sh", "-c", r#"echo "hi" $HOME `x` a\b"#])
        );
        // Reserved characters are fine inside quotes.
        assert_eq!(
            argv(r#"sh -c "ls ~ | wc; echo *?#()<>&'""#, &[]).unwrap(),
            strings(&["sh", "-c", "ls ~ | wc; echo *?#()<>&'"])
        );
    }

    #[test]
    fn exec_string_escapes_apply_before_quoting() {
        // In the file a literal backslash inside quotes takes four, a $ two; \s
        // is a plain space, so it separates arguments.
        let text = r#"[Desktop Entry]
Type=Application
Name=Q
Exec=q "a\\\\b" "\\$x" arg\sspace
"#;
        let e = DesktopEntry::parse("q.desktop", Path::new("/q.desktop"), text).unwrap();
        assert_eq!(e.exec.as_deref(), Some(r#"q "a\\b" "\$x" arg space"#));
        assert_eq!(
            exec_argv(&e, &[]).unwrap(),
            strings(&["q", r"a\b", "$x", "arg", "space"])
        );
    }

    #[test]
    fn exec_errors_on_unquoted_reserved_characters_and_open_quotes() {
        for (exec, character) in [
            ("a > log", '>'),
            ("a|b", '|'),
            ("a $HOME", '$'),
            ("a 'x y'", '\''),
            ("a\\ b", '\\'),
            ("a ~/f", '~'),
            ("a\tb", '\t'),
        ] {
            match argv(exec, &[]) {
                Err(ExecError::UnquotedReserved { character: c, .. }) => {
                    assert_eq!(c, character, "{exec}")
                }
                other => panic!("{exec}: {other:?}"),
            }
        }
        assert!(matches!(
            argv(r#"a "open"#, &[]),
            Err(ExecError::UnterminatedQuote { .. })
        ));
        let message = argv("a > log", &[]).unwrap_err().to_string();
        assert!(message.contains("quote the argument"), "{message}");
    }

    #[test]
    fn field_code_inside_quotes_is_an_error_but_percent_percent_is_a_percent() {
        assert_eq!(
            argv(r#"app "%f""#, &[]).unwrap_err(),
            ExecError::FieldCodeInQuotes {
                id: "org.example.App.desktop".into(),
                exec: r#"app "%f""#.into(),
                code: "%f".into()
            }
        );
        assert!(matches!(
            argv(r#"app "--name=%c""#, &[]),
            Err(ExecError::FieldCodeInQuotes { .. })
        ));
        assert_eq!(
            argv(r#"date "+%%s" 100%%"#, &[]).unwrap(),
            strings(&["date", "+%s", "100%"])
        );
    }

    #[test]
    fn every_field_code_expands() {
        let file = [path("/tmp/a b.txt")];
        assert_eq!(
            argv("app %f", &file).unwrap(),
            strings(&["app", "/tmp/a b.txt"])
        );
        assert_eq!(
            argv("app %F", &file).unwrap(),
            strings(&["app", "/tmp/a b.txt"])
        );
        assert_eq!(
            argv("app %u", &file).unwrap(),
            strings(&["app", "/tmp/a b.txt"])
        );
        assert_eq!(
            argv("app %U", &file).unwrap(),
            strings(&["app", "/tmp/a b.txt"])
        );
        assert_eq!(
            argv("app %i", &[]).unwrap(),
            strings(&["app", "--icon", "org.example.App"])
        );
        let mut no_icon = entry("app %i");
        no_icon.icon = None;
        assert_eq!(exec_argv(&no_icon, &[]).unwrap(), strings(&["app"]));
        assert_eq!(
            argv("app %c", &[]).unwrap(),
            strings(&["app", "Example App"])
        );
        assert_eq!(
            argv("app --name=%c", &[]).unwrap(),
            strings(&["app", "--name=Example App"])
        );
        assert_eq!(
            argv("app %k", &[]).unwrap(),
            strings(&["app", "/apps/org.example.App.desktop"])
        );
        assert_eq!(argv("app 50%%", &[]).unwrap(), strings(&["app", "50%"]));
        assert_eq!(
            argv("app %d %D %n %N %v %m -x", &[]).unwrap(),
            strings(&["app", "-x"])
        );
        assert_eq!(
            argv("app --file=%f", &file).unwrap(),
            strings(&["app", "--file=/tmp/a b.txt"])
        );
        // No targets: the file codes expand to nothing.
        assert_eq!(argv("app %U -x", &[]).unwrap(), strings(&["app", "-x"]));
        assert_eq!(
            argv("app --file=%f", &[]).unwrap(),
            strings(&["app", "--file="])
        );
    }

    #[test]
    fn unknown_or_misplaced_field_codes_are_errors() {
        assert!(matches!(
            argv("app %x", &[]),
            Err(ExecError::UnknownFieldCode { code, .. }) if code == "%x"
        ));
        assert!(matches!(
            argv("app %", &[]),
            Err(ExecError::UnknownFieldCode { code, .. }) if code == "%"
        ));
        assert!(matches!(
            argv("app --files=%F", &[]),
            Err(ExecError::FieldCodeNotAlone { code, .. }) if code == "%F"
        ));
        assert!(matches!(
            argv("app -x%i", &[]),
            Err(ExecError::FieldCodeNotAlone { code, .. }) if code == "%i"
        ));
        assert!(matches!(
            argv("app %f %u", &[]),
            Err(ExecError::SeveralFileFieldCodes { .. })
        ));
    }

    #[test]
    fn several_files_start_once_per_file_with_f_and_once_with_all_for_big_f() {
        let files = [path("/a.txt"), path("/b.txt")];
        assert_eq!(
            exec_argvs(&entry("app -o %f"), &files).unwrap(),
            vec![
                strings(&["app", "-o", "/a.txt"]),
                strings(&["app", "-o", "/b.txt"])
            ]
        );
        assert_eq!(
            exec_argvs(&entry("app %F -o"), &files).unwrap(),
            vec![strings(&["app", "/a.txt", "/b.txt", "-o"])]
        );
        assert_eq!(
            exec_argvs(&entry("app %u"), &[url("https://a"), path("/b")]).unwrap(),
            vec![strings(&["app", "https://a"]), strings(&["app", "/b"])]
        );
        assert_eq!(
            exec_argv(&entry("app %f"), &files).unwrap_err(),
            ExecError::OnePerStart {
                id: "org.example.App.desktop".into(),
                count: 2
            }
        );
    }

    #[test]
    fn urls_go_to_u_codes_only() {
        assert_eq!(
            argv(
                "browser %U",
                &[url("https://example.org/?q=a b"), path("/x.html")]
            )
            .unwrap(),
            strings(&["browser", "https://example.org/?q=a b", "/x.html"])
        );
        assert!(matches!(
            argv("viewer %F", &[url("https://example.org/a.png")]),
            Err(ExecError::NeedsLocalFile { url, .. }) if url == "https://example.org/a.png"
        ));
        assert!(matches!(
            argv("viewer %f", &[url("https://example.org/a.png")]),
            Err(ExecError::NeedsLocalFile { .. })
        ));
    }

    #[test]
    fn targets_without_a_file_code_are_an_error() {
        let err = argv("gtk4-demo", &[path("/a.txt")]).unwrap_err();
        assert_eq!(
            err,
            ExecError::TakesNoFiles {
                id: "org.example.App.desktop".into()
            }
        );
        assert!(err.to_string().contains("does not accept files"));
        assert_eq!(argv("gtk4-demo", &[]).unwrap(), strings(&["gtk4-demo"]));
    }

    #[test]
    fn missing_or_empty_exec_is_an_error() {
        let mut e = entry("x");
        e.exec = None;
        assert!(matches!(exec_argv(&e, &[]), Err(ExecError::NoExec { .. })));
        assert!(matches!(argv("%f", &[]), Err(ExecError::NoProgram { .. })));
        assert!(matches!(
            argv(r#""""#, &[]),
            Err(ExecError::NoProgram { .. })
        ));
    }

    #[test]
    fn find_executable_searches_path_and_checks_the_file() {
        let tree = TempTree::new("exe");
        let bin1 = tree.root.join("bin1");
        let bin2 = tree.root.join("bin2");
        tree.write("bin1/tool", "not executable");
        let tool = tree.executable("bin2/tool");
        fs::create_dir_all(bin1.join("dir-not-file")).unwrap();
        let path_env = std::env::join_paths([&bin1, &bin2]).unwrap();
        assert_eq!(find_executable("tool", Some(&path_env)).unwrap(), tool);
        assert_eq!(find_executable(tool.to_str().unwrap(), None).unwrap(), tool);
        match find_executable("missing-tool", Some(&path_env)) {
            Err(e @ ExecError::ExecutableNotFound { .. }) => {
                let message = e.to_string();
                assert!(message.contains("missing-tool"), "{message}");
                assert!(message.contains(bin1.to_str().unwrap()), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            find_executable("dir-not-file", Some(&path_env)),
            Err(ExecError::ExecutableNotFound { .. })
        ));
        let plain = tree.root.join("bin1/tool");
        assert!(matches!(
            find_executable(plain.to_str().unwrap(), Some(&path_env)),
            Err(ExecError::NotExecutable { why, .. }) if why.contains("execute")
        ));
    }
}
