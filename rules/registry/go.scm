; Tool registrations in Go harness source.
;
; Captures (read by src/registry/query.rs; every pattern sets a `shape`):
;   @definition.tool  the registration; its enclosing `if`/`case` makes the tool conditional
;   @name             a string literal that is the tool's name
;   @name.ref         an identifier or `pkg.Name` resolved to a string constant (any file)
;   @constant.name / @constant.value   a string constant, collected across files
;   @namespace        a name template filled at run time (`fmt.Sprintf("mcp__%s__%s", …)`)
;   @_…               helpers for predicates only
; Properties: (#set! shape "…") required; (#set! confidence "high|medium|low"), default high.
; Go 0.25 wraps keyed_element keys and values in literal_element, so keys match by text.

; const BashToolName = "bash"   /   var BashToolName = "bash"
(const_spec
  name: (identifier) @constant.name
  value: (expression_list . [(interpreted_string_literal) (raw_string_literal)] @constant.value .)
  (#set! shape "const"))

(var_spec
  name: (identifier) @constant.name
  value: (expression_list . [(interpreted_string_literal) (raw_string_literal)] @constant.value .)
  (#set! shape "var"))

; mcp.Tool{Name: "read_file", …}, ToolInfo{Name: "view", …}
((composite_literal
   type: [(type_identifier) (qualified_type) (generic_type)] @_type
   body: (literal_value
     (keyed_element
       key: (literal_element (identifier) @_key)
       value: (literal_element [(interpreted_string_literal) (raw_string_literal)] @name)))) @definition.tool
  (#match? @_type "Tool")
  (#not-match? @_type "Tool(Call|Result|Output|Event|Invocation|Use|Choice)")
  (#eq? @_key "Name")
  (#set! shape "struct-field"))

; ToolInfo{Name: ViewToolName, …}
((composite_literal
   type: [(type_identifier) (qualified_type) (generic_type)] @_type
   body: (literal_value
     (keyed_element
       key: (literal_element (identifier) @_key)
       value: (literal_element [(identifier) (selector_expression)] @name.ref)))) @definition.tool
  (#match? @_type "Tool")
  (#not-match? @_type "Tool(Call|Result|Output|Event|Invocation|Use|Choice)")
  (#eq? @_key "Name")
  (#set! shape "struct-field"))

; fantasy.NewAgentTool(BashToolName, …), NewParallelAgentTool, mcp.NewTool("read_file", …)
((call_expression
   function: [(identifier) (selector_expression)] @_fn
   arguments: (argument_list . [(interpreted_string_literal) (raw_string_literal)] @name)) @definition.tool
  (#match? @_fn "(^|\\.)New(Parallel)?(Agent)?Tool$")
  (#set! shape "constructor"))

((call_expression
   function: [(identifier) (selector_expression)] @_fn
   arguments: (argument_list . [(identifier) (selector_expression)] @name.ref)) @definition.tool
  (#match? @_fn "(^|\\.)New(Parallel)?(Agent)?Tool$")
  (#set! shape "constructor"))

; fmt.Sprintf("mcp__%s__%s", server, tool)
((call_expression
   function: (selector_expression) @_fn
   arguments: (argument_list . (interpreted_string_literal) @namespace))
  (#eq? @_fn "fmt.Sprintf")
  (#match? @namespace "^\"[A-Za-z][A-Za-z0-9]*__%")
  (#set! shape "sprintf-namespace"))
