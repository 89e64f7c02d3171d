//===- Diagnostics.h - Printing compiler diagnostics ------------*- C++ -*-===//
#ifndef TPC_TOOLS_TPC_DIAGNOSTICS_H
#define TPC_TOOLS_TPC_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace tpc::cli {

/// Prints each diagnostic as "tpc CMD: error: MESSAGE [at node 'N']" on
/// stderr: messages already name the file and node, so locations are only
/// added where they say more.
class ScopedDiagnosticPrinter {
public:
  ScopedDiagnosticPrinter(mlir::MLIRContext &ctx, const char *cmd)
      : ctx(ctx), cmd(cmd) {
    id = ctx.getDiagEngine().registerHandler([this](mlir::Diagnostic &d) {
      const char *sev = d.getSeverity() == mlir::DiagnosticSeverity::Error
                            ? "error"
                        : d.getSeverity() == mlir::DiagnosticSeverity::Warning
                            ? "warning"
                            : "note";
      std::string msg = d.str();
      llvm::errs() << "tpc " << this->cmd << ": " << sev << ": " << msg;
      if (auto name = llvm::dyn_cast<mlir::NameLoc>(d.getLocation())) {
        std::string node = name.getName().str();
        if (msg.find("'" + node + "'") == std::string::npos)
          llvm::errs() << " (at node '" << node << "')";
      }
      llvm::errs() << "\n";
      // The pass manager's "see current operation" dumps IR the user did
      // not write; the message already names the node.
      for (const mlir::Diagnostic &note : d.getNotes())
        if (note.str().rfind("see current operation", 0) != 0)
          llvm::errs() << "  note: " << note.str() << "\n";
      return mlir::success();
    });
  }
  ~ScopedDiagnosticPrinter() { ctx.getDiagEngine().eraseHandler(id); }

private:
  mlir::MLIRContext &ctx;
  const char *cmd;
  mlir::DiagnosticEngine::HandlerID id;
};

} // namespace tpc::cli

#endif
