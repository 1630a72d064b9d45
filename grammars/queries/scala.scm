; Tag queries for Scala: the shipped tags.scm also tags vals, vars, class parameters and each
; enum case (one-line chunks); these keep the definitions worth a chunk.

(class_definition name: (_) @name) @definition.class
(object_definition name: (_) @name) @definition.object
(trait_definition name: (_) @name) @definition.trait
(enum_definition name: (_) @name) @definition.enum
(function_definition name: (_) @name) @definition.function
(given_definition name: (_) @name body: (_)) @definition.object
