//! Function calls written as text: `<function=NAME>` with `<parameter=KEY>VALUE</parameter>`
//! lines, the form models without native tool calling are prompted to answer in (SWE-agent's
//! `xml_function_calling`, OpenHands' converted calls). Where a harness keeps no structured call,
//! this block in the reply is the only record of the arguments the model chose: the command line
//! the harness built from them is quoted for its shell and cannot be split back reliably.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

/// The first call in `text`, read as SWE-agent's parser reads it: a `<function=NAME>` tag
/// followed by a newline, the body up to the first `</function>`, each parameter's value
/// trimmed. `None` when the text holds no such block.
#[must_use]
pub fn first_call(text: &str) -> Option<(String, Map<String, Value>)> {
    static FUNCTION: OnceLock<Regex> = OnceLock::new();
    static PARAMETER: OnceLock<Regex> = OnceLock::new();
    if !text.contains("<function=") {
        return None;
    }
    let function = FUNCTION.get_or_init(|| Regex::new(r"(?s)<function=([^>]+)>\n(.*?)</function>").expect("static regex"));
    let parameter = PARAMETER.get_or_init(|| Regex::new(r"(?s)<parameter=([^>]+)>(.*?)</parameter>").expect("static regex"));
    let c = function.captures(text)?;
    let name = c[1].trim().to_string();
    let mut args = Map::new();
    for p in parameter.captures_iter(&c[2]) {
        args.insert(p[1].to_string(), Value::String(p[2].trim().to_string()));
    }
    Some((name, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_call_and_trims_its_values() {
        let text = "Let me fix it.\n\n<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>/testbed/a.py</parameter>\n<parameter=old_str>\n    x = 1\n</parameter>\n<parameter=new_str>    x = 2</parameter>\n</function>\n<function=bash>\n<parameter=command>ls</parameter>\n</function>";
        let (name, args) = first_call(text).unwrap();
        assert_eq!(name, "str_replace_editor");
        assert_eq!(args["command"], "str_replace");
        assert_eq!(args["path"], "/testbed/a.py");
        assert_eq!(args["old_str"], "x = 1", "values are trimmed as the harness trims them");
        assert_eq!(args["new_str"], "x = 2");
        assert_eq!(args.len(), 4, "the second call's parameters are not the first's");
    }

    #[test]
    fn a_tag_without_its_newline_or_its_end_is_no_call() {
        assert_eq!(first_call("<function=bash><parameter=command>ls</parameter></function>"), None);
        assert_eq!(first_call("<function=bash>\n<parameter=command>ls</parameter>"), None);
        assert_eq!(first_call("plain text"), None);
        let (name, args) = first_call("<function=submit>\n</function>").unwrap();
        assert_eq!((name.as_str(), args.len()), ("submit", 0));
    }
}
