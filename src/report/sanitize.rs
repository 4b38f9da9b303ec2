//! Makes untrusted transcript text safe to print: in a terminal, and in Markdown.
//!
//! Transcripts quote whatever the agent, the tools and the environment wrote, and that can
//! include terminal control sequences (a captured tmux screen, a hostile tool output) that
//! would retitle the window, clear the screen, hide text or plant a hyperlink in the
//! reviewer's terminal. Every byte that can start or continue a control function is replaced
//! by a visible stand-in, so the sequence is shown as inert text instead of being obeyed;
//! nothing is dropped, because a reviewer should see that a transcript tried.
//!
//! Every command prints through [`emit`] (`cli::output`), so a renderer that forgets to sanitize
//! a field still cannot drive the terminal. Colour is asked for with [`style`] markers, which
//! only [`emit`] turns into escape sequences; text from a transcript cannot carry one (its
//! markers are made visible like any other control).

use std::borrow::Cow;

/// Styles a renderer may ask for. They are characters of Unicode's private use area, which
/// [`terminal`] makes visible in untrusted text, so only the renderer's own survive to [`emit`].
pub mod style {
    pub const RESET: &str = "\u{E000}";
    pub const BOLD: &str = "\u{E001}";
    pub const DIM: &str = "\u{E002}";
    pub const YELLOW: &str = "\u{E003}";
    pub const BOLD_YELLOW: &str = "\u{E004}";
    pub const RED: &str = "\u{E005}";
    /// The marker range, all of it reserved.
    pub(super) const RANGE: std::ops::RangeInclusive<u32> = 0xE000..=0xE00F;

    /// The escape sequence a marker stands for.
    pub(super) fn ansi(c: char) -> &'static str {
        match u32::from(c) {
            0xE000 => "\x1b[0m",
            0xE001 => "\x1b[1m",
            0xE002 => "\x1b[2m",
            0xE003 => "\x1b[33m",
            0xE004 => "\x1b[1;33m",
            0xE005 => "\x1b[31m",
            _ => "",
        }
    }
}

/// Text as it goes to stdout or stderr: [`terminal`], except that [`style`] markers become
/// their escape sequences. The one path every command prints through.
#[must_use]
pub fn emit(s: &str) -> Cow<'_, str> {
    visible(s, true)
}

/// JSON text made safe for a terminal without changing what it means: every character
/// [`terminal`] would replace (they can only occur inside JSON strings; serde_json already
/// escapes C0) is written as a `\uXXXX` escape, so a parser reads back the same string.
#[must_use]
pub fn json(s: &str) -> Cow<'_, str> {
    let escapes = |c: char| c != '\r' && needs_escape(c);
    let Some(first) = first_json_escape(s, escapes) else { return Cow::Borrowed(s) };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if escapes(c) {
            use std::fmt::Write as _;
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Where the first character `escapes` accepts starts, found by a byte scan: JSON lines are
/// megabytes of text with none of them, and decoding every character cost a tenth of `coroner
/// ingest` to stdout. Blocks of 64 bytes are tested without a branch per byte (which the compiler
/// turns into vector compares); only a block holding a byte that may start such a character is
/// walked, and only those bytes are decoded.
fn first_json_escape(s: &str, escapes: impl Fn(char) -> bool) -> Option<usize> {
    const BLOCK: usize = 64;
    let bytes = s.as_bytes();
    let mut base = 0;
    for block in bytes.chunks(BLOCK) {
        if block.iter().fold(false, |any, &b| any | may_start_escape(b)) {
            for (k, &b) in block.iter().enumerate() {
                // Such a byte is ASCII or a lead byte, so a character starts there.
                if may_start_escape(b)
                    && let Some(c) = s[base + k..].chars().next()
                    && escapes(c)
                {
                    return Some(base + k);
                }
            }
        }
        base += block.len();
    }
    None
}

/// Text safe to write to a terminal.
///
/// - C0 controls other than newline and tab become their Unicode control pictures
///   (`ESC` → `␛`, `BEL` → `␇`, `CR` → `␍`, `BS` → `␈`); a CR directly before a newline
///   (Windows line ends) is dropped.
/// - DEL becomes `␡`.
/// - C1 controls (U+0080–U+009F, among them the 8-bit CSI, OSC and DCS introducers) become
///   `␛` and their 7-bit equivalent (U+009B → `␛[`), which is what they mean.
/// - Bidirectional embedding, override and isolate characters (U+202A–U+202E,
///   U+2066–U+2069), which reorder what is displayed (Trojan Source), become `<U+202E>`.
/// - The [`style`] markers (U+E000–U+E00F) become `<U+E001>`, so a transcript cannot colour.
///
/// Since every ANSI CSI, OSC (window title, hyperlink), DCS, APC/PM/SOS and other ESC
/// sequence needs an ESC or a C1 introducer, none of them survives. Returns the input
/// unchanged, without allocating, when it holds none of these characters.
#[must_use]
pub fn terminal(s: &str) -> Cow<'_, str> {
    visible(s, false)
}

/// [`terminal`], or with `styles` [`emit`]: one walk over the text for both.
fn visible(s: &str, styles: bool) -> Cow<'_, str> {
    if !s.bytes().any(may_start_escape) || !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if styles && style::RANGE.contains(&u32::from(c)) {
            out.push_str(style::ansi(c));
        } else {
            push_visible(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// A byte that can begin a character [`needs_escape`] accepts: a C0 control other than newline
/// and tab, DEL, or the lead byte of U+0080–U+009F (`C2`), of the bidi controls (`E2`) or of
/// the style markers (`EE`). Text without one (nearly all text) is answered by a byte scan
/// instead of decoding every character.
fn may_start_escape(b: u8) -> bool {
    // Bitwise, not short-circuit: no branch, so a loop over bytes can be vectorized.
    ((b < 0x20) & (b != b'\n') & (b != b'\t')) | (b == 0x7f) | (b == 0xc2) | (b == 0xe2) | (b == 0xee)
}

fn needs_escape(c: char) -> bool {
    let u = u32::from(c);
    (u < 0x20 && c != '\n' && c != '\t') || (0x7f..=0x9f).contains(&u) || is_bidi_control(c) || style::RANGE.contains(&u)
}

fn is_bidi_control(c: char) -> bool {
    matches!(u32::from(c), 0x202A..=0x202E | 0x2066..=0x2069)
}

fn push_visible(out: &mut String, c: char) {
    let u = u32::from(c);
    if !needs_escape(c) {
        out.push(c);
    } else if u < 0x20 {
        out.push(char::from_u32(0x2400 + u).unwrap_or('?'));
    } else if u == 0x7f {
        out.push('␡');
    } else if (0x80..=0x9f).contains(&u) {
        out.push('␛');
        out.push(char::from_u32(u - 0x40).unwrap_or('?'));
    } else {
        out.push_str(&format!("<U+{u:04X}>"));
    }
}

/// Text safe to put inline in Markdown: terminal controls neutralized as by [`terminal`],
/// every ASCII punctuation character with a Markdown meaning backslash-escaped, and HTML
/// specials (`<`, `>`, `&`, `"`) written as entities, so nothing in the text can become
/// markup, a link, an image, raw HTML or a table cell boundary. Newlines are kept; callers
/// that need one line (a table cell) replace them.
#[must_use]
pub fn markdown(s: &str) -> String {
    let clean = terminal(s);
    let mut out = String::with_capacity(clean.len() + clean.len() / 4);
    for c in clean.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '.' | '!' | '|' | '~' | '^' | '=' | ':'
            | '$' | '@' | '\'' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// [`markdown`] on one line: newlines and tabs become spaces (for table cells and headings).
#[must_use]
pub fn markdown_line(s: &str) -> String {
    markdown(&s.replace(['\n', '\t'], " "))
}

/// A fenced Markdown code block holding `s` verbatim (after [`terminal`]): the fence is one
/// backtick longer than the longest run of backticks in the text (at least three), so no line
/// of the text can close it early. `info` is the info string (`text`, `json`); it is reduced
/// to ASCII alphanumerics.
#[must_use]
pub fn code_block(s: &str, info: &str) -> String {
    let clean = terminal(s);
    let longest = longest_run(&clean, '`');
    let fence = "`".repeat((longest + 1).max(3));
    let info: String = info.chars().filter(char::is_ascii_alphanumeric).collect();
    let mut out = format!("{fence}{info}\n{clean}");
    if !clean.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
}

/// Text safe in HTML, as element content or as a quoted attribute value: terminal controls
/// neutralized as by [`terminal`] (a report is also read by people who copy from it into a
/// terminal), then `&`, `<`, `>`, `"` and `'` written as entities, so nothing in the text can
/// open a tag, close one, end an attribute or start an entity. The HTML report never puts
/// transcript text into a URL, a script or a style: those contexts get coroner's own names.
#[must_use]
pub fn html(s: &str) -> String {
    let clean = terminal(s);
    let mut out = String::with_capacity(clean.len() + 16);
    // The specials are ASCII, so the text between them is copied whole (a page holds megabytes).
    let mut from = 0;
    for (i, b) in clean.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&clean[from..i]);
        out.push_str(entity);
        from = i + 1;
    }
    out.push_str(&clean[from..]);
    out
}

/// JSON text to embed in an HTML `<script type="application/json">` element, which a page
/// reads with `JSON.parse` (data, never code): `<`, `>` and `&` become `\u` escapes so no
/// string in it can close the element or open a comment, and U+2028/U+2029 are escaped as
/// well. The JSON means the same after this.
#[must_use]
pub fn json_in_html(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            _ => out.push(c),
        }
    }
    out
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for x in s.chars() {
        if x == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_prefilter_misses_no_character_that_needs_escaping() {
        for u in 0..=0x10FFFFu32 {
            let Some(c) = char::from_u32(u) else { continue };
            if needs_escape(c) {
                let mut buf = [0; 4];
                assert!(may_start_escape(c.encode_utf8(&mut buf).as_bytes()[0]), "U+{u:04X}");
            }
        }
    }

    #[test]
    fn html_escapes_markup_quotes_and_controls() {
        let s = html("<script>alert('x')</script>\" onerror=\"a&b\u{1b}]0;t\u{7}");
        assert_eq!(s, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot; onerror=&quot;a&amp;b␛]0;t␇");
    }

    #[test]
    fn json_in_html_cannot_close_its_element_and_still_parses() {
        let v = serde_json::json!({"t": "</script><!-- & \u{2028}"});
        let out = json_in_html(&v.to_string());
        assert!(!out.contains('<') && !out.contains('>') && !out.contains('&') && !out.contains('\u{2028}'));
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(terminal("ls -la\n\tdone ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_kind_of_sequence_is_made_inert_and_visible() {
        let cases = [
            ("\x1b]0;pwned\x07", "␛]0;pwned␇"),     // OSC 0 window title, BEL-terminated
            ("\x1b]2;pwned\x1b\\", "␛]2;pwned␛\\"), // OSC 2 title, ST-terminated
            ("\x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\", "␛]8;;https://evil.example␛\\x␛]8;;␛\\"), // OSC 8 hyperlink
            ("\x1b[2J\x1b[H", "␛[2J␛[H"),           // clear screen, cursor home
            ("\x1b[8mhidden\x1b[0m", "␛[8mhidden␛[0m"), // conceal
            ("\x1b[5A", "␛[5A"),                    // cursor up
            ("\u{9b}31m", "␛[31m"),                 // 8-bit CSI
            ("\u{9d}0;t\u{9c}", "␛]0;t␛\\"),        // 8-bit OSC and ST
            ("\x1bP1$r\x1b\\", "␛P1$r␛\\"),         // DCS
            ("\x1bc", "␛c"),                        // RIS (full reset)
            ("a\x08b\rc\x00\x7f", "a␈b␍c␀␡"),
            ("x\u{202E}gnp.exe\u{202C}", "x<U+202E>gnp.exe<U+202C>"), // bidi override
            ("\u{2066}\u{2069}", "<U+2066><U+2069>"),                 // isolates
            ("line\r\nnext", "line\nnext"),
        ];
        for (raw, want) in cases {
            let got = terminal(raw);
            assert_eq!(got, want, "{raw:?}");
            assert!(!got.chars().any(needs_escape), "{got:?}");
        }
    }

    #[test]
    fn only_a_renderers_markers_become_colour() {
        let untrusted = format!("a{}b\x1b[31mc", style::RED);
        let painted = format!("{}{}{}", style::BOLD, terminal(&untrusted), style::RESET);
        assert_eq!(emit(&painted), "\x1b[1ma<U+E005>b␛[31mc\x1b[0m");
        assert_eq!(emit("plain\r\n"), "plain\n");
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_its_controls() {
        let v = serde_json::json!({"t": "x\u{9b}2J\u{202e}y\u{7f}\u{1b}[0m\u{E001}"});
        let text = serde_json::to_string_pretty(&v).unwrap();
        let safe = json(&text);
        assert!(!safe.chars().any(needs_escape), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }

    /// The byte scan gives what escaping every character one by one gives, wherever the first
    /// candidate falls and whatever precedes it (lookalike lead bytes, a kept CR).
    #[test]
    fn json_escapes_exactly_what_a_character_walk_escapes() {
        let reference = |s: &str| -> String {
            s.chars().map(|c| if c != '\r' && needs_escape(c) { format!("\\u{:04x}", u32::from(c)) } else { c.to_string() }).collect()
        };
        let pieces = ["a", "é", "—", "\u{2028}", "\u{202e}", "\u{9b}", "\u{7f}", "\r", "\n", "\u{E001}", "\u{E010}", "€", "\u{1b}"];
        for i in 0..pieces.len() {
            for j in 0..pieces.len() {
                for k in 0..pieces.len() {
                    let s = format!("{}x{}y{}", pieces[i], pieces[j], pieces[k]);
                    assert_eq!(json(&s), reference(&s), "{s:?}");
                }
            }
        }
        assert!(matches!(json("plain — text é"), Cow::Borrowed(_)));
    }

    #[test]
    fn markdown_escapes_markup_and_html() {
        let got = markdown("<img src=x onerror=alert(1)> **b** [l](u) `c` | x & \x1b[2J");
        assert!(!got.contains('<') && !got.contains('>') && !got.contains('\x1b'), "{got}");
        assert!(got.contains("&lt;img") && got.contains("\\*\\*b\\*\\*") && got.contains("\\[l\\]\\(u\\)") && got.contains("\\|"));
        assert!(got.contains("&amp;") && got.contains("␛\\[2J"), "{got}");
        assert_eq!(markdown_line("a\nb"), "a b");
    }

    #[test]
    fn fences_outrun_backticks_inside() {
        let block = code_block("a ```` b\n```\n", "te`xt");
        assert!(block.starts_with("`````text\n"), "{block}");
        assert!(block.ends_with("\n`````\n"), "{block}");
        assert_eq!(code_block("x", "").lines().next(), Some("```"));
    }
}
