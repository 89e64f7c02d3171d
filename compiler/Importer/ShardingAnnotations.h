//===- ShardingAnnotations.h - ONNX IR-11 sharding annotations --*- C++ -*-===//
//
// ONNX (IR version 11) lets a model say how tensors are distributed over
// devices: ModelProto.configuration names device configurations (a name and
// a device count), and NodeProto.device_configurations gives, per
// configuration, a ShardingSpecProto for some of the node's inputs and
// outputs (which axis is cut into how many shards, over which devices).
// tpc reads them as user intent: the importer checks and records them on
// the ops (kShardingSpecsAttr, kDeviceConfigurationsAttr), and the sharding
// pass honours them or refuses with a reason.
//
// Debian's ONNX protobuf classes predate these fields, so they are decoded
// from the messages' unknown fields.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_COMPILER_IMPORTER_SHARDINGANNOTATIONS_H
#define TPC_COMPILER_IMPORTER_SHARDINGANNOTATIONS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class NodeProto;
} // namespace onnx

namespace tpc {

/// On the module: the model's device configurations, an array of
/// {name = "...", devices = N}.
inline constexpr llvm::StringLiteral kDeviceConfigurationsAttr =
    "onnx.device_configurations";
/// On an op: the annotations of the node it came from that name one of its
/// operands or results, an array of {configuration = "...", tensor = "...",
/// operand = i | result = i, axis = a (-1: whole), shards = n}.
inline constexpr llvm::StringLiteral kShardingSpecsAttr =
    "onnx.sharding_specs";

struct DeviceConfiguration {
  std::string name;
  int64_t numDevices = 0;
  /// The devices' names, when the model lists them.
  std::vector<std::string> devices;
};

struct TensorShardingSpec {
  std::string tensor;
  /// Indices of the configuration's devices that hold the shards, in shard
  /// order.
  std::vector<int64_t> devices;
  bool hasDeviceGroups = false;
  /// -1 when no axis is sharded.
  int64_t axis = -1;
  int64_t shards = 1;
  /// The size of the sharded axis the annotation states, -1 if none.
  int64_t dimValue = -1;
};

struct NodeDeviceConfiguration {
  std::string configuration;
  int64_t pipelineStage = 0;
  std::vector<TensorShardingSpec> specs;
};

/// Reads ModelProto.configuration. False with `error` set when malformed.
bool readDeviceConfigurations(const ::onnx::ModelProto &model,
                              std::vector<DeviceConfiguration> &out,
                              std::string &error);
/// Reads NodeProto.device_configurations. False with `error` set when
/// malformed or using what tpc cannot honour (device groups, pipeline
/// stages, more than one sharded axis, nested shardings).
bool readNodeConfigurations(const ::onnx::NodeProto &node,
                            std::vector<NodeDeviceConfiguration> &out,
                            std::string &error);

} // namespace tpc

#endif
