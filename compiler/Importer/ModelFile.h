//===- ModelFile.h - Reading ONNX files and their weights -------*- C++ -*-===//
#ifndef TPC_COMPILER_IMPORTER_MODELFILE_H
#define TPC_COMPILER_IMPORTER_MODELFILE_H

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <map>
#include <string>

namespace tpc {

/// Where the bytes of one initializer live.
struct WeightLocation {
  std::string file; // relative to the model's folder
  int64_t offset = 0;
  int64_t length = 0;
};

/// Parses `path` into `model`. On failure returns false with `error` set to a
/// message that names the file. Initializer raw_data is released after
/// parsing; `inlineWeights` gets its position in the model file instead.
bool loadModelFile(const std::string &path, ::onnx::ModelProto &model,
                   std::map<std::string, WeightLocation> &inlineWeights,
                   std::string &error);

/// Resolves a tensor stored as external data: checks that the path stays
/// inside `modelDir`, that the file exists and holds offset + length bytes,
/// and that length equals `expectedBytes`. Errors start with `what` (by
/// default "external data of initializer 'NAME'").
bool resolveExternalData(const ::onnx::TensorProto &tensor,
                         const std::string &modelDir, int64_t expectedBytes,
                         WeightLocation &loc, std::string &error,
                         std::string what = "");

} // namespace tpc

#endif
