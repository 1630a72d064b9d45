; Tag queries for Rust: the shipped tags.scm calls structs and enums classes and leaves impl
; blocks out, so methods had no owner. Here an impl block is a definition of kind "impl"
; named after its type, and the functions in it become its methods.

(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.struct
(type_item name: (type_identifier) @name) @definition.type
(trait_item name: (type_identifier) @name) @definition.trait
(mod_item name: (identifier) @name body: (_)) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(function_item name: (identifier) @name) @definition.function

(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
  ]) @definition.impl
(impl_item type: (_) @name) @definition.impl
