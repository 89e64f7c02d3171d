# tpc_dialect_tablegen(NAME DIALECT TARGET): the op and dialect declarations
# and definitions of NAME.td (NAME.h.inc, NAME.cpp.inc, NAMEDialect.h.inc,
# NAMEDialect.cpp.inc) for the dialect named DIALECT, behind the public
# tablegen target TARGET. Extra generators go before the call, as in
# mlir_tablegen.
function(tpc_dialect_tablegen name dialect target)
  set(LLVM_TARGET_DEFINITIONS ${name}.td)
  mlir_tablegen(${name}.h.inc -gen-op-decls)
  mlir_tablegen(${name}.cpp.inc -gen-op-defs)
  mlir_tablegen(${name}Dialect.h.inc -gen-dialect-decls -dialect=${dialect})
  mlir_tablegen(${name}Dialect.cpp.inc -gen-dialect-defs -dialect=${dialect})
  add_public_tablegen_target(${target})
endfunction()
