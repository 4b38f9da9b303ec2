; Tool registrations in Rust harness source.
;
; Captures (read by src/registry/query.rs; every pattern sets a `shape`):
;   @definition.tool  the registration; an enclosing `if`/`match` arm makes it conditional
;   @name             a string literal that is the tool's name
;   @name.ref         a constant (`SHELL_TOOL_NAME`, `tools::NAME`) resolved across files
;   @name.ident       an identifier whose own text is the name (a fn under #[tool])
;   @constant.name / @constant.value   a string constant, collected across files
;   @namespace        a name template filled at run time (format!("mcp__{}__{}", …))
;   @_…               helpers for predicates only
; Properties: (#set! shape "…") required; (#set! confidence "high|medium|low"), default high.

; const SHELL_TOOL_NAME: &str = "shell";  static …
(const_item
  name: (identifier) @constant.name
  value: (string_literal) @constant.value
  (#set! shape "const"))

(static_item
  name: (identifier) @constant.name
  value: (string_literal) @constant.value
  (#set! shape "static"))

; registry.register("shell", handler)
((call_expression
   function: (field_expression field: (field_identifier) @_m)
   arguments: (arguments . (string_literal) @name)) @definition.tool
  (#match? @_m "^register(_handler|_tool)?$")
  (#set! shape "register"))

; registry.register(SHELL_TOOL_NAME, handler)
((call_expression
   function: (field_expression field: (field_identifier) @_m)
   arguments: (arguments . [(identifier) (scoped_identifier)] @name.ref)) @definition.tool
  (#match? @_m "^register(_handler|_tool)?$")
  (#set! shape "register"))

; impl Tool for Shell { fn name(&self) -> &str { "shell" } }
((impl_item
   trait: [(type_identifier) (scoped_type_identifier) (generic_type)] @_t
   body: (declaration_list
     (function_item
       name: (identifier) @_fn
       body: (block . (string_literal) @name)))) @definition.tool
  (#match? @_t "Tool")
  (#eq? @_fn "name")
  (#set! shape "impl-tool"))

; … { "shell".to_string() } / { "shell".into() }
((impl_item
   trait: [(type_identifier) (scoped_type_identifier) (generic_type)] @_t
   body: (declaration_list
     (function_item
       name: (identifier) @_fn
       body: (block . (call_expression
         function: (field_expression value: (string_literal) @name field: (field_identifier) @_conv)))))) @definition.tool
  (#match? @_t "Tool")
  (#eq? @_fn "name")
  (#any-of? @_conv "to_string" "into" "to_owned")
  (#set! shape "impl-tool"))

; … { SHELL_TOOL_NAME }
((impl_item
   trait: [(type_identifier) (scoped_type_identifier) (generic_type)] @_t
   body: (declaration_list
     (function_item
       name: (identifier) @_fn
       body: (block . [(identifier) (scoped_identifier)] @name.ref)))) @definition.tool
  (#match? @_t "Tool")
  (#eq? @_fn "name")
  (#set! shape "impl-tool"))

; ResponsesApiTool { name: "shell", … }
((struct_expression
   name: [(type_identifier) (scoped_type_identifier)] @_t
   body: (field_initializer_list
     (field_initializer field: (field_identifier) @_f value: (string_literal) @name))) @definition.tool
  (#match? @_t "Tool")
  (#not-match? @_t "Tool(Call|Result|Output|Event|Invocation|Use|Choice)")
  (#eq? @_f "name")
  (#set! shape "struct-field"))

; ResponsesApiTool { name: "shell".to_string(), … }  (also .into(), .to_owned())
((struct_expression
   name: [(type_identifier) (scoped_type_identifier)] @_t
   body: (field_initializer_list
     (field_initializer
       field: (field_identifier) @_f
       value: (call_expression
         function: (field_expression value: (string_literal) @name field: (field_identifier) @_conv))))) @definition.tool
  (#match? @_t "Tool")
  (#not-match? @_t "Tool(Call|Result|Output|Event|Invocation|Use|Choice)")
  (#eq? @_f "name")
  (#any-of? @_conv "to_string" "into" "to_owned")
  (#set! shape "struct-field"))

; ResponsesApiTool { name: String::from("shell"), … }
((struct_expression
   name: [(type_identifier) (scoped_type_identifier)] @_t
   body: (field_initializer_list
     (field_initializer
       field: (field_identifier) @_f
       value: (call_expression
         function: (scoped_identifier) @_from
         arguments: (arguments . (string_literal) @name))))) @definition.tool
  (#match? @_t "Tool")
  (#not-match? @_t "Tool(Call|Result|Output|Event|Invocation|Use|Choice)")
  (#eq? @_f "name")
  (#match? @_from "::from$")
  (#set! shape "struct-field"))

; ResponsesApiTool { name: SHELL_TOOL_NAME.to_string(), … } / name: SHELL_TOOL_NAME
((struct_expression
   name: [(type_identifier) (scoped_type_identifier)] @_t
   body: (field_initializer_list
     (field_initializer
       field: (field_identifier) @_f
       value: [
         (identifier) @name.ref
         (scoped_identifier) @name.ref
         (call_expression function: (field_expression value: [(identifier) (scoped_identifier)] @name.ref field: (field_identifier) @_conv))
       ]))) @definition.tool
  (#match? @_t "Tool")
  (#not-match? @_t "Tool(Call|Result|Output|Event|Invocation|Use|Choice)")
  (#eq? @_f "name")
  (#set! shape "struct-field"))

; rmcp::model::Tool::new("shell", description, schema): the MCP SDK's constructor. Only a
; path ending in `Tool` itself: `ShellTool::new(…)` builds a handler, not a declaration.
((call_expression
   function: (scoped_identifier path: [(identifier) (scoped_identifier)] @_t name: (identifier) @_new)
   arguments: (arguments . (string_literal) @name)) @definition.tool
  (#match? @_t "(^|::)Tool$")
  (#eq? @_new "new")
  (#set! shape "tool-new"))

; Tool::new("shell".to_string(), …)  (also .into(), .to_owned())
((call_expression
   function: (scoped_identifier path: [(identifier) (scoped_identifier)] @_t name: (identifier) @_new)
   arguments: (arguments .
     (call_expression function: (field_expression value: (string_literal) @name field: (field_identifier) @_conv)))) @definition.tool
  (#match? @_t "(^|::)Tool$")
  (#eq? @_new "new")
  (#any-of? @_conv "to_string" "into" "to_owned")
  (#set! shape "tool-new"))

; Tool::new(SHELL_TOOL_NAME, …) / Tool::new(SHELL_TOOL_NAME.to_string(), …)
((call_expression
   function: (scoped_identifier path: [(identifier) (scoped_identifier)] @_t name: (identifier) @_new)
   arguments: (arguments . [
     (identifier) @name.ref
     (scoped_identifier) @name.ref
     (call_expression function: (field_expression value: [(identifier) (scoped_identifier)] @name.ref))
   ])) @definition.tool
  (#match? @_t "(^|::)Tool$")
  (#eq? @_new "new")
  (#set! shape "tool-new"))

; vec![Tool::new("shell".to_string(), …), …]: inside a macro the call is only tokens, so the
; name is the first token of the argument list (`rmcp::model::Tool::new` ends the same way)
((token_tree
   (identifier) @_t . "::" . (identifier) @_new . (token_tree . (string_literal) @name) @definition.tool)
  (#eq? @_t "Tool")
  (#eq? @_new "new")
  (#set! shape "tool-new"))

; vec![Tool::new(SHELL_TOOL_NAME.to_string(), …)]: a lone constant; a path (`tools::NAME`)
; is several tokens and is left out rather than read as its first segment
((token_tree
   (identifier) @_t . "::" . (identifier) @_new . (token_tree . (identifier) @name.ref . ["." ","]) @definition.tool)
  (#eq? @_t "Tool")
  (#eq? @_new "new")
  (#set! shape "tool-new"))

; #[tool(name = "shell", …)]
((attribute_item
   (attribute
     [(identifier) (scoped_identifier)] @_a
     arguments: (token_tree (identifier) @_k . "=" . (string_literal) @name))) @definition.tool
  (#match? @_a "(^|::)tool$")
  (#eq? @_k "name")
  (#set! shape "tool-attribute"))

; #[tool(…)] / #[tool] directly above `fn shell(…)`: the function's name
((declaration_list
   (attribute_item (attribute [(identifier) (scoped_identifier)] @_a)) @definition.tool
   .
   (function_item name: (identifier) @name.ident))
  (#match? @_a "(^|::)tool$")
  (#set! shape "tool-attribute"))

; json!({"name": "shell", …}) and one level deeper ({"function": {"name": …}})
((macro_invocation
   macro: (identifier) @_m
   (token_tree
     (token_tree
       (string_literal (string_content) @_k) . ":" . (string_literal) @name) @definition.tool))
  (#eq? @_m "json")
  (#eq? @_k "name")
  (#set! shape "json-macro"))

((macro_invocation
   macro: (identifier) @_m
   (token_tree
     (token_tree
       (token_tree
         (string_literal (string_content) @_k) . ":" . (string_literal) @name) @definition.tool)))
  (#eq? @_m "json")
  (#eq? @_k "name")
  (#set! shape "json-macro"))

; format!("mcp__{}__{}", server, tool)
((macro_invocation
   macro: (identifier) @_m
   (token_tree . (string_literal) @namespace))
  (#eq? @_m "format")
  (#match? @namespace "^\"[A-Za-z][A-Za-z0-9]*__\\{")
  (#set! shape "format-namespace"))
