; Tool registrations in Python harness source.
;
; Captures (read by src/registry/query.rs; every pattern sets a `shape`):
;   @definition.tool  the registration; an enclosing `if`/`match`/ternary makes it conditional
;   @name             a string literal that is the tool's name
;   @name.ref         an identifier or `module.NAME` resolved to a string constant (any file)
;   @name.ident       an identifier whose own text is the name (a function decorated @tool)
;   @constant.name / @constant.value   a string constant, collected across files;
;   @constant.scope   the class holding it (`ToolNames.BASH`)
;   @namespace        a name template filled at run time (f"mcp__{server}__{tool}")
;   @_…               helpers for predicates only
; Properties: (#set! shape "…") required; (#set! confidence "high|medium|low"), default high.
; (#has-key? @capture "k1" …): the captured dict, call or class has a key or keyword argument
; named one of these, in any order (checked by the extractor in one pass over the children).
; One registration node yields one tool: @name beats @name.ref beats @name.ident.

; EXECUTE_BASH_TOOL_NAME = "execute_bash"  (also annotated: NAME: str = "x")
(expression_statement
  (assignment
    left: (identifier) @constant.name
    right: (string) @constant.value)
  (#set! shape "constant"))

; class ToolName(str, Enum): BASH = "bash"  →  ToolName.BASH
(class_definition
  name: (identifier) @constant.scope
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @constant.name
        right: (string) @constant.value)))
  (#set! shape "class-constant"))

; {"name": "bash", "parameters": …} / "input_schema" / "function", keys in any order
((dictionary
   (pair key: (string (string_content) @_k) value: (string) @name)) @definition.tool
  (#eq? @_k "name")
  (#has-key? @definition.tool "parameters" "input_schema" "inputSchema" "function")
  (#set! shape "dict"))

((dictionary
   (pair key: (string (string_content) @_k) value: [(identifier) (attribute)] @name.ref)) @definition.tool
  (#eq? @_k "name")
  (#has-key? @definition.tool "parameters" "input_schema" "inputSchema" "function")
  (#set! shape "dict"))

; ChatCompletionToolParamFunctionChunk(name=…), Command(name=…), ToolParam(name=…)
((call
   function: [(identifier) (attribute)] @_fn
   arguments: (argument_list
     (keyword_argument name: (identifier) @_k value: (string) @name))) @definition.tool
  (#match? @_fn "(^|\\.)(Command|[A-Za-z_]*ToolParam[A-Za-z_]*|FunctionDeclaration)$")
  (#eq? @_k "name")
  (#set! shape "call-keyword"))

((call
   function: [(identifier) (attribute)] @_fn
   arguments: (argument_list
     (keyword_argument name: (identifier) @_k value: [(identifier) (attribute)] @name.ref))) @definition.tool
  (#match? @_fn "(^|\\.)(Command|[A-Za-z_]*ToolParam[A-Za-z_]*|FunctionDeclaration)$")
  (#eq? @_k "name")
  (#set! shape "call-keyword"))

; Tool(name="x", …), StructuredTool(name=…): a generic constructor, so less sure
((call
   function: [(identifier) (attribute)] @_fn
   arguments: (argument_list
     (keyword_argument name: (identifier) @_k value: (string) @name))) @definition.tool
  (#match? @_fn "(^|\\.)[A-Za-z_]*Tool$")
  (#eq? @_k "name")
  (#set! shape "call-keyword")
  (#set! confidence "medium"))

; dict(name="bash", parameters=…): only beside a tool-schema keyword
((call
   function: (identifier) @_fn
   arguments: (argument_list
     (keyword_argument name: (identifier) @_k value: [(string) @name (identifier) @name.ref (attribute) @name.ref]))) @definition.tool
  (#eq? @_fn "dict")
  (#eq? @_k "name")
  (#has-key? @definition.tool "parameters" "input_schema" "description" "function")
  (#set! shape "dict-call"))

; @tool / @function_tool / @mcp.tool / @tool() above `def name(…)`: the function's name
((decorated_definition
   (decorator [(identifier) @_d (attribute) @_d (call function: [(identifier) (attribute)] @_d)])
   definition: (function_definition name: (identifier) @name.ident)) @definition.tool
  (#match? @_d "(^|\\.)(tool|function_tool)$")
  (#set! shape "decorator"))

; @tool("name") / @mcp.tool("name"): the decorator's first argument
((decorated_definition
   (decorator (call
     function: [(identifier) (attribute)] @_d
     arguments: (argument_list . (string) @name)))) @definition.tool
  (#match? @_d "(^|\\.)(tool|function_tool)$")
  (#set! shape "decorator"))

; @tool(name="x") / @mcp.tool(name="x") / @function_tool(name_override="x")
((decorated_definition
   (decorator (call
     function: [(identifier) (attribute)] @_d
     arguments: (argument_list (keyword_argument name: (identifier) @_k value: (string) @name))))) @definition.tool
  (#match? @_d "(^|\\.)(tool|function_tool)$")
  (#any-of? @_k "name" "name_override")
  (#set! shape "decorator"))

; class BashTool(BaseTool): name = "bash"   (LangChain, smolagents)
((class_definition
   superclasses: (argument_list) @_bases
   body: (block
     (expression_statement
       (assignment left: (identifier) @_k right: (string) @name)))) @definition.tool
  (#match? @_bases "Tool")
  (#eq? @_k "name")
  (#set! shape "class-attribute")
  (#set! confidence "medium"))

; f"mcp__{server}__{tool}"
((string) @namespace
  (#match? @namespace "^[fF][\"'][A-Za-z][A-Za-z0-9]*__\\{")
  (#set! shape "fstring-namespace"))

; "mcp__{}__{}".format(server, tool)
((call
   function: (attribute object: (string) @namespace attribute: (identifier) @_f))
  (#eq? @_f "format")
  (#match? @namespace "^[\"'][A-Za-z][A-Za-z0-9]*__\\{")
  (#set! shape "format-namespace"))
