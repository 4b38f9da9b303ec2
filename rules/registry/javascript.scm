; Tool registrations in JavaScript harness source.
;
; Captures (read by src/registry/query.rs; every pattern sets a `shape`):
;   @definition.tool  the registration; an enclosing `if`/`case`/ternary makes it conditional
;   @name             a string literal that is the tool's name
;   @name.ref         an identifier or `TOOLS.BASH` resolved to a string constant (any file)
;   @constant.name / @constant.value   a string constant, collected across files;
;   @constant.scope   the enum or object holding it (`TOOLS.BASH`)
;   @namespace        a name template filled at run time (`mcp__${server}__${tool}`)
;   @_…               helpers for predicates only
; Properties: (#set! shape "…") required; (#set! confidence "high|medium|low"), default high.
; (#has-key? @capture "k1" "k2" …): the captured object, dict, call or struct literal has a
; key (or keyword argument, or field) named one of these, in any order. It is checked by the
; extractor in one pass over the node's children: two sibling-pair patterns would try every
; pair of pairs, which is quadratic on large object literals.
; One registration node yields one tool: @name beats @name.ref.

; const BASH_TOOL_NAME = "bash"  /  var BASH_TOOL_NAME = "bash"
(lexical_declaration
  (variable_declarator
    name: (identifier) @constant.name
    value: (string) @constant.value)
  (#set! shape "const"))

(variable_declaration
  (variable_declarator
    name: (identifier) @constant.name
    value: (string) @constant.value)
  (#set! shape "var"))

; export const TOOLS = { BASH: "bash" }  →  TOOLS.BASH
(variable_declarator
  name: (identifier) @constant.scope
  value: (object
    (pair key: (property_identifier) @constant.name value: (string) @constant.value))
  (#set! shape "object-constant"))

; Tool.define("bash", …)
((call_expression
   function: (member_expression object: (identifier) @_o property: (property_identifier) @_p)
   arguments: (arguments . (string) @name)) @definition.tool
  (#eq? @_o "Tool")
  (#eq? @_p "define")
  (#set! shape "tool-define"))

; Tool.define(BASH_TOOL_NAME, …)
((call_expression
   function: (member_expression object: (identifier) @_o property: (property_identifier) @_p)
   arguments: (arguments . [(identifier) (member_expression)] @name.ref)) @definition.tool
  (#eq? @_o "Tool")
  (#eq? @_p "define")
  (#set! shape "tool-define"))

; { name: "bash", parameters: … } / input_schema / inputSchema, keys in any order
((object
   (pair key: [(property_identifier) (string)] @_k value: (string) @name)) @definition.tool
  (#match? @_k "^[\"']?name[\"']?$")
  (#has-key? @definition.tool "parameters" "input_schema" "inputSchema")
  (#set! shape "object-schema")
  (#set! confidence "medium"))

((object
   (pair key: [(property_identifier) (string)] @_k value: [(identifier) (member_expression)] @name.ref)) @definition.tool
  (#match? @_k "^[\"']?name[\"']?$")
  (#has-key? @definition.tool "parameters" "input_schema" "inputSchema")
  (#set! shape "object-schema")
  (#set! confidence "medium"))

; { name: "bash", description: … }: other data has this shape too, so least sure
((object
   (pair key: [(property_identifier) (string)] @_k value: [(string) @name (identifier) @name.ref (member_expression) @name.ref])) @definition.tool
  (#match? @_k "^[\"']?name[\"']?$")
  (#has-key? @definition.tool "description")
  (#set! shape "object-description")
  (#set! confidence "low"))

; `mcp__${server}__${tool}`
((template_string) @namespace
  (#match? @namespace "^`[A-Za-z][A-Za-z0-9]*__\\$\\{")
  (#set! shape "template-namespace"))
