//! What a Python program an agent runs imports: the standard library only, or code a repository
//! owns. A "check" that imports only the standard library (a script of `print` calls that
//! demonstrates the fix, a regex over the source, a copy of the changed function) cannot run
//! the repository's code, so it verifies no change there.

/// The top-level modules Python `text` imports (`import a.b, c`, `from a.b import x`; a
/// relative import as `.`) as statements, or `None` when it may run code it does not import by
/// name: `__import__`, `exec`, `compile`, a subprocess, `os.system`, or a standard module that
/// loads modules by name (`unittest` discovering tests, `doctest`, `timeit` with a setup
/// string, `pickle`). Prose that reads like an import ("import the data") names a module too:
/// the error is on the side of a program that could reach the code.
#[must_use]
pub fn imports(text: &str) -> Option<Vec<String>> {
    const RUNS_OTHERS: &[&str] = &[
        "__import__",
        "importlib",
        "exec(",
        "eval(",
        "compile(",
        "execfile",
        "subprocess",
        "os.system",
        "os.popen",
        "os.exec",
        "runpy",
        "spawn",
    ];
    const LOADS_BY_NAME: &[&str] = &[
        "unittest",
        "doctest",
        "pkgutil",
        "zipimport",
        "timeit",
        "trace",
        "cProfile",
        "profile",
        "pdb",
        "code",
        "pickle",
        "marshal",
        "shelve",
        "multiprocessing",
        "concurrent",
    ];
    static IMPORT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        // A statement: at the start of a line, after `;`, or opening an inline program
        // (`python -c "import …`). Not an import quoted inside a string the program searches for.
        regex::Regex::new(r#"(?m)(?:^|;|-c\s*["'])\s*(?:from\s+(\.*[\w.]*)\s+import\b|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))"#)
            .expect("valid regex")
    });
    if RUNS_OTHERS.iter().any(|w| text.contains(w)) {
        return None;
    }
    // Most of an agent's programs are scanned once per run; the regex only where it can match.
    if memchr::memmem::find(text.as_bytes(), b"import").is_none() {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    for c in IMPORT.captures_iter(text) {
        match (c.get(1), c.get(2)) {
            (Some(from), _) if from.as_str().starts_with('.') || from.as_str().is_empty() => out.push(".".to_string()),
            (Some(from), _) => out.push(from.as_str().split('.').next().unwrap_or_default().to_string()),
            (_, Some(names)) => out.extend(names.as_str().split(',').map(|n| n.trim().split('.').next().unwrap_or_default().to_string())),
            _ => {}
        }
    }
    if out.iter().any(|m| LOADS_BY_NAME.contains(&m.as_str())) {
        return None;
    }
    Some(out)
}

/// Whether `module` is a top-level module of Python's standard library (CPython 3.11's
/// `sys.stdlib_module_names`, without the private ones): code no repository owns, so a program
/// that imports only these cannot run the repository's own.
#[must_use]
pub fn stdlib(module: &str) -> bool {
    const STDLIB: &[&str] = &[
        "__future__",
        "abc",
        "aifc",
        "argparse",
        "array",
        "ast",
        "asynchat",
        "asyncio",
        "asyncore",
        "atexit",
        "audioop",
        "base64",
        "bdb",
        "binascii",
        "bisect",
        "builtins",
        "bz2",
        "cProfile",
        "calendar",
        "cgi",
        "cgitb",
        "chunk",
        "cmath",
        "cmd",
        "code",
        "codecs",
        "codeop",
        "collections",
        "colorsys",
        "compileall",
        "concurrent",
        "configparser",
        "contextlib",
        "contextvars",
        "copy",
        "copyreg",
        "crypt",
        "csv",
        "ctypes",
        "curses",
        "dataclasses",
        "datetime",
        "dbm",
        "decimal",
        "difflib",
        "dis",
        "distutils",
        "doctest",
        "email",
        "encodings",
        "ensurepip",
        "enum",
        "errno",
        "faulthandler",
        "fcntl",
        "filecmp",
        "fileinput",
        "fnmatch",
        "fractions",
        "ftplib",
        "functools",
        "gc",
        "genericpath",
        "getopt",
        "getpass",
        "gettext",
        "glob",
        "graphlib",
        "grp",
        "gzip",
        "hashlib",
        "heapq",
        "hmac",
        "html",
        "http",
        "imaplib",
        "imghdr",
        "imp",
        "importlib",
        "inspect",
        "io",
        "ipaddress",
        "itertools",
        "json",
        "keyword",
        "lib2to3",
        "linecache",
        "locale",
        "logging",
        "lzma",
        "mailbox",
        "mailcap",
        "marshal",
        "math",
        "mimetypes",
        "mmap",
        "modulefinder",
        "msilib",
        "msvcrt",
        "multiprocessing",
        "netrc",
        "nis",
        "nntplib",
        "nt",
        "ntpath",
        "nturl2path",
        "numbers",
        "opcode",
        "operator",
        "optparse",
        "os",
        "ossaudiodev",
        "pathlib",
        "pdb",
        "pickle",
        "pickletools",
        "pipes",
        "pkgutil",
        "platform",
        "plistlib",
        "poplib",
        "posix",
        "posixpath",
        "pprint",
        "profile",
        "pstats",
        "pty",
        "pwd",
        "py_compile",
        "pyclbr",
        "pydoc",
        "pydoc_data",
        "pyexpat",
        "queue",
        "quopri",
        "random",
        "re",
        "readline",
        "reprlib",
        "resource",
        "rlcompleter",
        "runpy",
        "sched",
        "secrets",
        "select",
        "selectors",
        "shelve",
        "shlex",
        "shutil",
        "signal",
        "site",
        "smtpd",
        "smtplib",
        "sndhdr",
        "socket",
        "socketserver",
        "spwd",
        "sqlite3",
        "sre_compile",
        "sre_constants",
        "sre_parse",
        "ssl",
        "stat",
        "statistics",
        "string",
        "stringprep",
        "struct",
        "subprocess",
        "sunau",
        "symtable",
        "sys",
        "sysconfig",
        "syslog",
        "tabnanny",
        "tarfile",
        "telnetlib",
        "tempfile",
        "termios",
        "textwrap",
        "threading",
        "time",
        "timeit",
        "tkinter",
        "token",
        "tokenize",
        "tomllib",
        "trace",
        "traceback",
        "tracemalloc",
        "tty",
        "turtle",
        "types",
        "typing",
        "unicodedata",
        "unittest",
        "urllib",
        "uu",
        "uuid",
        "venv",
        "warnings",
        "wave",
        "weakref",
        "webbrowser",
        "winreg",
        "winsound",
        "wsgiref",
        "xdrlib",
        "xml",
        "xmlrpc",
        "zipapp",
        "zipfile",
        "zipimport",
        "zlib",
        "zoneinfo",
    ];
    STDLIB.binary_search(&module).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_read_from_statements_and_inline_programs() {
        let script = "import re, os.path\nfrom django.db import models\nfrom . import local\nprint('from the issue')\n";
        assert_eq!(imports(script).unwrap(), ["re", "os", "django", "."]);
        assert_eq!(imports("print('Summary of the fix')\nprint('1. Import connections')").unwrap(), Vec::<String>::new());
        // An import the program searches the source for is text, not a statement.
        let searches = "import re\nsrc = open('django/db/utils.py').read()\nok = 'from django.db import router' in src\n";
        assert_eq!(imports(searches).unwrap(), ["re"]);
        assert_eq!(imports("python -c \"import sys; from sympy import S; print(S(1))\"").unwrap(), ["sys", "sympy"]);
        assert!(imports("import subprocess\nsubprocess.run(['pytest'])").is_none(), "a program that runs others may reach anything");
        assert!(imports("import unittest\nunittest.TextTestRunner().run(unittest.defaultTestLoader.discover('tests'))").is_none());
        assert!(stdlib("re") && stdlib("unittest") && stdlib("zoneinfo"));
        assert!(!stdlib("django") && !stdlib("sympy") && !stdlib("pytest"));
    }
}
