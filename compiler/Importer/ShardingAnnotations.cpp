//===- ShardingAnnotations.cpp - ONNX IR-11 sharding annotations ----------===//
#include "compiler/Importer/ShardingAnnotations.h"

#include "onnx/onnx_pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/unknown_field_set.h>

namespace tpc {
namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// Field numbers of the IR-11 messages (onnx.proto).
constexpr int kModelConfiguration = 26;
constexpr int kNodeDeviceConfigurations = 10;
namespace device_configuration {
constexpr int kName = 1, kNumDevices = 2, kDevice = 3;
}
namespace node_configuration {
constexpr int kConfigurationId = 1, kShardingSpec = 2, kPipelineStage = 3;
}
namespace sharding_spec {
constexpr int kTensorName = 1, kDevice = 2, kIndexToDeviceGroupMap = 3,
              kShardedDim = 4;
}
namespace sharded_dim {
constexpr int kAxis = 1, kSimpleSharding = 2;
}
namespace simple_sharding {
constexpr int kDimValue = 1, kDimParam = 2, kNumShards = 3;
}

/// A sub-message's fields; false when the bytes are not a message.
bool parse(const UnknownField &f, UnknownFieldSet &out) {
  return f.type() == UnknownField::TYPE_LENGTH_DELIMITED &&
         out.ParseFromString(f.length_delimited());
}

bool readString(const UnknownField &f, std::string &out) {
  if (f.type() != UnknownField::TYPE_LENGTH_DELIMITED)
    return false;
  out = f.length_delimited();
  return true;
}

bool readInt(const UnknownField &f, int64_t &out) {
  if (f.type() != UnknownField::TYPE_VARINT)
    return false;
  out = int64_t(f.varint());
  return true;
}

/// A repeated int64, packed (a run of varints) or not.
bool appendInts(const UnknownField &f, std::vector<int64_t> &out) {
  if (f.type() == UnknownField::TYPE_VARINT) {
    out.push_back(int64_t(f.varint()));
    return true;
  }
  if (f.type() != UnknownField::TYPE_LENGTH_DELIMITED)
    return false;
  const std::string &bytes = f.length_delimited();
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t *>(bytes.data()), int(bytes.size()));
  while (in.BytesUntilLimit() > 0) {
    uint64_t v;
    if (!in.ReadVarint64(&v))
      return false;
    out.push_back(int64_t(v));
  }
  return true;
}

/// Reads each field of `fields` with `read` until one is malformed (`read`
/// returns false); false then.
template <typename Read>
bool readFields(const UnknownFieldSet &fields, Read &&read) {
  for (int i = 0; i < fields.field_count(); ++i)
    if (!read(fields.field(i)))
      return false;
  return true;
}

bool readSpec(const UnknownFieldSet &fields, TensorShardingSpec &spec,
              std::string &error) {
  int dims = 0;
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField &f = fields.field(i);
    bool ok = true;
    switch (f.number()) {
    case sharding_spec::kTensorName:
      ok = readString(f, spec.tensor);
      break;
    case sharding_spec::kDevice:
      ok = appendInts(f, spec.devices);
      break;
    case sharding_spec::kIndexToDeviceGroupMap:
      spec.hasDeviceGroups = true;
      break;
    case sharding_spec::kShardedDim: {
      UnknownFieldSet dim;
      ok = parse(f, dim);
      if (!ok)
        break;
      if (++dims > 1) {
        error = "shards more than one axis, which tpc does not support";
        return false;
      }
      int simple = 0;
      for (int j = 0; j < dim.field_count() && ok; ++j) {
        const UnknownField &d = dim.field(j);
        if (d.number() == sharded_dim::kAxis) {
          ok = readInt(d, spec.axis);
        } else if (d.number() == sharded_dim::kSimpleSharding) {
          UnknownFieldSet s;
          ok = parse(d, s);
          if (++simple > 1) {
            error = "shards an axis in more than one level, which tpc does "
                    "not support";
            return false;
          }
          ok = ok && readFields(s, [&](const UnknownField &x) {
                 if (x.number() == simple_sharding::kDimValue)
                   return readInt(x, spec.dimValue);
                 if (x.number() == simple_sharding::kNumShards)
                   return readInt(x, spec.shards);
                 if (x.number() == simple_sharding::kDimParam)
                   spec.dimValue = -1;
                 return true;
               });
        }
      }
      if (ok && simple == 0) {
        error = "names a sharded axis without a simple_sharding";
        return false;
      }
      if (ok && spec.axis < 0) {
        error = "shards a negative axis";
        return false;
      }
      break;
    }
    default:
      break;
    }
    if (!ok) {
      error = "is not a well-formed ShardingSpecProto";
      return false;
    }
  }
  if (spec.tensor.empty()) {
    error = "has a sharding spec without a tensor_name";
    return false;
  }
  if (spec.hasDeviceGroups) {
    error = "maps shards to device groups (index_to_device_group_map), "
            "which tpc does not support";
    return false;
  }
  if (spec.shards < 1) {
    error = "shards an axis into " + std::to_string(spec.shards) + " parts";
    return false;
  }
  return true;
}

} // namespace

bool readDeviceConfigurations(const ::onnx::ModelProto &model,
                              std::vector<DeviceConfiguration> &out,
                              std::string &error) {
  const UnknownFieldSet &fields =
      model.GetReflection()->GetUnknownFields(model);
  for (int i = 0; i < fields.field_count(); ++i) {
    if (fields.field(i).number() != kModelConfiguration)
      continue;
    UnknownFieldSet c;
    DeviceConfiguration config;
    bool ok =
        parse(fields.field(i), c) && readFields(c, [&](const UnknownField &f) {
          if (f.number() == device_configuration::kName)
            return readString(f, config.name);
          if (f.number() == device_configuration::kNumDevices)
            return readInt(f, config.numDevices);
          if (f.number() == device_configuration::kDevice)
            return readString(f, config.devices.emplace_back());
          return true;
        });
    if (!ok) {
      error = "a device configuration (ModelProto.configuration) is not a "
              "well-formed DeviceConfigurationProto";
      return false;
    }
    if (config.name.empty() || config.numDevices < 1) {
      error = "device configuration '" + config.name +
              "' needs a name and num_devices >= 1";
      return false;
    }
    if (!config.devices.empty() &&
        int64_t(config.devices.size()) != config.numDevices) {
      error = "device configuration '" + config.name + "' lists " +
              std::to_string(config.devices.size()) + " devices but has " +
              "num_devices " + std::to_string(config.numDevices);
      return false;
    }
    for (const DeviceConfiguration &o : out)
      if (o.name == config.name) {
        error = "device configuration '" + config.name + "' is defined twice";
        return false;
      }
    out.push_back(std::move(config));
  }
  return true;
}

bool readNodeConfigurations(const ::onnx::NodeProto &node,
                            std::vector<NodeDeviceConfiguration> &out,
                            std::string &error) {
  const UnknownFieldSet &fields = node.GetReflection()->GetUnknownFields(node);
  for (int i = 0; i < fields.field_count(); ++i) {
    if (fields.field(i).number() != kNodeDeviceConfigurations)
      continue;
    UnknownFieldSet c;
    NodeDeviceConfiguration config;
    if (!parse(fields.field(i), c)) {
      error = "its device_configurations entry is not a well-formed "
              "NodeDeviceConfigurationProto";
      return false;
    }
    for (int j = 0; j < c.field_count(); ++j) {
      const UnknownField &f = c.field(j);
      bool ok = true;
      if (f.number() == node_configuration::kConfigurationId) {
        ok = readString(f, config.configuration);
      } else if (f.number() == node_configuration::kPipelineStage) {
        ok = readInt(f, config.pipelineStage);
      } else if (f.number() == node_configuration::kShardingSpec) {
        UnknownFieldSet s;
        TensorShardingSpec spec;
        if (!parse(f, s)) {
          ok = false;
        } else if (!readSpec(s, spec, error)) {
          if (!spec.tensor.empty())
            error = "for tensor '" + spec.tensor + "' " + error;
          return false;
        }
        config.specs.push_back(std::move(spec));
      }
      if (!ok) {
        error = "its device_configurations entry is not a well-formed "
                "NodeDeviceConfigurationProto";
        return false;
      }
    }
    if (config.pipelineStage != 0) {
      error = "places it in pipeline stage " +
              std::to_string(config.pipelineStage) +
              "; tpc does not support pipeline parallelism";
      return false;
    }
    out.push_back(std::move(config));
  }
  return true;
}

} // namespace tpc
