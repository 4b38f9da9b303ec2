//! The assignments and calls of a Python program, read without tree-sitter.
//!
//! `shell::python_writes` reads an agent's inline programs (`python -c`, here-docs, scripts it
//! writes) for the files they write. On a real 500-trajectory SWE-bench run tree-sitter's parse
//! of those programs was a tenth of all of classify's time, though what the reading needs of a
//! tree is small: the calls, the assignments to a name, and of those only strings, names,
//! attributes, arguments and where each lies. This reader finds exactly those nodes, with the
//! byte ranges tree-sitter-python gives them, and [`PyNode`] lets one reading serve either tree.
//!
//! It is a fast path, not a second parser with opinions of its own: it reads a strict subset of
//! Python, what it knows tree-sitter-python parses without an error and to the same nodes, and
//! gives up on anything else, which tree-sitter then parses as before. Besides syntax errors
//! (whose recovery may put calls anywhere) it gives up where tree-sitter reads Python otherwise
//! or is easily led astray: an unexpected indent, a dedent to no enclosing level, `async`,
//! `await`, `yield`, `:=`, `type` statements, Python 2 `print` and `exec` statements, non-ASCII
//! outside strings and comments, a lone `\r`, a NUL, string prefixes Python rejects, f-strings
//! in f-string fields and fields holding a backslash, a comment, a newline, the enclosing quote,
//! a lambda or a nested field; `*` in a subscript, `*` before a call, parenthesized `with`
//! items, chained subscripts and slices in annotations, a line continuation or a line indented
//! less than its block between brackets, a comment indented less than its block after a
//! decorator, and a line ending in a list (`a, b`) before one starting with a bracket. The
//! differential tests in this module hold it to tree-sitter's nodes.

use std::ops::Range;

use tree_sitter::Node as TsNode;

/// The reader met something it does not read as tree-sitter would: tree-sitter reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiveUp;

type Res<T> = Result<T, GiveUp>;

/// A node of a Python syntax tree as `python_writes` reads it: tree-sitter's ([`TreeNode`]) or
/// this reader's ([`ReadNode`]), which for the programs it reads are the same nodes. Kinds and
/// field names are tree-sitter-python's; the reader's nodes have only the kinds read
/// (`identifier`, `string`, `call`, `attribute`, `argument_list`, `keyword_argument`,
/// `list_splat`, `dictionary_splat`, `assignment`), any other expression is `other`.
pub(crate) trait PyNode<'s>: Copy {
    fn kind(self) -> &'s str;
    fn range(self) -> Range<usize>;
    fn text(self) -> &'s str;
    fn field(self, name: &'static str) -> Option<Self>;
    /// Named children, comments included.
    fn named_children(self) -> Vec<Self>;
    /// A string with an f-string replacement field.
    fn has_interpolation(self) -> bool;
}

/// A tree-sitter node with the source it spans.
#[derive(Clone, Copy)]
pub(crate) struct TreeNode<'t> {
    pub node: TsNode<'t>,
    pub src: &'t str,
}

/// The assignments and calls of tree-sitter's `tree` of `src`, in source order: a preorder walk
/// visits nodes by start, an enclosing call (`open(p).write(s)`) before the one it encloses.
pub(crate) fn tree_nodes<'t>(tree: &'t tree_sitter::Tree, src: &'t str) -> Vec<TreeNode<'t>> {
    let mut nodes = Vec::new();
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        if matches!(node.kind(), "assignment" | "call") {
            nodes.push(TreeNode { node, src });
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    nodes
}

impl<'t> PyNode<'t> for TreeNode<'t> {
    fn kind(self) -> &'t str {
        self.node.kind()
    }

    fn range(self) -> Range<usize> {
        self.node.byte_range()
    }

    fn text(self) -> &'t str {
        self.src.get(self.node.byte_range()).unwrap_or("")
    }

    fn field(self, name: &'static str) -> Option<Self> {
        self.node.child_by_field_name(name).map(|node| Self { node, src: self.src })
    }

    fn named_children(self) -> Vec<Self> {
        let mut cursor = self.node.walk();
        self.node.named_children(&mut cursor).map(|node| Self { node, src: self.src }).collect()
    }

    fn has_interpolation(self) -> bool {
        let mut cursor = self.node.walk();
        self.node.children(&mut cursor).any(|c| c.kind() == "interpolation")
    }
}

/// What the reader found: its nodes, and of them the assignments and the calls.
pub(crate) struct Read<'s> {
    src: &'s str,
    nodes: Vec<Node>,
    children: Vec<u32>,
    calls: Vec<u32>,
    assignments: Vec<u32>,
}

impl<'s> Read<'s> {
    /// The assignments, then the calls in the order of a preorder walk of the tree: by start,
    /// an enclosing call (`open(p).write(s)`) before the one it encloses.
    pub(crate) fn nodes(&self) -> Vec<ReadNode<'_, 's>> {
        self.assignments.iter().chain(&self.calls).map(|&id| ReadNode { read: self, id }).collect()
    }
}

/// A node the reader found.
#[derive(Clone, Copy)]
pub(crate) struct ReadNode<'r, 's> {
    read: &'r Read<'s>,
    id: u32,
}

impl<'r, 's> ReadNode<'r, 's> {
    fn node(self) -> Node {
        self.read.nodes[self.id as usize]
    }

    fn at(self, id: u32) -> Option<Self> {
        (id != NONE).then_some(Self { read: self.read, id })
    }
}

impl<'s> PyNode<'s> for ReadNode<'_, 's> {
    fn kind(self) -> &'s str {
        match self.node().kind {
            Kind::Identifier => "identifier",
            Kind::String => "string",
            Kind::Call => "call",
            Kind::Attribute => "attribute",
            Kind::Arguments => "argument_list",
            Kind::KeywordArgument => "keyword_argument",
            Kind::ListSplat => "list_splat",
            Kind::DictionarySplat => "dictionary_splat",
            Kind::Assignment => "assignment",
            Kind::Other => "other",
        }
    }

    fn range(self) -> Range<usize> {
        let n = self.node();
        n.start as usize..n.end as usize
    }

    fn text(self) -> &'s str {
        let src: &'s str = self.read.src;
        src.get(self.range()).unwrap_or("")
    }

    fn field(self, name: &'static str) -> Option<Self> {
        let n = self.node();
        let id = match (n.kind, name) {
            (Kind::Call, "function") | (Kind::Attribute, "object") | (Kind::KeywordArgument, "name") | (Kind::Assignment, "left") => n.a,
            (Kind::Call, "arguments") | (Kind::Attribute, "attribute") | (Kind::KeywordArgument, "value") | (Kind::Assignment, "right") => {
                n.b
            }
            _ => NONE,
        };
        self.at(id)
    }

    fn named_children(self) -> Vec<Self> {
        let n = self.node();
        if n.kind != Kind::Arguments {
            return Vec::new();
        }
        self.read.children[n.a as usize..(n.a + n.b) as usize].iter().map(|&id| Self { read: self.read, id }).collect()
    }

    fn has_interpolation(self) -> bool {
        self.node().interpolated
    }
}

/// The assignments and calls of `src`, or [`GiveUp`] when it is not sure to find the ones
/// tree-sitter-python does.
///
/// # Errors
/// [`GiveUp`] on anything outside the subset of Python it reads (the module's documentation).
pub(crate) fn read(src: &str) -> Res<Read<'_>> {
    if u32::try_from(src.len()).is_err() {
        return Err(GiveUp);
    }
    let mut lexer = Lexer { b: src.as_bytes(), i: 0, toks: Vec::with_capacity(src.len() / 4), brackets: Vec::new(), floor: 0 };
    lexer.module()?;
    let mut p = Parser {
        src,
        toks: lexer.toks,
        p: 0,
        nodes: Vec::new(),
        children: Vec::new(),
        scratch: Vec::new(),
        calls: Vec::new(),
        assignments: Vec::new(),
        interpolation: 0,
        annotation: 0,
        depth: 0,
    };
    while p.peek() != Tk::Eof {
        p.statement()?;
    }
    let nodes = p.nodes;
    let mut calls = p.calls;
    calls.sort_by_key(|&c| {
        let n = nodes[c as usize];
        (n.start, std::cmp::Reverse(n.end))
    });
    Ok(Read { src, nodes, children: p.children, calls, assignments: p.assignments })
}

const NONE: u32 = u32::MAX;
/// Nesting (brackets, unary operators, blocks) past which the reader gives up rather than
/// recurse on: the input is untrusted, and real programs nest a few levels.
const MAX_DEPTH: u32 = 48;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Identifier,
    String,
    Call,
    Attribute,
    Arguments,
    KeywordArgument,
    ListSplat,
    DictionarySplat,
    Assignment,
    Other,
}

/// `a`, `b`: a call's function and arguments, an attribute's object and name, a keyword
/// argument's name and value, an assignment's left and right ([`NONE`] when absent); for
/// arguments the first of their children in [`Read::children`] and how many.
#[derive(Clone, Copy, Debug)]
struct Node {
    kind: Kind,
    interpolated: bool,
    start: u32,
    end: u32,
    a: u32,
    b: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kw {
    False,
    None,
    True,
    And,
    As,
    Assert,
    Async,
    Await,
    Break,
    Class,
    Continue,
    Def,
    Del,
    Elif,
    Else,
    Except,
    Finally,
    For,
    From,
    Global,
    If,
    Import,
    In,
    Is,
    Lambda,
    Nonlocal,
    Not,
    Or,
    Pass,
    Raise,
    Return,
    Try,
    While,
    With,
    Yield,
}

/// tree-sitter-python's reserved words: never an identifier.
fn keyword(word: &[u8]) -> Option<Kw> {
    Some(match word {
        b"False" => Kw::False,
        b"None" => Kw::None,
        b"True" => Kw::True,
        b"and" => Kw::And,
        b"as" => Kw::As,
        b"assert" => Kw::Assert,
        b"async" => Kw::Async,
        b"await" => Kw::Await,
        b"break" => Kw::Break,
        b"class" => Kw::Class,
        b"continue" => Kw::Continue,
        b"def" => Kw::Def,
        b"del" => Kw::Del,
        b"elif" => Kw::Elif,
        b"else" => Kw::Else,
        b"except" => Kw::Except,
        b"finally" => Kw::Finally,
        b"for" => Kw::For,
        b"from" => Kw::From,
        b"global" => Kw::Global,
        b"if" => Kw::If,
        b"import" => Kw::Import,
        b"in" => Kw::In,
        b"is" => Kw::Is,
        b"lambda" => Kw::Lambda,
        b"nonlocal" => Kw::Nonlocal,
        b"not" => Kw::Not,
        b"or" => Kw::Or,
        b"pass" => Kw::Pass,
        b"raise" => Kw::Raise,
        b"return" => Kw::Return,
        b"try" => Kw::Try,
        b"while" => Kw::While,
        b"with" => Kw::With,
        b"yield" => Kw::Yield,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Semi,
    Dot,
    Assign,
    Arrow,
    Ellipsis,
    At,
    Star,
    DStar,
    Slash,
    Plus,
    Minus,
    Tilde,
    AugAssign,
    Compare,
    /// `//`, `%`, `|`, `&`, `^`, `<<`, `>>`.
    Binary,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tk {
    Name,
    Kw(Kw),
    Number,
    /// A string without replacement fields.
    Str,
    /// An f-string with replacement fields: its prefix and quote, then for each field
    /// [`Tk::InterpOpen`], tokens, [`Tk::InterpClose`]; then [`Tk::FEnd`], its closing quote.
    FStart,
    FEnd,
    InterpOpen,
    InterpClose,
    /// `!r`, `!s`, `!a` in a replacement field.
    Conv,
    /// A format spec without nested fields, from its `:`.
    Spec,
    Op(Op),
    Newline,
    Indent,
    Dedent,
    Eof,
}

#[derive(Clone, Copy, Debug)]
struct Tok {
    t: Tk,
    start: u32,
    end: u32,
}

struct Lexer<'s> {
    b: &'s [u8],
    i: usize,
    toks: Vec<Tok>,
    /// Open brackets, innermost last.
    brackets: Vec<u8>,
    /// Brackets open outside the replacement field being read: not its to close.
    floor: usize,
}

#[allow(clippy::cast_possible_truncation)] // `read` checks the source fits in u32.
impl Lexer<'_> {
    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    fn push(&mut self, t: Tk, start: usize, end: usize) {
        self.toks.push(Tok { t, start: start as u32, end: end as u32 });
    }

    /// Tokens with Python's NEWLINE, INDENT and DEDENT, indentation measured as
    /// tree-sitter-python's scanner does (a tab is 8 columns more); an indent must follow a
    /// line that opens a block (the parser checks), a dedent return to an enclosing level.
    fn module(&mut self) -> Res<()> {
        let mut indents: Vec<u32> = vec![0];
        let mut line_start = true;
        // Where the current logical line's tokens start (to tell a decorator's line).
        let mut first = 0;
        loop {
            if line_start {
                let decorated = self.toks.get(first).is_some_and(|t| t.t == Tk::Op(Op::At));
                let mut col = 0u32;
                loop {
                    match self.b.get(self.i) {
                        Some(b' ') => col += 1,
                        Some(b'\t') => col += 8,
                        Some(b'\n') => col = 0,
                        Some(b'\r') if self.at(self.i + 1) == b'\n' => {
                            col = 0;
                            self.i += 1;
                        }
                        // A comment line indented less than the block that follows a
                        // decorator ends the block to tree-sitter's scanner: an error.
                        Some(b'#') if col < *indents.last().unwrap_or(&0) && decorated => return Err(GiveUp),
                        Some(b'#') => {
                            self.comment()?;
                            continue;
                        }
                        None => break,
                        Some(c) if c.is_ascii_whitespace() || *c == b'\\' => return Err(GiveUp),
                        Some(_) => break,
                    }
                    self.i += 1;
                }
                if self.i == self.b.len() {
                    break;
                }
                let top = *indents.last().unwrap_or(&0);
                if col > top {
                    indents.push(col);
                    self.push(Tk::Indent, self.i, self.i);
                } else {
                    while col < *indents.last().unwrap_or(&0) {
                        indents.pop();
                        self.push(Tk::Dedent, self.i, self.i);
                    }
                    if col != *indents.last().unwrap_or(&0) {
                        return Err(GiveUp);
                    }
                }
                first = self.toks.len();
                line_start = false;
            }
            match self.b.get(self.i) {
                None => break,
                Some(b' ' | b'\t') => self.i += 1,
                Some(b'\n') => self.newline(1, &mut line_start, *indents.last().unwrap_or(&0))?,
                Some(b'\r') if self.at(self.i + 1) == b'\n' => self.newline(2, &mut line_start, *indents.last().unwrap_or(&0))?,
                Some(b'#') => self.comment()?,
                // Between brackets tree-sitter makes a line continuation a named node among
                // the arguments python_writes counts.
                Some(b'\\') if !self.brackets.is_empty() => return Err(GiveUp),
                Some(b'\\') => {
                    self.i += match (self.at(self.i + 1), self.at(self.i + 2)) {
                        (b'\n', _) => 2,
                        (b'\r', b'\n') => 3,
                        _ => return Err(GiveUp),
                    };
                    if self.i == self.b.len() {
                        return Err(GiveUp);
                    }
                }
                Some(_) => self.token(None)?,
            }
        }
        if !self.brackets.is_empty() {
            return Err(GiveUp);
        }
        let end = self.b.len();
        if !line_start {
            self.push(Tk::Newline, end, end);
        }
        for _ in 1..indents.len() {
            self.push(Tk::Dedent, end, end);
        }
        self.push(Tk::Eof, end, end);
        Ok(())
    }

    /// A line break: the end of a logical line, or whitespace between brackets. There
    /// tree-sitter's scanner ends the block a line indented less than it starts (a DEDENT, an
    /// error) unless a closing bracket or a string could come next; rather than know which
    /// tokens those are, such a line gives up.
    fn newline(&mut self, len: usize, line_start: &mut bool, block: u32) -> Res<()> {
        self.i += len;
        if self.brackets.is_empty() {
            self.push(Tk::Newline, self.i - len, self.i - len);
            *line_start = true;
            return Ok(());
        }
        // Blank lines are stepped over here, once (a line at a time would be quadratic).
        let mut col = 0;
        loop {
            match self.at(self.i) {
                b' ' => col += 1,
                b'\t' => col += 8,
                b'\n' => col = 0,
                b'\r' if self.at(self.i + 1) == b'\n' => col = 0,
                _ => break,
            }
            self.i += 1;
        }
        if col < block && self.i < self.b.len() { Err(GiveUp) } else { Ok(()) }
    }

    /// Steps to the end of a comment's line.
    fn comment(&mut self) -> Res<()> {
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\n' => break,
                b'\r' if self.at(self.i + 1) == b'\n' => break,
                b'\r' | 0 => return Err(GiveUp),
                _ => self.i += 1,
            }
        }
        Ok(())
    }

    /// One token at `self.i`, not whitespace; `quote` is the enclosing f-string's quote inside
    /// a replacement field.
    fn token(&mut self, quote: Option<u8>) -> Res<()> {
        let s = self.i;
        let c = self.b[s];
        let op = |len: usize, op: Op| (len, Tk::Op(op));
        let next = self.at(s + 1);
        let (len, t) = match c {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let mut j = s + 1;
                while self.at(j).is_ascii_alphanumeric() || self.at(j) == b'_' {
                    j += 1;
                }
                match self.at(j) {
                    b'\'' | b'"' => return self.string(s, j, quote),
                    c if !c.is_ascii() => return Err(GiveUp),
                    _ => {}
                }
                (j - s, keyword(&self.b[s..j]).map_or(Tk::Name, Tk::Kw))
            }
            b'0'..=b'9' => (self.number(s)?, Tk::Number),
            b'.' if next.is_ascii_digit() => (self.number(s)?, Tk::Number),
            b'.' if next == b'.' && self.at(s + 2) == b'.' => op(3, Op::Ellipsis),
            b'.' => op(1, Op::Dot),
            b'\'' | b'"' => return self.string(s, s, quote),
            b'(' | b'[' | b'{' => {
                if self.brackets.len() > MAX_DEPTH as usize {
                    return Err(GiveUp);
                }
                self.brackets.push(c);
                op(
                    1,
                    match c {
                        b'(' => Op::LParen,
                        b'[' => Op::LBrack,
                        _ => Op::LBrace,
                    },
                )
            }
            b')' | b']' | b'}' => {
                let open = if self.brackets.len() > self.floor { self.brackets.pop() } else { None };
                match (open, c) {
                    (Some(b'('), b')') => op(1, Op::RParen),
                    (Some(b'['), b']') => op(1, Op::RBrack),
                    (Some(b'{'), b'}') => op(1, Op::RBrace),
                    _ => return Err(GiveUp),
                }
            }
            b',' => op(1, Op::Comma),
            b';' => op(1, Op::Semi),
            b':' if next == b'=' => return Err(GiveUp),
            b':' => op(1, Op::Colon),
            b'~' => op(1, Op::Tilde),
            b'=' if next == b'=' => op(2, Op::Compare),
            b'=' => op(1, Op::Assign),
            b'!' if next == b'=' => op(2, Op::Compare),
            b'+' | b'%' | b'&' | b'|' | b'^' | b'@' if next == b'=' => op(2, Op::AugAssign),
            b'+' => op(1, Op::Plus),
            b'@' => op(1, Op::At),
            b'%' | b'&' | b'|' | b'^' => op(1, Op::Binary),
            b'-' if next == b'=' => op(2, Op::AugAssign),
            b'-' if next == b'>' => op(2, Op::Arrow),
            b'-' => op(1, Op::Minus),
            b'*' if next == b'*' && self.at(s + 2) == b'=' => op(3, Op::AugAssign),
            b'*' if next == b'*' => op(2, Op::DStar),
            b'*' if next == b'=' => op(2, Op::AugAssign),
            b'*' => op(1, Op::Star),
            b'/' if next == b'/' && self.at(s + 2) == b'=' => op(3, Op::AugAssign),
            b'/' if next == b'/' => op(2, Op::Binary),
            b'/' if next == b'=' => op(2, Op::AugAssign),
            b'/' => op(1, Op::Slash),
            b'<' | b'>' if next == c && self.at(s + 2) == b'=' => op(3, Op::AugAssign),
            b'<' | b'>' if next == c => op(2, Op::Binary),
            b'<' if next == b'>' => return Err(GiveUp),
            b'<' | b'>' if next == b'=' => op(2, Op::Compare),
            b'<' | b'>' => op(1, Op::Compare),
            _ => return Err(GiveUp),
        };
        self.push(t, s, s + len);
        self.i = s + len;
        Ok(())
    }

    /// A number Python reads (tree-sitter's integer and float take more), not run into a name.
    fn number(&self, s: usize) -> Res<usize> {
        let digits = |mut i: usize, ok: fn(u8) -> bool| -> Res<usize> {
            if !ok(self.at(i)) {
                return Err(GiveUp);
            }
            loop {
                while ok(self.at(i)) {
                    i += 1;
                }
                if self.at(i) != b'_' {
                    return Ok(i);
                }
                i += 1;
                if !ok(self.at(i)) {
                    return Err(GiveUp);
                }
            }
        };
        let dec = |c: u8| c.is_ascii_digit();
        let mut i = s;
        if self.at(i) == b'0' && matches!(self.at(i + 1), b'x' | b'X' | b'o' | b'O' | b'b' | b'B') {
            let ok: fn(u8) -> bool = match self.at(i + 1) {
                b'x' | b'X' => |c| c.is_ascii_hexdigit(),
                b'o' | b'O' => |c| (b'0'..=b'7').contains(&c),
                _ => |c| c == b'0' || c == b'1',
            };
            i += 2;
            if self.at(i) == b'_' {
                i += 1;
            }
            i = digits(i, ok)?;
        } else {
            if self.at(i) != b'.' {
                i = digits(i, dec)?;
            }
            if self.at(i) == b'.' {
                i += 1;
                if dec(self.at(i)) {
                    i = digits(i, dec)?;
                }
            }
            if matches!(self.at(i), b'e' | b'E') {
                i += 1;
                if matches!(self.at(i), b'+' | b'-') {
                    i += 1;
                }
                i = digits(i, dec)?;
            }
            if matches!(self.at(i), b'j' | b'J') {
                i += 1;
            }
        }
        let after = self.at(i);
        if after.is_ascii_alphanumeric() || after == b'_' || after == b'.' || !after.is_ascii() {
            return Err(GiveUp);
        }
        Ok(i - s)
    }

    /// A string literal from its prefix at `s` and its quote at `q_at`, as tree-sitter-python's
    /// scanner ends it; `outer` is the enclosing f-string's quote for a string inside a
    /// replacement field.
    fn string(&mut self, s: usize, q_at: usize, outer: Option<u8>) -> Res<()> {
        let (mut raw, mut format) = (false, false);
        let prefix = &self.b[s..q_at];
        let valid = match prefix.len() {
            0 => true,
            1 => matches!(prefix[0].to_ascii_lowercase(), b'r' | b'u' | b'b' | b'f'),
            2 => {
                let (a, b) = (prefix[0].to_ascii_lowercase(), prefix[1].to_ascii_lowercase());
                matches!((a, b), (b'r', b'b' | b'f') | (b'b' | b'f', b'r'))
            }
            _ => false,
        };
        if !valid {
            return Err(GiveUp);
        }
        for c in prefix {
            match c.to_ascii_lowercase() {
                b'r' => raw = true,
                b'f' => format = true,
                _ => {}
            }
        }
        let q = self.b[q_at];
        let triple = self.at(q_at + 1) == q && self.at(q_at + 2) == q;
        if outer.is_some() && (format || triple || outer == Some(q)) {
            return Err(GiveUp);
        }
        let open = q_at + if triple { 3 } else { 1 };
        let tok = self.toks.len();
        self.push(Tk::Str, s, open);
        let mut interpolated = false;
        let mut i = open;
        let end = loop {
            let Some(&c) = self.b.get(i) else { return Err(GiveUp) };
            match c {
                b'\\' if outer.is_some() => return Err(GiveUp),
                b'\\' if raw => {
                    // The scanner steps over an escaped quote or backslash, then a newline.
                    i += 1;
                    if self.at(i) == q || self.at(i) == b'\\' {
                        i += 1;
                    }
                    match (self.at(i), self.at(i + 1)) {
                        (b'\n', _) if triple => i += 1,
                        (b'\r', b'\n') if triple => i += 2,
                        (b'\n' | b'\r', _) => return Err(GiveUp),
                        _ => {}
                    }
                }
                b'\\' => match (self.at(i + 1), self.at(i + 2)) {
                    // `\N{...}` may hold a quote; in an f-string `\{` leaves the brace a field.
                    (0 | b'N', _) => return Err(GiveUp),
                    (b'{' | b'}', _) if format => return Err(GiveUp),
                    (b'\r', b'\n') => i += 3,
                    (b'\r', _) => return Err(GiveUp),
                    _ => i += 2,
                },
                b'\n' if triple => i += 1,
                b'\r' if triple && self.at(i + 1) == b'\n' => i += 2,
                b'\n' | b'\r' | 0 => return Err(GiveUp),
                b'{' if format && self.at(i + 1) == b'{' => i += 2,
                b'}' if format && self.at(i + 1) == b'}' => i += 2,
                b'}' if format => return Err(GiveUp),
                b'{' if format => {
                    interpolated = true;
                    self.push(Tk::InterpOpen, i, i + 1);
                    self.i = i + 1;
                    self.replacement_field(q)?;
                    i = self.i;
                }
                c if c == q && !triple => break i + 1,
                c if c == q && self.at(i + 1) == q && self.at(i + 2) == q => break i + 3,
                c if c == q => i += 1,
                c if Some(c) == outer => return Err(GiveUp),
                _ => i += 1,
            }
        };
        if interpolated {
            self.toks[tok].t = Tk::FStart;
            self.push(Tk::FEnd, if triple { end - 3 } else { end - 1 }, end);
        } else {
            self.toks[tok].end = end as u32;
        }
        self.i = end;
        Ok(())
    }

    /// The tokens of an f-string's replacement field after its `{`, to its `}`.
    fn replacement_field(&mut self, quote: u8) -> Res<()> {
        let floor = std::mem::replace(&mut self.floor, self.brackets.len());
        loop {
            let Some(&c) = self.b.get(self.i) else { return Err(GiveUp) };
            let top = self.brackets.len() == self.floor;
            let i = self.i;
            match c {
                b' ' | b'\t' => self.i += 1,
                b'\n' | b'\r' | b'#' | b'\\' | 0 => return Err(GiveUp),
                c if c == quote => return Err(GiveUp),
                b'}' if top => {
                    self.push(Tk::InterpClose, i, i + 1);
                    self.i += 1;
                    break;
                }
                b':' if top => {
                    // tree-sitter would read `:=` as a walrus, Python as a format spec.
                    if self.at(i + 1) == b'=' {
                        return Err(GiveUp);
                    }
                    let mut j = i + 1;
                    while self.at(j) != b'}' {
                        if matches!(self.at(j), 0 | b'{' | b'\\' | b'\n' | b'\r' | b'\'' | b'"') {
                            return Err(GiveUp);
                        }
                        j += 1;
                    }
                    self.push(Tk::Spec, i, j);
                    self.i = j;
                }
                b'!' if top && self.at(i + 1) != b'=' => {
                    if !matches!(self.at(i + 1), b'r' | b's' | b'a') || !matches!(self.at(i + 2), b':' | b'}') {
                        return Err(GiveUp);
                    }
                    self.push(Tk::Conv, i, i + 2);
                    self.i += 2;
                }
                b'=' if top && self.at(i + 1) != b'=' => {
                    self.push(Tk::Op(Op::Assign), i, i + 1);
                    self.i += 1;
                }
                _ => self.token(Some(quote))?,
            }
        }
        self.floor = floor;
        Ok(())
    }
}

/// Whether an expression can be assigned to as tree-sitter-python's `pattern` reads it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    No,
    /// An identifier.
    Name,
    /// An attribute or a subscript.
    Place,
    /// `*` before a name or a place.
    Star,
    /// A tuple or list of targets.
    Seq,
}

impl Target {
    fn in_sequence(self) -> bool {
        self != Target::No
    }

    fn assignable(self) -> bool {
        matches!(self, Target::Name | Target::Place | Target::Seq)
    }
}

/// A parsed expression: its bytes, its node (made when a node needs it, for most kinds), and
/// whether it is a target or starred.
#[derive(Clone, Copy, Debug)]
struct E {
    start: u32,
    end: u32,
    id: u32,
    target: Target,
    star: bool,
    /// A comma list without brackets.
    list: bool,
}

fn other(start: u32, end: u32, target: Target) -> E {
    E { start, end, id: NONE, target, star: false, list: false }
}

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Tok>,
    p: usize,
    nodes: Vec<Node>,
    children: Vec<u32>,
    /// Arguments being read, of the calls being read.
    scratch: Vec<u32>,
    calls: Vec<u32>,
    assignments: Vec<u32>,
    /// Inside an f-string's replacement field.
    interpolation: u32,
    /// Inside an annotation (tree-sitter's `type`).
    annotation: u32,
    depth: u32,
}

fn starts_expression(t: Tk) -> bool {
    matches!(
        t,
        Tk::Name
            | Tk::Number
            | Tk::Str
            | Tk::FStart
            | Tk::Op(Op::LParen | Op::LBrack | Op::LBrace | Op::Minus | Op::Plus | Op::Tilde | Op::Star | Op::Ellipsis)
            | Tk::Kw(Kw::True | Kw::False | Kw::None | Kw::Not | Kw::Lambda | Kw::Await | Kw::Yield)
    )
}

#[allow(clippy::cast_possible_truncation)] // `read` checks the source fits in u32.
impl Parser<'_> {
    fn peek(&self) -> Tk {
        self.toks[self.p].t
    }

    fn peek2(&self) -> Tk {
        self.toks.get(self.p + 1).map_or(Tk::Eof, |t| t.t)
    }

    fn tok(&self) -> Tok {
        self.toks[self.p]
    }

    fn bump(&mut self) -> Tok {
        let t = self.toks[self.p];
        if t.t != Tk::Eof {
            self.p += 1;
        }
        t
    }

    fn eat(&mut self, t: Tk) -> bool {
        let found = self.peek() == t;
        if found {
            self.bump();
        }
        found
    }

    fn expect(&mut self, t: Tk) -> Res<Tok> {
        if self.peek() == t { Ok(self.bump()) } else { Err(GiveUp) }
    }

    fn text(&self, t: Tok) -> &str {
        &self.src[t.start as usize..t.end as usize]
    }

    fn enter(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH { Err(GiveUp) } else { Ok(()) }
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn push(&mut self, kind: Kind, start: u32, end: u32, a: u32, b: u32) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(Node { kind, interpolated: false, start, end, a, b });
        id
    }

    /// The node of `e`, made now if it has none.
    fn id(&mut self, e: E) -> u32 {
        if e.id == NONE { self.push(Kind::Other, e.start, e.end, NONE, NONE) } else { e.id }
    }

    fn statement(&mut self) -> Res<()> {
        self.enter()?;
        match self.peek() {
            Tk::Kw(Kw::If) => self.if_statement()?,
            Tk::Kw(Kw::While) => {
                self.bump();
                self.test()?;
                self.suite()?;
                self.else_clause()?;
            }
            Tk::Kw(Kw::For) => {
                self.bump();
                self.target_list()?;
                self.expect(Tk::Kw(Kw::In))?;
                self.star_expressions()?;
                self.suite()?;
                self.else_clause()?;
            }
            Tk::Kw(Kw::Try) => self.try_statement()?,
            Tk::Kw(Kw::With) => self.with_statement()?,
            Tk::Kw(Kw::Def) => self.function_definition()?,
            Tk::Kw(Kw::Class) => self.class_definition()?,
            Tk::Op(Op::At) => {
                while self.eat(Tk::Op(Op::At)) {
                    self.test()?;
                    self.expect(Tk::Newline)?;
                }
                match self.peek() {
                    Tk::Kw(Kw::Def) => self.function_definition()?,
                    Tk::Kw(Kw::Class) => self.class_definition()?,
                    _ => return Err(GiveUp),
                }
            }
            _ => self.simple_statements()?,
        }
        self.leave();
        Ok(())
    }

    fn simple_statements(&mut self) -> Res<()> {
        loop {
            self.small_statement()?;
            if !self.eat(Tk::Op(Op::Semi)) || self.peek() == Tk::Newline {
                break;
            }
        }
        self.expect(Tk::Newline).map(drop)
    }

    /// A block after its `:`, on its own indented lines or on the line of the `:`.
    fn suite(&mut self) -> Res<()> {
        self.expect(Tk::Op(Op::Colon))?;
        if self.eat(Tk::Newline) {
            self.expect(Tk::Indent)?;
            while !self.eat(Tk::Dedent) {
                self.statement()?;
            }
            Ok(())
        } else {
            self.simple_statements()
        }
    }

    fn else_clause(&mut self) -> Res<()> {
        if self.eat(Tk::Kw(Kw::Else)) {
            self.suite()?;
        }
        Ok(())
    }

    fn if_statement(&mut self) -> Res<()> {
        self.bump();
        self.test()?;
        self.suite()?;
        while self.eat(Tk::Kw(Kw::Elif)) {
            self.test()?;
            self.suite()?;
        }
        self.else_clause()
    }

    fn try_statement(&mut self) -> Res<()> {
        self.bump();
        self.suite()?;
        let mut handlers = 0;
        while self.eat(Tk::Kw(Kw::Except)) {
            if self.peek() != Tk::Op(Op::Colon) {
                self.test()?;
                if self.eat(Tk::Kw(Kw::As)) {
                    self.expect(Tk::Name)?;
                }
            }
            self.suite()?;
            handlers += 1;
        }
        if handlers > 0 {
            self.else_clause()?;
        }
        if self.eat(Tk::Kw(Kw::Finally)) {
            self.suite()?;
            handlers += 1;
        }
        if handlers == 0 { Err(GiveUp) } else { Ok(()) }
    }

    fn with_statement(&mut self) -> Res<()> {
        self.bump();
        // `with (a as b, c):` is a tuple or a parenthesized clause: tree-sitter's choice.
        if self.peek() == Tk::Op(Op::LParen) {
            return Err(GiveUp);
        }
        loop {
            self.test()?;
            if self.eat(Tk::Kw(Kw::As)) {
                let t = self.target_item()?;
                if !t.target.assignable() {
                    return Err(GiveUp);
                }
            }
            if !self.eat(Tk::Op(Op::Comma)) {
                break;
            }
        }
        self.suite()
    }

    fn function_definition(&mut self) -> Res<()> {
        self.bump();
        self.expect(Tk::Name)?;
        self.expect(Tk::Op(Op::LParen))?;
        self.parameters(Tk::Op(Op::RParen), true)?;
        self.expect(Tk::Op(Op::RParen))?;
        if self.eat(Tk::Op(Op::Arrow)) {
            self.annotation()?;
        }
        self.suite()
    }

    /// Parameters up to `close` (not taken), annotated ones when `annotated` (not a lambda's).
    fn parameters(&mut self, close: Tk, annotated: bool) -> Res<()> {
        while self.peek() != close {
            match self.peek() {
                Tk::Op(Op::Slash) => {
                    self.bump();
                }
                Tk::Op(Op::Star) => {
                    self.bump();
                    if self.peek() == Tk::Name {
                        self.expect(Tk::Name)?;
                        if annotated && self.eat(Tk::Op(Op::Colon)) {
                            self.annotation()?;
                        }
                    }
                }
                Tk::Op(Op::DStar) => {
                    self.bump();
                    self.expect(Tk::Name)?;
                    if annotated && self.eat(Tk::Op(Op::Colon)) {
                        self.annotation()?;
                    }
                }
                _ => {
                    self.expect(Tk::Name)?;
                    if annotated && self.eat(Tk::Op(Op::Colon)) {
                        self.annotation()?;
                    }
                    if self.eat(Tk::Op(Op::Assign)) {
                        self.test()?;
                    }
                }
            }
            if !self.eat(Tk::Op(Op::Comma)) {
                break;
            }
        }
        Ok(())
    }

    fn class_definition(&mut self) -> Res<()> {
        self.bump();
        self.expect(Tk::Name)?;
        if self.peek() == Tk::Op(Op::LParen) {
            self.arguments(false)?;
        }
        self.suite()
    }

    fn dotted_name(&mut self) -> Res<()> {
        self.expect(Tk::Name)?;
        while self.eat(Tk::Op(Op::Dot)) {
            self.expect(Tk::Name)?;
        }
        Ok(())
    }

    fn small_statement(&mut self) -> Res<()> {
        match self.peek() {
            Tk::Kw(Kw::Pass | Kw::Break | Kw::Continue) => {
                self.bump();
            }
            Tk::Kw(Kw::Return) => {
                self.bump();
                if starts_expression(self.peek()) {
                    self.star_expressions()?;
                }
            }
            Tk::Kw(Kw::Raise) => {
                self.bump();
                if starts_expression(self.peek()) {
                    self.test()?;
                    if self.eat(Tk::Kw(Kw::From)) {
                        self.test()?;
                    }
                }
            }
            Tk::Kw(Kw::Global | Kw::Nonlocal) => {
                self.bump();
                self.expect(Tk::Name)?;
                while self.eat(Tk::Op(Op::Comma)) {
                    self.expect(Tk::Name)?;
                }
            }
            Tk::Kw(Kw::Del) => {
                self.bump();
                self.star_expressions()?;
            }
            Tk::Kw(Kw::Assert) => {
                self.bump();
                self.test()?;
                if self.eat(Tk::Op(Op::Comma)) {
                    self.test()?;
                }
            }
            Tk::Kw(Kw::Import) => {
                self.bump();
                loop {
                    self.dotted_name()?;
                    if self.eat(Tk::Kw(Kw::As)) {
                        self.expect(Tk::Name)?;
                    }
                    if !self.eat(Tk::Op(Op::Comma)) {
                        break;
                    }
                }
            }
            Tk::Kw(Kw::From) => self.import_from()?,
            _ => self.expression_statement()?,
        }
        Ok(())
    }

    fn import_from(&mut self) -> Res<()> {
        self.bump();
        let mut relative = false;
        while self.eat(Tk::Op(Op::Dot)) {
            relative = true;
        }
        if self.peek() == Tk::Name {
            self.dotted_name()?;
        } else if !relative {
            return Err(GiveUp);
        }
        self.expect(Tk::Kw(Kw::Import))?;
        if self.eat(Tk::Op(Op::Star)) {
            return Ok(());
        }
        let parenthesized = self.eat(Tk::Op(Op::LParen));
        loop {
            self.expect(Tk::Name)?;
            if self.eat(Tk::Kw(Kw::As)) {
                self.expect(Tk::Name)?;
            }
            if !self.eat(Tk::Op(Op::Comma)) {
                break;
            }
            if parenthesized && self.peek() == Tk::Op(Op::RParen) {
                break;
            }
        }
        if parenthesized {
            self.expect(Tk::Op(Op::RParen))?;
        }
        Ok(())
    }

    fn expression_statement(&mut self) -> Res<()> {
        // Words that start statements of their own to tree-sitter: Python 2's `print x` and
        // `exec code`, and `type X = ...`, which it prefers to `type[x] = ...` or
        // `type(x).y = ...`. (`match x:` needs a block no statement read here has.)
        if self.peek() == Tk::Name {
            let next = self.peek2();
            match self.text(self.tok()) {
                "print" | "exec" if next != Tk::Op(Op::LParen) => return Err(GiveUp),
                "type" if matches!(next, Tk::Op(Op::LParen | Op::LBrack)) => return Err(GiveUp),
                _ => {}
            }
        }
        let first = self.star_expressions()?;
        let mut last = first;
        match self.peek() {
            Tk::Op(Op::Assign) => {
                // `a = b = v`: tree-sitter nests `b = v` as the right of `a = ...`.
                let mut targets = [first; 8];
                let mut n = 1;
                let value = loop {
                    self.bump();
                    if self.peek() == Tk::Kw(Kw::Yield) {
                        return Err(GiveUp);
                    }
                    let e = self.star_expressions()?;
                    if self.peek() != Tk::Op(Op::Assign) {
                        break e;
                    }
                    if n == targets.len() {
                        return Err(GiveUp);
                    }
                    targets[n] = e;
                    n += 1;
                };
                if !targets[..n].iter().all(|t| t.target.assignable()) {
                    return Err(GiveUp);
                }
                last = value;
                let mut right = self.id(value);
                for t in targets[..n].iter().rev() {
                    let left = self.id(*t);
                    right = self.push(Kind::Assignment, t.start, value.end, left, right);
                    self.assignments.push(right);
                }
            }
            Tk::Op(Op::Colon) => {
                if !matches!(first.target, Target::Name | Target::Place) {
                    return Err(GiveUp);
                }
                self.bump();
                let mut end = self.annotation()?.end;
                let right = if self.eat(Tk::Op(Op::Assign)) {
                    if self.peek() == Tk::Kw(Kw::Yield) {
                        return Err(GiveUp);
                    }
                    let v = self.star_expressions()?;
                    end = v.end;
                    last = v;
                    self.id(v)
                } else {
                    NONE
                };
                if self.peek() == Tk::Op(Op::Assign) {
                    return Err(GiveUp);
                }
                let left = self.id(first);
                let a = self.push(Kind::Assignment, first.start, end, left, right);
                self.assignments.push(a);
            }
            Tk::Op(Op::AugAssign) => {
                if !matches!(first.target, Target::Name | Target::Place) {
                    return Err(GiveUp);
                }
                self.bump();
                if self.peek() == Tk::Kw(Kw::Yield) {
                    return Err(GiveUp);
                }
                last = self.star_expressions()?;
            }
            _ => {}
        }
        // A list at the end of a line may be, to tree-sitter, a list of targets (`a, b = ...`)
        // that goes on on the next line when that line can make its last item a target:
        // `x = a, 1` then `(e)[0]` reads as `x = a, 1(e)[0]`.
        if last.list && self.peek() == Tk::Newline {
            let next = self.toks[self.p + 1..].iter().find(|t| !matches!(t.t, Tk::Indent | Tk::Dedent));
            if next.is_some_and(|t| matches!(t.t, Tk::Op(Op::LParen | Op::LBrack))) {
                return Err(GiveUp);
            }
        }
        Ok(())
    }

    /// Targets of `for` (in a statement or a comprehension), up to its `in`.
    fn target_list(&mut self) -> Res<()> {
        loop {
            if !self.target_item()?.target.in_sequence() {
                return Err(GiveUp);
            }
            if !self.eat(Tk::Op(Op::Comma)) || self.peek() == Tk::Kw(Kw::In) {
                return Ok(());
            }
        }
    }

    fn target_item(&mut self) -> Res<E> {
        if self.peek() == Tk::Op(Op::Star) {
            return self.splat();
        }
        self.primary()
    }

    /// `*` and what it unpacks. tree-sitter reads `*name` as a primary expression of its own,
    /// which a call or an operator may follow (`print(s, *f(x))` calls `*f`, `[*a + b]` adds
    /// to `*a`), or not, depending on its parse state: only a primary without a call in its
    /// chain, and then the end of the item, is read.
    fn splat(&mut self) -> Res<E> {
        let start = self.bump().start;
        let calls = self.calls.len();
        let e = self.primary()?;
        if self.calls[calls..].iter().any(|&c| self.nodes[c as usize].start == e.start)
            || !matches!(self.peek(), Tk::Op(Op::Comma | Op::RParen | Op::RBrack | Op::RBrace | Op::Assign) | Tk::Kw(Kw::In))
        {
            return Err(GiveUp);
        }
        let target = if matches!(e.target, Target::Name | Target::Place) { Target::Star } else { Target::No };
        Ok(E { start, end: e.end, id: NONE, target, star: true, list: false })
    }

    /// A comma list without brackets (an expression statement, `return`, `for ... in`, a
    /// replacement field); `*` only before a name or a place there, as tree-sitter reads it.
    fn star_expressions(&mut self) -> Res<E> {
        let first = self.bare_item()?;
        if self.peek() != Tk::Op(Op::Comma) {
            return if first.star { Err(GiveUp) } else { Ok(first) };
        }
        let mut all = first.target.in_sequence();
        let mut end = first.end;
        while self.peek() == Tk::Op(Op::Comma) {
            end = self.bump().end;
            // tree-sitter may read `a, b,` and the next line as one statement (`c = 1`
            // assigns to `a, b, c`).
            if self.peek() == Tk::Newline {
                return Err(GiveUp);
            }
            if !starts_expression(self.peek()) {
                break;
            }
            let e = self.bare_item()?;
            all &= e.target.in_sequence();
            end = e.end;
        }
        Ok(E { list: true, ..other(first.start, end, if all { Target::Seq } else { Target::No }) })
    }

    fn bare_item(&mut self) -> Res<E> {
        if self.peek() == Tk::Op(Op::Star) {
            let e = self.splat()?;
            if e.target != Target::Star {
                return Err(GiveUp);
            }
            return Ok(e);
        }
        self.test()
    }

    /// An item of a bracketed display.
    fn display_item(&mut self) -> Res<E> {
        if self.peek() == Tk::Op(Op::Star) {
            return self.splat();
        }
        self.test()
    }

    fn test(&mut self) -> Res<E> {
        self.enter()?;
        let e = if self.peek() == Tk::Kw(Kw::Lambda) {
            self.lambda()?
        } else {
            let e = self.or_test()?;
            if self.eat(Tk::Kw(Kw::If)) {
                self.or_test()?;
                self.expect(Tk::Kw(Kw::Else))?;
                let r = self.test()?;
                other(e.start, r.end, Target::No)
            } else {
                e
            }
        };
        self.leave();
        Ok(e)
    }

    fn lambda(&mut self) -> Res<E> {
        if self.interpolation > 0 {
            return Err(GiveUp);
        }
        let start = self.bump().start;
        self.parameters(Tk::Op(Op::Colon), false)?;
        self.expect(Tk::Op(Op::Colon))?;
        let body = self.test()?;
        Ok(other(start, body.end, Target::No))
    }

    fn or_test(&mut self) -> Res<E> {
        let first = self.not_test()?;
        let mut end = None;
        while matches!(self.peek(), Tk::Kw(Kw::And | Kw::Or)) {
            self.bump();
            end = Some(self.not_test()?.end);
        }
        Ok(end.map_or(first, |end| other(first.start, end, Target::No)))
    }

    fn not_test(&mut self) -> Res<E> {
        if self.peek() == Tk::Kw(Kw::Not) {
            let start = self.bump().start;
            self.enter()?;
            let e = self.not_test()?;
            self.leave();
            return Ok(other(start, e.end, Target::No));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Res<E> {
        let first = self.arith()?;
        let mut end = None;
        loop {
            match (self.peek(), self.peek2()) {
                (Tk::Op(Op::Compare) | Tk::Kw(Kw::In), _) => {
                    self.bump();
                }
                (Tk::Kw(Kw::Is), _) => {
                    self.bump();
                    self.eat(Tk::Kw(Kw::Not));
                }
                (Tk::Kw(Kw::Not), Tk::Kw(Kw::In)) => {
                    self.bump();
                    self.bump();
                }
                _ => break,
            }
            end = Some(self.arith()?.end);
        }
        Ok(end.map_or(first, |end| other(first.start, end, Target::No)))
    }

    /// Binary operators above comparison: which binds tighter makes no node python_writes
    /// reads, and any sequence of them is valid.
    fn arith(&mut self) -> Res<E> {
        let first = self.factor()?;
        let mut end = None;
        while matches!(self.peek(), Tk::Op(Op::Binary | Op::Plus | Op::Minus | Op::Star | Op::Slash | Op::At)) {
            self.bump();
            end = Some(self.factor()?.end);
        }
        Ok(end.map_or(first, |end| other(first.start, end, Target::No)))
    }

    fn factor(&mut self) -> Res<E> {
        if matches!(self.peek(), Tk::Op(Op::Plus | Op::Minus | Op::Tilde)) {
            let start = self.bump().start;
            self.enter()?;
            let e = self.factor()?;
            self.leave();
            return Ok(other(start, e.end, Target::No));
        }
        let e = self.primary()?;
        if self.eat(Tk::Op(Op::DStar)) {
            let r = self.factor()?;
            return Ok(other(e.start, r.end, Target::No));
        }
        Ok(e)
    }

    /// An annotation: tree-sitter's `type` reads `List[int]` as a generic type, which no call
    /// or subscript may follow.
    fn annotation(&mut self) -> Res<E> {
        self.annotation += 1;
        let e = self.test()?;
        self.annotation -= 1;
        Ok(e)
    }

    fn primary(&mut self) -> Res<E> {
        let mut e = self.atom()?;
        let mut subscripted = false;
        loop {
            if subscripted && self.annotation > 0 && matches!(self.peek(), Tk::Op(Op::LParen | Op::LBrack)) {
                return Err(GiveUp);
            }
            match self.peek() {
                Tk::Op(Op::Dot) => {
                    self.bump();
                    let t = self.expect(Tk::Name)?;
                    let object = self.id(e);
                    let name = self.push(Kind::Identifier, t.start, t.end, NONE, NONE);
                    let id = self.push(Kind::Attribute, e.start, t.end, object, name);
                    e = E { start: e.start, end: t.end, id, target: Target::Place, star: false, list: false };
                }
                Tk::Op(Op::LParen) => {
                    let function = self.id(e);
                    let (arguments, end) = self.arguments(true)?;
                    let id = self.push(Kind::Call, e.start, end, function, arguments);
                    self.calls.push(id);
                    e = E { start: e.start, end, id, target: Target::No, star: false, list: false };
                }
                Tk::Op(Op::LBrack) => {
                    let end = self.subscript()?;
                    e = other(e.start, end, Target::Place);
                    subscripted = true;
                }
                _ => return Ok(e),
            }
        }
    }

    fn atom(&mut self) -> Res<E> {
        let t = self.tok();
        match t.t {
            Tk::Name => {
                self.bump();
                let id = self.push(Kind::Identifier, t.start, t.end, NONE, NONE);
                Ok(E { start: t.start, end: t.end, id, target: Target::Name, star: false, list: false })
            }
            Tk::Number | Tk::Kw(Kw::True | Kw::False | Kw::None) | Tk::Op(Op::Ellipsis) => {
                self.bump();
                Ok(other(t.start, t.end, Target::No))
            }
            Tk::Str | Tk::FStart => self.strings(),
            Tk::Op(Op::LParen | Op::LBrack | Op::LBrace) => {
                self.enter()?;
                let e = match t.t {
                    Tk::Op(Op::LParen) => self.parenthesized()?,
                    Tk::Op(Op::LBrack) => self.list()?,
                    _ => self.braces()?,
                };
                self.leave();
                Ok(e)
            }
            _ => Err(GiveUp),
        }
    }

    /// Adjacent literals: one is a `string`, more a `concatenated_string`.
    fn strings(&mut self) -> Res<E> {
        let first = self.string()?;
        let mut end = None;
        while matches!(self.peek(), Tk::Str | Tk::FStart) {
            end = Some(self.string()?.end);
        }
        Ok(end.map_or(first, |end| other(first.start, end, Target::No)))
    }

    fn string(&mut self) -> Res<E> {
        let t = self.bump();
        let mut end = t.end;
        let interpolated = t.t == Tk::FStart;
        if interpolated {
            self.interpolation += 1;
            loop {
                match self.peek() {
                    Tk::InterpOpen => {
                        self.bump();
                        self.star_expressions()?;
                        self.eat(Tk::Op(Op::Assign));
                        self.eat(Tk::Conv);
                        self.eat(Tk::Spec);
                        self.expect(Tk::InterpClose)?;
                    }
                    Tk::FEnd => {
                        end = self.bump().end;
                        break;
                    }
                    _ => return Err(GiveUp),
                }
            }
            self.interpolation -= 1;
        }
        let id = self.push(Kind::String, t.start, end, NONE, NONE);
        self.nodes[id as usize].interpolated = interpolated;
        Ok(E { start: t.start, end, id, target: Target::No, star: false, list: false })
    }

    fn parenthesized(&mut self) -> Res<E> {
        let start = self.bump().start;
        if self.peek() == Tk::Op(Op::RParen) {
            let end = self.bump().end;
            return Ok(other(start, end, Target::No));
        }
        let first = self.display_item()?;
        if self.peek() == Tk::Kw(Kw::For) && !first.star {
            self.comprehension(false)?;
            let end = self.expect(Tk::Op(Op::RParen))?.end;
            return Ok(other(start, end, Target::No));
        }
        if self.peek() != Tk::Op(Op::Comma) {
            // `(*a)` is tree-sitter's parenthesized_list_splat.
            if first.star {
                return Err(GiveUp);
            }
            let end = self.expect(Tk::Op(Op::RParen))?.end;
            return Ok(other(start, end, Target::No));
        }
        let all = self.items(first, Tk::Op(Op::RParen))?;
        let end = self.expect(Tk::Op(Op::RParen))?.end;
        Ok(other(start, end, if all { Target::Seq } else { Target::No }))
    }

    /// The items after the first of a display, to `close` (not taken): whether all are targets.
    fn items(&mut self, first: E, close: Tk) -> Res<bool> {
        let mut all = first.target.in_sequence();
        while self.eat(Tk::Op(Op::Comma)) {
            if self.peek() == close {
                break;
            }
            all &= self.display_item()?.target.in_sequence();
        }
        Ok(all)
    }

    fn list(&mut self) -> Res<E> {
        let start = self.bump().start;
        let close = Tk::Op(Op::RBrack);
        if self.peek() == close {
            let end = self.bump().end;
            return Ok(other(start, end, Target::No));
        }
        let first = self.display_item()?;
        let all = if self.peek() == Tk::Kw(Kw::For) && !first.star {
            self.comprehension(false)?;
            false
        } else {
            self.items(first, close)?
        };
        let end = self.expect(close)?.end;
        Ok(other(start, end, if all { Target::Seq } else { Target::No }))
    }

    fn braces(&mut self) -> Res<E> {
        let start = self.bump().start;
        let close = Tk::Op(Op::RBrace);
        if self.peek() != close {
            let first = if self.eat(Tk::Op(Op::DStar)) { None } else { Some(self.display_item()?) };
            let dict = first.is_none() || self.peek() == Tk::Op(Op::Colon);
            match first {
                None => {
                    self.arith()?;
                }
                Some(f) if dict => {
                    if f.star {
                        return Err(GiveUp);
                    }
                    self.bump();
                    self.test()?;
                }
                Some(_) => {}
            }
            if self.peek() == Tk::Kw(Kw::For) && first.is_some_and(|f| !f.star) {
                self.comprehension(false)?;
            } else if dict {
                while self.eat(Tk::Op(Op::Comma)) {
                    if self.peek() == close {
                        break;
                    }
                    if self.eat(Tk::Op(Op::DStar)) {
                        self.arith()?;
                    } else {
                        self.test()?;
                        self.expect(Tk::Op(Op::Colon))?;
                        self.test()?;
                    }
                }
            } else if let Some(f) = first {
                self.items(f, close)?;
            }
        }
        let end = self.expect(close)?.end;
        Ok(other(start, end, Target::No))
    }

    /// `for ... in ... if ...` clauses after a comprehension's body; with `clauses`, each
    /// clause a node among [`Parser::scratch`] (a generator's clauses are its call's arguments).
    fn comprehension(&mut self, clauses: bool) -> Res<()> {
        while self.peek() == Tk::Kw(Kw::For) {
            let start = self.bump().start;
            self.target_list()?;
            self.expect(Tk::Kw(Kw::In))?;
            let mut end = self.or_test()?.end;
            if clauses {
                let id = self.push(Kind::Other, start, end, NONE, NONE);
                self.scratch.push(id);
            }
            while self.peek() == Tk::Kw(Kw::If) {
                let start = self.bump().start;
                end = self.or_test()?.end;
                if clauses {
                    let id = self.push(Kind::Other, start, end, NONE, NONE);
                    self.scratch.push(id);
                }
            }
        }
        Ok(())
    }

    fn subscript(&mut self) -> Res<u32> {
        self.bump();
        self.enter()?;
        loop {
            let t = self.peek();
            if t == Tk::Op(Op::Star) || !(t == Tk::Op(Op::Colon) || starts_expression(t)) {
                return Err(GiveUp);
            }
            if t != Tk::Op(Op::Colon) {
                self.test()?;
            }
            // An annotation's `List[a:b]` is tree-sitter's generic type, which has no slices.
            if self.annotation > 0 && self.peek() == Tk::Op(Op::Colon) {
                return Err(GiveUp);
            }
            if self.eat(Tk::Op(Op::Colon)) {
                if starts_expression(self.peek()) {
                    self.test()?;
                }
                if self.eat(Tk::Op(Op::Colon)) && starts_expression(self.peek()) {
                    self.test()?;
                }
            }
            if !self.eat(Tk::Op(Op::Comma)) || self.peek() == Tk::Op(Op::RBrack) {
                break;
            }
        }
        self.leave();
        Ok(self.expect(Tk::Op(Op::RBrack))?.end)
    }

    /// A call's arguments (or a class's bases, `call` false): the `argument_list` node, or the
    /// `generator_expression` of `f(x for x in y)`, whose named children are the body and the
    /// clauses; and where it ends.
    fn arguments(&mut self, call: bool) -> Res<(u32, u32)> {
        let start = self.bump().start;
        self.enter()?;
        let base = self.scratch.len();
        while self.peek() != Tk::Op(Op::RParen) {
            let t = self.tok();
            let arg = match (t.t, self.peek2()) {
                (Tk::Op(Op::Star), _) => {
                    let e = self.splat()?;
                    self.push(Kind::ListSplat, t.start, e.end, NONE, NONE)
                }
                (Tk::Op(Op::DStar), _) => {
                    self.bump();
                    let e = self.test()?;
                    self.push(Kind::DictionarySplat, t.start, e.end, NONE, NONE)
                }
                (Tk::Name, Tk::Op(Op::Assign)) => {
                    self.bump();
                    self.bump();
                    let name = self.push(Kind::Identifier, t.start, t.end, NONE, NONE);
                    let e = self.test()?;
                    let value = self.id(e);
                    self.push(Kind::KeywordArgument, t.start, e.end, name, value)
                }
                _ => {
                    let e = self.test()?;
                    let id = self.id(e);
                    if self.peek() == Tk::Kw(Kw::For) {
                        if !call || self.scratch.len() != base {
                            return Err(GiveUp);
                        }
                        self.scratch.push(id);
                        self.comprehension(true)?;
                        break;
                    }
                    id
                }
            };
            self.scratch.push(arg);
            if !self.eat(Tk::Op(Op::Comma)) {
                break;
            }
        }
        let end = self.expect(Tk::Op(Op::RParen))?.end;
        self.leave();
        let first = self.children.len() as u32;
        let count = (self.scratch.len() - base) as u32;
        self.children.extend(self.scratch.drain(base..));
        Ok((self.push(Kind::Arguments, start, end, first, count), end))
    }
}

#[cfg(test)]
mod tests {
    use rand::seq::IndexedRandom;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::{GiveUp, PyNode, read, tree_nodes};
    use crate::classify::shell::{python_writes_parsed, python_writes_read, writes_of};

    /// What `python_writes` reads of each assignment to a name and each call, with the byte
    /// ranges of the nodes: two trees that render alike give any reading of them alike.
    /// The assignments in source order (which one comes first changes no reading of them),
    /// then the calls in the order given.
    fn skeleton<'s, N: PyNode<'s>>(nodes: &[N]) -> String {
        let mut assignments = Vec::new();
        let mut calls = String::new();
        for &n in nodes {
            match n.kind() {
                "assignment" => {
                    let Some(left) = n.field("left").filter(|l| l.kind() == "identifier") else { continue };
                    let r = n.range();
                    let line = format!("assign {r:?} {} = {}\n", show(left), n.field("right").map_or("-".into(), show));
                    assignments.push((r.start, std::cmp::Reverse(r.end), line));
                }
                "call" => calls += &format!("call {}\n", show(n)),
                _ => {}
            }
        }
        assignments.sort();
        assignments.into_iter().map(|(_, _, line)| line).collect::<String>() + &calls
    }

    fn show<'s, N: PyNode<'s>>(n: N) -> String {
        let field = |name| n.field(name).map_or("-".into(), show);
        let kind = match n.kind() {
            k
            @ ("identifier" | "string" | "call" | "attribute" | "keyword_argument" | "list_splat" | "dictionary_splat" | "assignment") => k,
            _ => "other",
        };
        let mut s = format!("{kind}{:?}", n.range());
        match kind {
            "string" if n.has_interpolation() => s += "{f}",
            "call" => {
                s += &format!("({}", field("function"));
                for a in n.field("arguments").map(PyNode::named_children).unwrap_or_default() {
                    if a.kind() != "comment" {
                        s += &format!(", {}", show(a));
                    }
                }
                s += ")";
            }
            "attribute" => s += &format!("<{} . {}>", field("object"), field("attribute")),
            "keyword_argument" => s += &format!("<{} = {}>", field("name"), field("value")),
            "assignment" => s += &format!("<{} = {}>", field("left"), field("right")),
            _ => {}
        }
        s
    }

    thread_local! {
        static PARSER: std::cell::RefCell<tree_sitter::Parser> = std::cell::RefCell::new({
            let mut p = tree_sitter::Parser::new();
            p.set_language(&tree_sitter_python::LANGUAGE.into()).expect("the grammar loads");
            p
        });
    }

    /// Whether the reader read `src`; when it did, it must have found tree-sitter's nodes in a
    /// tree without errors, and the writes the tree-sitter path finds.
    fn check(src: &str) -> bool {
        let tree = PARSER.with(|p| p.borrow_mut().parse(src, None)).expect("a parse");
        let nodes = tree_nodes(&tree, src);
        let Ok(r) = read(src) else {
            assert_eq!(python_writes_read(src), Err(GiveUp));
            return false;
        };
        let root = tree.root_node();
        assert!(!root.has_error(), "read though tree-sitter finds an error: {src:?}\n{}", root.to_sexp());
        assert_eq!(skeleton(&r.nodes()), skeleton(&nodes), "{src:?}\n{}", root.to_sexp());
        assert_eq!(writes_of(&r.nodes()), writes_of(&nodes), "{src:?}");
        assert_eq!(python_writes_read(src), Ok(python_writes_parsed(src)), "{src:?}");
        true
    }

    /// Programs like the ones agents run: the reader must read them, or it saves nothing.
    const REALISTIC: &[&str] = &[
        "open('a.txt', 'w').write('x')\n",
        "with open('src/app.py', 'w') as f:\n    f.write(content)\n",
        "import os\nos.remove('build/out.o')\nos.rename('a.py', 'b.py')\n",
        "from pathlib import Path\np = Path('setup.cfg')\np.write_text(p.read_text().replace('a', 'b'))\n",
        "import shutil\nshutil.copy('a', 'b')\nshutil.rmtree('dist', ignore_errors=True)\n",
        "import fileinput\nfor line in fileinput.input('conf.ini', inplace=True):\n    print(line.replace('x', 'y'), end='')\n",
        "path = 'sympy/core/basic.py'\nwith open(path) as f:\n    content = f.read()\ncontent = content.replace('old', 'new')\nwith open(path, 'w') as f:\n    f.write(content)\nprint('Done')\n",
        "import re\n\nfile_path = 'django/db/models/query.py'\n\nwith open(file_path, 'r') as f:\n    lines = f.readlines()\n\nnew_lines = []\nfor i, line in enumerate(lines):\n    if 'def bulk_create' in line:\n        new_lines.append(line)\n        continue\n    new_lines.append(line)\n\nwith open(file_path, 'w') as f:\n    f.writelines(new_lines)\n",
        "import sys\nsys.path.insert(0, '.')\nfrom astropy.table import Table\nt = Table({'a': [1, 2]})\nprint(f\"rows: {len(t)} {t['a'][0]!r:>5}\")\nopen('out.txt', 'a').write(str(t))\n",
        "def patch(path, old, new):\n    \"\"\"Replace `old` with 'new' in path.\"\"\"\n    with open(path) as fh:\n        text = fh.read()\n    if old not in text:\n        raise SystemExit(f'{old!r} not found in {path}')\n    with open(path, 'w') as fh:\n        fh.write(text.replace(old, new, 1))\n\npatch('a.py', 'x = 1', 'x = 2')\n",
        "class Config:\n    name = 'x'\n\n    @property\n    def path(self):\n        return 'cfg/' + self.name\n\ncfg = Config()\nopen(cfg.path, 'w').close()\n",
        "try:\n    os.makedirs('out', exist_ok=True)\nexcept OSError as e:\n    print(e, file=sys.stderr)\nelse:\n    pass\nfinally:\n    print('ok')\n",
        "data = {'a': 1, **extra}\nitems = [x * 2 for x in range(10) if x % 2]\nkeys = sorted(data, key=lambda k: (len(k), k), reverse=True)\nopen('k.json', 'w').write(json.dumps(keys, indent=2))\n",
        "content = '''\ndef f():\n    return open(\"x\", \"w\")\n'''\nwith open('gen.py', 'w') as out:\n    out.write(content)\n",
        "import os\r\nos.remove('a.txt')\r\nif True:\r\n    os.remove('b.txt')\r\n",
        "if x:\n\topen('t', 'w')\nelse:\n\tpass\n",
        "x = 1 + \\\n    2\nopen('c', 'w')\n",
        "lines = open('a.py').read().splitlines()\nlines[3] = '    return None'\nopen('a.py', 'w').write('\\n'.join(lines) + '\\n')\n",
        "assert os.path.exists('a'), 'missing'\ndel lines[0]\nglobal_count = -1\nwhile global_count < 3:\n    global_count += 1\nprint(*lines, sep='\\n')\n",
        "result = subprocess.run(['python', '-m', 'pytest', 'tests/'], capture_output=True, text=True)\nprint(result.stdout[-2000:])\nPath('log.txt').write_text(result.stdout)\n",
    ];

    /// Hard cases: each either read to tree-sitter's nodes or left to tree-sitter.
    const TRICKY: &[&str] = &[
        "x = 'open(\"a\", \"w\")'\n",
        "# open('a', 'w')\nprint(1)\nopen('b', 'w')  # open('c', 'w')\n",
        "s = \"\"\"it's \"quoted\" open('a','w')\"\"\"\nopen('b', 'w')\n",
        "s = '''a''' + '''b\\''''\n",
        "open(p).write(s)\nopen(p, 'w').write(s)\n",
        "with open('a', 'w') as f, open('b') as g:\n    f.write(g.read())\n",
        "open('a', mode='w')\nopen(file='b', mode='x')\nopen('c', mode=m)\n",
        "Path('x').write_text('y')\npathlib.Path('z').write_bytes(b'')\n",
        "p = 'a'\np = 'b'\nopen(p, 'w')\n",
        "p = 'a'\np = 'a'\nopen(p, 'w')\n",
        "p = q = 'a'\nopen(p, 'w')\nopen(q, 'w')\n",
        "p: str = 'a'\nq: str\nopen(p, 'w')\n",
        "import os\nos.rename(a, b)\nos.rename('a', 'b')\nos.replace(src='a', dst='b')\n",
        "shutil.copy('a', dst='b')\nshutil.move(*args)\nshutil.copytree('a', 'b', **kw)\n",
        "fileinput.input('a', inplace=True)\nfileinput.input('b', inplace=False)\nfileinput.FileInput(files=['c'], inplace=1)\n",
        "open('a',\n     'w')\nopen(\n    'b',  # the file\n    'w',\n)\n",
        "x = open('a', \\\n  'w')\n",
        "\u{e9} = 'a'\nopen(\u{e9}, 'w')\n",
        "s = '\u{e9}t\u{e9}'\nopen('caf\u{e9}.txt', 'w')\n",
        "if x:\n\topen('a', 'w')\n        open('b', 'w')\n",
        "open('a', 'w')\r\nopen('b', 'w')\r\n",
        "open('a', 'w'\n",
        "open('a', 'w'))\n",
        "open('a' 'b', 'w')\n",
        "open(('a'), 'w')\nopen(('a', 'b'), 'w')\n",
        "open(r'a\\b', 'w')\nopen(b'a', 'wb')\nopen(u'a', 'w')\nopen(f'a', 'w')\nopen(rb'a', 'w')\nopen(Rb'a', 'w')\n",
        "open(f'{d}/a', 'w')\nopen(f'{{d}}/a', 'w')\n",
        "open(f\"{d['k']}\", 'w')\nopen(f'{x!r:>{w}}', 'w')\n",
        "open(f\"{x=}\", 'w')\nopen(f\"{x = !s:>10}\", 'w')\n",
        "print(f\"{open('a', 'w')}\")\n",
        "@decorator(open('a', 'w'))\ndef f():\n    pass\n",
        "f = lambda p=open('a', 'w'): p\n",
        "if (n := open('a', 'w')):\n    pass\n",
        "def f():\n    p = 'a'\n    open(p, 'w')\ndef g():\n    p = 'b'\n",
        "class A:\n    def f(self):\n        open(self.p, 'w')\n",
        "open(*args)\nopen(**kw)\nopen('a', *rest)\n",
        "os.open('a', os.O_WRONLY | os.O_CREAT)\nos.open('b', os.O_RDONLY)\nos.open('c', flags=os.O_RDWR)\n",
        "os.open('a', os.O_RDONLY  # O_WRONLY\n)\n",
        "os.open(x for x in y)\nos.remove(p for p in q if p)\n",
        "print 'hello'\nopen('a', 'w')\n",
        "exec 'code'\n",
        "exec(\"open('a', 'w')\")\n",
        "match = re.match('a', s)\nopen(match, 'w')\n",
        "match x:\n    case 1:\n        open('a', 'w')\n",
        "type X = int\n",
        "type = 'a'\nopen(type, 'w')\n",
        "async def f():\n    await open('a', 'w')\n",
        "def g():\n    yield open('a', 'w')\n",
        "x = [*a, *b]\nopen(x, 'w')\n",
        "a, b = 'x', 'y'\nopen(a, 'w')\n",
        "(a) = 'x'\nopen(a, 'w')\n",
        "[a] = ['x']\nopen(a, 'w')\n",
        "p = Path('a')\np.unlink()\np.mkdir(parents=True)\np.rename('b')\np.replace('c')\n",
        "s = 'a'\ns.replace('x', 'y')\nPath('z').replace('w')\n",
        "p = Path(Path('a'))\np.touch()\nPath().touch()\nPath('a', 'b').touch()\n",
        "io.open('a', 'w')\ncodecs.open('b', 'w', 'utf-8')\ngzip.open(name='c', mode='wb')\n",
        "x = '\\N{BULLET}'\nopen('a', 'w')\n",
        "x = 'a\\\nb'\nopen(x, 'w')\n",
        "x = 'unterminated\nopen('a', 'w')\n",
        "x = 1\n  y = 2\n",
        "  x = 1\n",
        "if x:\n    pass\n  y = 1\n",
        "if x:\n# comment\n    pass\n",
        "if x:\n    pass\n    # trailing\n# dedented\nopen('a', 'w')\n",
        "x = 0x1F + 1_000 + 1.5e-3 + 1j + .5 + 1.\nopen('a', 'w')\n",
        "x = 1if y else 2\n",
        "x = a[1:2, ::3]\ny = a[*b]\n",
        "print(x, file=open('log', 'a'))\n",
        "f = open\nf('a', 'w')\n",
        "open('a', 'w', encoding='utf-8', newline='')\n",
        "\n\n\nopen('a', 'w')\n\n\n",
        "",
        "# only a comment",
        "open('a', 'w')",
        "open('a', 'w')\\\n",
        "x = {'a': open('b', 'w'), 'c': [open('d', 'w') for _ in r]}\n",
        "def f(a, b=open('x', 'w'), *args, c: int = 1, **kw) -> open('y', 'w'):\n    pass\n",
        "class A(Base, metaclass=open('m', 'w')):\n    pass\n",
        "for p in ['a', 'b']:\n    os.remove(p)\nelse:\n    shutil.rmtree('c')\n",
        "while not done:\n    done = open('a', 'w') is not None and x not in y\n",
        "x = not a == b or c < d <= e != f\n",
        "x = -a ** -b // c % d @ e | f & g ^ h << i >> j\n",
        "x += 'a'\nopen(x, 'w')\n",
        "x = 'a'\nx += 'b'\nopen(x, 'w')\n",
        "open('a', 'w'); open('b', 'w');\n",
        "if x: open('a', 'w')\nelif y: open('b', 'w')\nelse: open('c', 'w')\n",
        "from . import x\nfrom .a.b import (c, d as e,)\nfrom x import *\nimport a.b as c, d\n",
        "global a, b\nnonlocal c\n",
        "raise ValueError('x') from None\n",
        "s = f'''\n{x}\n'''\nopen(s, 'w')\n",
        "s = f'{x:%Y-%m-%d}'\nopen(s, 'w')\n",
        "s = f'{a!r}' f'{b}' 'c'\n",
        "s = f'{x\n}'\n",
        "s = f\"{'\\n'.join(x)}\"\n",
        "s = f'{lambda x: 1}'\n",
        "x = a if b else c\ny = [a if b else c for d in e if f if g]\n",
        "x = (yield)\n",
        "x = `a`\n",
        "x = a <> b\n",
        "print >> sys.stderr, 'x'\n",
        "with (open('a', 'w') as f, open('b', 'w') as g):\n    pass\n",
        "try:\n    pass\nexcept* ValueError:\n    pass\n",
        "try:\n    pass\n",
        "x = {*a, *b}\ny = {**a, 'b': 1}\nz = {k: v for k, v in d.items()}\nw = {x for x in y}\n",
        "x = ()\ny = (1,)\nz = (a for a in b)\n",
        "open(\"a\", \"w\") if x else open(\"b\", \"w\")\n",
        "x = [\n    1,\n    2,\n]\n\nopen(x[0], 'w')\n",
        "sys.stdout.write('x')\nf.write('y')\nos.write(fd, b'z')\n",
        "open('a', 'w').__enter__()\n",
        "x = r'\\''\ny = r\"\\\"\"\nz = r'\\\\'\nopen(x, 'w')\n",
        "x = '''\\''''\n",
        "x = 'a' # comment with 'quote\nopen(x, 'w')\n",
        "x = 1 # trailing \\\nopen('a', 'w')\n",
        "\u{feff}open('a', 'w')\n",
        "open('a', 'w')\n\u{c}open('b', 'w')\n",
        "open('a', 'w')\0\n",
        "open('a', 'w')\rx = 1\n",
        "def f(*, a, b=1, **c): pass\ndef g(a, /, b): pass\nlambda *a, **k: 0\n",
        "print(open, exec)\n",
        "x.print('a')\nx.match('b')\nx.type('c')\n",
        "f(print='a', type='b', match='c')\n",
        "open('a', 'w')#c\n#c\n    #c\nopen('b', 'w')\n",
        "x = [a for (b, c) in d]\ny = [a for *b, c in d]\n",
        "if x:\n    if y:\n        open('a', 'w')\n    open('b', 'w')\nopen('c', 'w')\n",
        "if x:\n    if y:\n        open('a', 'w')\nopen('b', 'w')\n",
        "x = 1;\n",
        "x = y = z = 'a'\nopen(x, 'w')\n",
        "x, = 'a',\nopen(x, 'w')\n",
        "x = *a, b\n",
        "*a, b = c\n",
        "a.b = 'x'\na[0] = 'y'\nopen(a.b, 'w')\n",
        "del a[0], b.c\nassert x, y\nreturn\n",
        "Path('a').open('w')\nPath('b').open(mode='a')\nPath('c').open()\n",
        "p = Path('a')\nq = p\nq.open('w')\n",
        "print(f'{x:{y}}')\n",
        "print(f'{x!z}')\n",
        "print(f'{x}}')\n",
        "print(f'{{}}')\n",
        "print(f\"{x:'}\")\n",
        "print(f'{x:=^10}')\n",
        "print(f'{x==y}', f'{x!=y}', f'{x<=y}')\n",
        "print(f'{ {1: 2}[1] }')\n",
        "print(f'{a:b}' f\"{c}\")\n",
    ];

    #[test]
    fn the_reader_finds_tree_sitters_nodes_in_hand_written_programs() {
        let mut read = 0;
        for src in REALISTIC {
            assert!(check(src), "a realistic program is left to tree-sitter: {src:?}");
        }
        for src in TRICKY {
            read += usize::from(check(src));
        }
        println!("read {} realistic programs, {read} of {} hard cases", REALISTIC.len(), TRICKY.len());
        assert!(TRICKY.len() >= 60);
        // Most are plain enough to read; the rest are there to be given up on.
        assert!(read * 2 > TRICKY.len(), "{read} of {}", TRICKY.len());
    }

    #[test]
    fn deep_or_long_programs_neither_overflow_nor_take_long() {
        let deep = [
            format!("x = {}1{}\n", "(".repeat(100_000), ")".repeat(100_000)),
            format!("x = {}1\n", "-".repeat(100_000)),
            format!("x = {}1\n", "not ".repeat(50_000)),
            format!("x = {}1\n", "lambda: ".repeat(50_000)),
            format!("x = 1{}\n", " if a else 1".repeat(50_000)),
            (0..2000).map(|i| format!("{}if x:\n", " ".repeat(i))).collect::<String>(),
        ];
        for src in &deep {
            assert_eq!(read(src).err(), Some(GiveUp));
        }
        let start = std::time::Instant::now();
        for src in [format!("f(\n{})\n", "\n".repeat(1 << 16)), format!("f({}1)\n", "a.b(c)[d] + ".repeat(20_000))] {
            assert!(read(&src).is_ok());
        }
        assert!(start.elapsed().as_secs() < 5);
    }

    #[test]
    fn the_reader_gives_up_where_tree_sitter_reads_otherwise_or_finds_an_error() {
        for src in [
            "open('a', 'w'\n",
            "print 'hello'\n",
            "  x = 1\n",
            "x = 1\n  y = 2\n",
            "if x:\n    pass\n  y = 1\n",
            "if (n := open('a', 'w')):\n    pass\n",
            "async def f():\n    await open('a', 'w')\n",
            "x = `a`\n",
            "x = 'unterminated\nopen('a', 'w')\n",
            "s = f'{x\n}'\n",
            "\u{e9} = 'a'\n",
            "open('a', 'w')\rx = 1\n",
            "with (open('a', 'w') as f, open('b', 'w') as g):\n    pass\n",
        ] {
            assert_eq!(read(src).err(), Some(GiveUp), "{src:?}");
        }
    }

    const VOCABULARY: &[&str] = &[
        "open(",
        "'a.txt'",
        "\"b.txt\"",
        "'w'",
        "'r'",
        "'a+'",
        "'wb'",
        "mode=",
        ", ",
        ")",
        "(",
        "[",
        "]",
        "{",
        "}",
        ":",
        "\n",
        "\n    ",
        "\n        ",
        "    ",
        "\t",
        "\r\n",
        " ",
        "f",
        "p",
        "x",
        "=",
        " = ",
        "==",
        ".",
        ".write(",
        ".write_text(",
        "Path(",
        "pathlib.Path(",
        "os.remove(",
        "os.rename(",
        "os.open(",
        "os.O_WRONLY",
        "os.O_RDONLY",
        "shutil.copy(",
        "shutil.rmtree(",
        "fileinput.input(",
        "inplace=True",
        "inplace=0",
        "with ",
        " as ",
        "def ",
        "class ",
        "return ",
        "if ",
        "else",
        "elif ",
        "for ",
        " in ",
        "while ",
        "try:",
        "except",
        "finally:",
        "lambda ",
        "lambda x: ",
        "@",
        "#",
        "# open('c', 'w')\n",
        "\"\"\"",
        "'''",
        "\"\"\"open('d','w')\"\"\"",
        "\\\n",
        "\\",
        "r'",
        "b'",
        "f'",
        "f\"{",
        "}\"",
        "{x}",
        "{{",
        "}}",
        "!r",
        "rb'",
        "u'",
        "'it''s'",
        "\u{e9}",
        "\u{f1} = 1",
        "async ",
        "await ",
        "yield ",
        ":=",
        "print(",
        "print ",
        "exec ",
        "match ",
        "type ",
        "*",
        "**",
        "*args",
        "**kw",
        ";",
        "not ",
        " and ",
        " or ",
        "1",
        "0x1F",
        "1.5e3",
        "1_000",
        "...",
        "None",
        "True",
        "pass",
        "import os",
        "from pathlib import Path",
        "global x",
        "del x",
        "assert x",
        "raise",
        "-",
        "+",
        "%",
        "|",
        ">>",
        "<<",
        "->",
        "+=",
        "\u{c}",
        "\0",
        "'''a'b\"c'''",
        "'\\''",
        "'\\\\'",
        "r'\\'",
        "\"\\N{DASH}\"",
        ".replace(",
        ".rename(",
        ".touch()",
        ".unlink()",
        ".mkdir(",
        "io.open(",
        "codecs.open(",
        "name=",
        "file=",
        "flags=",
        "dst=",
        "target=",
        "path=",
        "\u{2028}",
        "for x in y",
        "if x",
    ];

    fn soup(rng: &mut ChaCha8Rng) -> String {
        let n = rng.random_range(1..40);
        (0..n).map(|_| *VOCABULARY.choose(rng).expect("a vocabulary")).collect()
    }

    /// Random programs of the constructs `python_writes` reads, among others.
    struct Gen<'r> {
        rng: &'r mut ChaCha8Rng,
        indent: &'static str,
        newline: &'static str,
    }

    impl Gen<'_> {
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs.choose(self.rng).expect("a choice")
        }

        fn name(&mut self) -> String {
            self.pick(&["p", "q", "f", "x", "path", "out", "match", "type", "data", "self", "_", "case"]).to_string()
        }

        fn string(&mut self) -> String {
            let prefix = self.pick(&["", "", "", "r", "b", "u", "f", "f", "rb", "F", "Rb", "fr"]);
            let quote = self.pick(&["'", "'", "\"", "\"", "'''", "\"\"\""]);
            let mut body = self.pick(&[
                "a.txt",
                "w",
                "a",
                "x+",
                "src/m.py",
                "it's",
                "{x}",
                "{{x}}",
                "a\\nb",
                "\\'",
                "#",
                "",
                "{x!r}",
                "{d['k']}",
                "{x:>5}",
                "\u{e9}",
                "{open('a', 'w')}",
                "{p.write_text(s)}",
                "{x=}",
                "{a + b:{w}}",
                "{'w' if x else \"a\"}",
            ]);
            // Mostly what Python reads: a quote inside only the other quotes.
            if body.contains('\'') && quote.starts_with('\'') && self.rng.random_bool(0.9) {
                body = "a";
            }
            if body.contains('"') && quote.starts_with('"') && self.rng.random_bool(0.9) {
                body = "b";
            }
            format!("{prefix}{quote}{body}{quote}")
        }

        /// An expression where Python takes any (`test`); mostly valid, sometimes not.
        fn expr(&mut self, depth: u32) -> String {
            if depth > 3 {
                return self.operand(depth);
            }
            let d = depth + 1;
            let loose = self.rng.random_bool(0.05);
            match self.rng.random_range(0..12) {
                0 => {
                    let op = self.pick(&["+", "|", "==", "in", "not in", "is not", "and", "or", "**", "//", "<", "%", "@", ">>"]);
                    if loose {
                        format!("{} {op} {}", self.expr(d), self.expr(d))
                    } else {
                        format!("{} {op} {}", self.operand(d), self.operand(d))
                    }
                }
                1 => format!("not {}", if loose { self.expr(d) } else { self.operand(d) }),
                2 => format!("{} if {} else {}", self.operand(d), self.operand(d), self.expr(d)),
                3 => format!("lambda {}: {}", self.pick(&["", "x", "x=1", "*a, **k"]), self.expr(d)),
                4 => format!("-{}", self.operand(d)),
                _ => self.operand(depth),
            }
        }

        /// An atom with trailers: what binary operators take.
        fn operand(&mut self, depth: u32) -> String {
            if depth > 3 {
                return if self.rng.random_bool(0.5) { self.name() } else { self.string() };
            }
            let d = depth + 1;
            match self.rng.random_range(0..20) {
                0..=2 => self.name(),
                3..=5 => self.string(),
                6 => self.pick(&["1", "0x1f", "1.5", "1_000", "1e3", "1j", "None", "True", "..."]).to_string(),
                7..=10 => {
                    let func = self.pick(&[
                        "open",
                        "Path",
                        "pathlib.Path",
                        "os.remove",
                        "os.rename",
                        "os.open",
                        "shutil.copy",
                        "shutil.move",
                        "shutil.rmtree",
                        "fileinput.input",
                        "io.open",
                        "print",
                        "f",
                        "x.write",
                        "p.write_text",
                        "p.touch",
                        "p.unlink",
                        "p.replace",
                        "s.replace",
                        "p.rename",
                        "p.open",
                        "Path('a').open",
                        "os.makedirs",
                        "codecs.open",
                    ]);
                    let n = self.rng.random_range(0..4);
                    let args: Vec<String> = (0..n).map(|_| self.argument(d, n == 1)).collect();
                    let sep = self.pick(&[", ", ",", ",\n    ", ", # c\n "]);
                    let trailing = self.pick(&["", "", ","]);
                    format!("{func}({}{})", args.join(sep), if n > 0 { trailing } else { "" })
                }
                11 => {
                    let object = if self.rng.random_bool(0.9) { self.name() } else { self.operand(d) };
                    format!("{object}.{}", self.pick(&["a", "write", "path", "O_WRONLY"]))
                }
                12 => format!("{}[{}]", self.operand(d), self.pick(&["0", "1:", "::2", "a, b", "x", "f(x)"])),
                13 => format!("[{}]", self.items(d)),
                14 => format!("({})", self.items(d)),
                15 => format!("{{{}}}", self.pick(&["", "'a': 1", "**d", "'a': open('a', 'w'), 'b': 2", "x", "k: v for k, v in d"])),
                16 => {
                    let iterable = if self.rng.random_bool(0.8) { self.name() } else { self.operand(d) };
                    format!(
                        "[{} for {} in {iterable}{}]",
                        self.expr(d),
                        self.pick(&["x", "x, y", "(a, b)"]),
                        self.pick(&["", " if x", " if x if y"])
                    )
                }
                _ => {
                    let mut inner = self.expr(d);
                    // Mostly a field the reader reads, not one it gives up on.
                    if ["f'", "f\"", "F'", "\n", "lambda", ":{", "\\"].iter().any(|s| inner.contains(s)) && self.rng.random_bool(0.8) {
                        inner = self.name();
                    }
                    let quote = if !inner.contains('\'') {
                        "'"
                    } else if !inner.contains('"') {
                        "\""
                    } else {
                        "'''"
                    };
                    format!("f{quote}{{{inner}}}{quote}")
                }
            }
        }

        fn items(&mut self, depth: u32) -> String {
            let n = self.rng.random_range(0..4);
            let items: Vec<String> =
                (0..n).map(|_| if self.rng.random_bool(0.1) { format!("*{}", self.name()) } else { self.expr(depth) }).collect();
            let trailing = if n == 1 || self.rng.random_bool(0.2) { "," } else { "" };
            format!("{}{}", items.join(", "), if n > 0 { trailing } else { "" })
        }

        fn argument(&mut self, depth: u32, alone: bool) -> String {
            match self.rng.random_range(0..10) {
                5 if !alone => self.expr(depth),
                0 => format!("mode={}", self.pick(&["'w'", "'r'", "'a'", "m"])),
                1 => format!("{}={}", self.pick(&["file", "dst", "target", "inplace", "flags", "path", "name", "type"]), self.expr(depth)),
                2 => format!("*{}", self.name()),
                3 => format!("**{}", self.name()),
                4 => self.pick(&["'w'", "'wb'", "'a+'", "'x'", "os.O_WRONLY | os.O_CREAT", "inplace=True"]).to_string(),
                5 => format!("{} for {} in {}", self.expr(depth), self.name(), self.name()),
                _ => self.expr(depth),
            }
        }

        fn block(&mut self, level: usize, depth: u32) -> String {
            let n = self.rng.random_range(1..4);
            (0..n).map(|_| self.statement(level, depth)).collect()
        }

        fn statement(&mut self, level: usize, depth: u32) -> String {
            let pad = self.indent.repeat(level);
            let nl = self.newline;
            let inner = level + 1;
            let d = depth + 1;
            let line = match self.rng.random_range(0..20) {
                0..=3 => format!("{} = {}", self.name(), self.expr(0)),
                4 => format!("{} = {} = {}", self.name(), self.name(), self.expr(0)),
                5 => format!("{}: str = {}", self.name(), self.expr(0)),
                6 => format!("{}, {} = {}, {}", self.name(), self.name(), self.expr(0), self.expr(0)),
                7 => format!("{} += {}", self.name(), self.expr(0)),
                8..=10 => self.expr(0),
                11 => self
                    .pick(&[
                        "import os",
                        "from pathlib import Path",
                        "pass",
                        "return x",
                        "del x[0]",
                        "global p",
                        "assert x, 'm'",
                        "raise",
                        "x = print",
                        "f(exec, print=print)",
                        "print",
                        "print(x)",
                        "exec(x)",
                        "type(x)",
                        "match(x)",
                        "x.print(p)",
                        "print = 1",
                        "yield x",
                    ])
                    .to_string(),
                12 => format!("# {}", self.expr(0)),
                _ if depth > 2 => "pass".to_string(),
                13 => format!("with {} as {}:{nl}{}", self.expr(0), self.name(), self.block(inner, d)),
                14 => format!("if {}:{nl}{}{pad}else:{nl}{}", self.expr(0), self.block(inner, d), self.block(inner, d)),
                15 => format!("for {} in {}:{nl}{}", self.name(), self.expr(0), self.block(inner, d)),
                16 => format!(
                    "def {}({}):{nl}{}",
                    self.name(),
                    self.pick(&["", "a", "a, b=1", "*a, **k", "a: int = 2"]),
                    self.block(inner, d)
                ),
                17 => format!(
                    "try:{nl}{}{pad}except {}:{nl}{}",
                    self.block(inner, d),
                    self.pick(&["Exception", "(A, B) as e", "OSError as e"]),
                    self.block(inner, d)
                ),
                18 => format!("@{}{nl}{pad}def g():{nl}{}", self.expr(0), self.block(inner, d)),
                _ => format!("class A({}):{nl}{}", self.pick(&["", "B", "metaclass=M"]), self.block(inner, d)),
            };
            if line.ends_with(nl) { format!("{pad}{line}") } else { format!("{pad}{line}{nl}") }
        }
    }

    /// Damages a program where real ones are damaged: a character lost, a fragment pasted in,
    /// a line lost, repeated, swapped or indented otherwise, a comment or blank line put in.
    fn mutate(rng: &mut ChaCha8Rng, src: &mut String) {
        let bounds: Vec<usize> = src.char_indices().map(|(i, _)| i).chain([src.len()]).collect();
        let at = *bounds.choose(rng).expect("a position");
        let lines: Vec<&str> = src.split_inclusive('\n').collect();
        let l = rng.random_range(0..lines.len().max(1));
        let pad = *["", " ", "  ", "    ", "\t", "        "].choose(rng).expect("a pad");
        let mut lines: Vec<String> = lines.into_iter().map(ToString::to_string).collect();
        match rng.random_range(0..9) {
            0 if at < src.len() => {
                src.remove(at);
                return;
            }
            1 => {
                src.insert_str(at, VOCABULARY.choose(rng).expect("a vocabulary"));
                return;
            }
            2 => {
                src.insert_str(at, ["\n", "\n ", "  ", "\t", "\r\n"].choose(rng).expect("a break"));
                return;
            }
            3 if l < lines.len() => {
                lines.remove(l);
            }
            4 if l < lines.len() => {
                let line = lines[l].clone();
                lines.insert(l, line);
            }
            5 if l + 1 < lines.len() => lines.swap(l, l + 1),
            6 if l < lines.len() => {
                let line = lines[l].trim_start_matches([' ', '\t']).to_string();
                lines[l] = format!("{pad}{line}");
            }
            7 => lines.insert(l.min(lines.len()), format!("{pad}# note\n")),
            _ => lines.insert(l.min(lines.len()), format!("{pad}\n")),
        }
        *src = lines.concat();
    }

    /// `COR_PY_SEED` to try other programs than the ones tested.
    fn seed(default: u64) -> u64 {
        std::env::var("COR_PY_SEED").map_or(default, |s| s.parse().expect("a number"))
    }

    #[test]
    fn the_reader_finds_tree_sitters_nodes_in_generated_programs() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed(0x5eed_c0de));
        let (mut soups, mut programs, mut damaged) = ([0usize; 2], [0usize; 2], [0usize; 2]);
        for _ in 0..10_000 {
            let src = soup(&mut rng);
            soups[usize::from(check(&src))] += 1;
        }
        for i in 0..20_000 {
            let indent = *["    ", "  ", "\t"].choose(&mut rng).expect("an indent");
            let newline = if rng.random_bool(0.1) { "\r\n" } else { "\n" };
            let mut g = Gen { rng: &mut rng, indent, newline };
            let mut src = g.block(0, 0);
            if i % 3 == 0 {
                for _ in 0..g.rng.random_range(1..3) {
                    mutate(g.rng, &mut src);
                }
                damaged[usize::from(check(&src))] += 1;
            } else {
                programs[usize::from(check(&src))] += 1;
            }
        }
        println!(
            "read (given up on): soups {} ({}), programs {} ({}), damaged {} ({})",
            soups[1], soups[0], programs[1], programs[0], damaged[1], damaged[0]
        );
        assert!(soups[1] > 100 && damaged[1] > 500, "too little read to test anything");
        // Generated programs hold what the reader gives up on too (yield-free, but walrus-free
        // f-string fields with nested quotes, `match` statements, ...): most must still be read.
        assert!(programs[1] * 2 > programs[0] + programs[1], "{programs:?}");
    }

    /// The programs `python_writes` received on a real run, one file (`COR_PY_DUMP`) of programs
    /// each followed by `\n\0\x1eCOR_DUMP_SEP\x1e\0\n`: how many the reader reads, to the same
    /// nodes, and the same of `COR_PY_MUTANTS` (default 10) damaged copies of each. Not data in
    /// git: `cargo test -- --ignored real_programs` with the variable set.
    #[test]
    #[ignore = "reads a dump of a real run named by COR_PY_DUMP"]
    fn real_programs() {
        let Ok(path) = std::env::var("COR_PY_DUMP") else { return };
        let mutants: usize = std::env::var("COR_PY_MUTANTS").map_or(10, |n| n.parse().expect("a count"));
        let dump = std::fs::read(path).expect("the dump");
        let text = String::from_utf8(dump).expect("UTF-8");
        let programs: Vec<&str> = text.split("\n\0\x1eCOR_DUMP_SEP\x1e\0\n").filter(|p| !p.is_empty()).collect();
        let (mut read, mut bytes, mut total) = (0, 0, 0);
        let mut damaged = [0usize; 2];
        let mut rng = ChaCha8Rng::seed_from_u64(seed(7));
        for p in &programs {
            total += p.len();
            if check(p) {
                read += 1;
                bytes += p.len();
            }
            for _ in 0..mutants {
                let mut m = (*p).to_string();
                for _ in 0..rng.random_range(1..4) {
                    mutate(&mut rng, &mut m);
                }
                damaged[usize::from(check(&m))] += 1;
            }
        }
        println!(
            "read {read} of {} programs, {bytes} of {total} bytes; damaged copies read {} (given up on {})",
            programs.len(),
            damaged[1],
            damaged[0]
        );
    }
}
