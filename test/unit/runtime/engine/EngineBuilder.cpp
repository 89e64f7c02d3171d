//===- EngineBuilder.cpp - Small engine folders for runtime tests ---------===//
#include "EngineBuilder.h"

#include "runtime/io/Safetensors.h"
#include "runtime/support/Sha256.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace tpc::test {

plan::Attr intsAttr(const std::string &name, std::vector<int64_t> values) {
  plan::Attr a;
  a.set_name(name);
  a.set_kind(plan::Attr::INTS);
  for (int64_t v : values)
    a.add_ints(v);
  return a;
}

plan::Attr floatAttr(const std::string &name, double value) {
  plan::Attr a;
  a.set_name(name);
  a.set_kind(plan::Attr::FLOATS);
  a.add_floats(value);
  return a;
}

plan::Attr stringAttr(const std::string &name, const std::string &value) {
  plan::Attr a;
  a.set_name(name);
  a.set_kind(plan::Attr::STRING);
  a.set_str(value);
  return a;
}

RankBuilder::RankBuilder(int rank, int worldSize) {
  plan_.set_format_version(1);
  plan_.set_rank(rank);
  plan_.set_world_size(worldSize);
  plan_.set_producer("EngineBuilder");
}

uint32_t RankBuilder::arena(const std::string &name, DType dtype, Shape shape) {
  plan::Buffer *b = plan_.add_buffers();
  uint32_t id = uint32_t(plan_.buffers_size() - 1);
  b->set_id(id);
  b->set_kind(plan::Buffer::ARENA);
  b->set_dtype(int32_t(dtype));
  for (int64_t d : shape)
    b->add_shape(d);
  b->set_name(name);
  b->set_offset(arenaEnd_);
  TensorDesc desc{dtype, shape};
  plan_.set_unplanned_bytes(plan_.unplanned_bytes() + desc.bytes());
  arenaEnd_ = (arenaEnd_ + desc.bytes() + 63) / 64 * 64;
  plan_.set_arena_bytes(arenaEnd_);
  return id;
}

uint32_t RankBuilder::weight(const std::string &name,
                             const std::vector<float> &values, Shape shape) {
  plan::Buffer *b = plan_.add_buffers();
  uint32_t id = uint32_t(plan_.buffers_size() - 1);
  b->set_id(id);
  b->set_kind(plan::Buffer::WEIGHT);
  b->set_dtype(int32_t(DType::F32));
  for (int64_t d : shape)
    b->add_shape(d);
  b->set_name(name);
  b->set_tensor(name);
  Tensor t{name, {DType::F32, shape}, {}};
  t.bytes.resize(values.size() * sizeof(float));
  if (!values.empty())
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  tensors_.push_back(std::move(t));
  return id;
}

plan::Step &RankBuilder::step(const std::string &kernel,
                              std::vector<uint32_t> inputs,
                              std::vector<uint32_t> outputs,
                              std::vector<plan::Attr> attrs,
                              const std::string &node) {
  plan::Step *s = plan_.add_steps();
  s->set_kernel(kernel);
  for (uint32_t id : inputs)
    s->add_inputs(id);
  for (uint32_t id : outputs)
    s->add_outputs(id);
  for (plan::Attr &a : attrs)
    *s->add_attrs() = a;
  s->set_node(node.empty() ? kernel + "_" + std::to_string(plan_.steps_size())
                           : node);
  return *s;
}

void RankBuilder::bindInput(const std::string &name, uint32_t buffer) {
  plan::Binding *b = plan_.add_inputs();
  b->set_name(name);
  b->set_buffer(buffer);
}

void RankBuilder::bindOutput(const std::string &name, uint32_t buffer) {
  plan::Binding *b = plan_.add_outputs();
  b->set_name(name);
  b->set_buffer(buffer);
}

EngineBuilder::EngineBuilder(int tp) {
  for (int r = 0; r < tp; ++r)
    ranks_.emplace_back(r, tp);
}

void EngineBuilder::addInput(const std::string &name, const TensorDesc &desc) {
  inputs_.push_back({name, desc});
}

void EngineBuilder::addOutput(const std::string &name, const TensorDesc &desc) {
  outputs_.push_back({name, desc});
}

namespace {

nlohmann::json specs(const std::vector<std::pair<std::string, TensorDesc>> &v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto &[name, desc] : v)
    a.push_back({{"name", name},
                 {"dtype", dtypeName(desc.dtype)},
                 {"shape", desc.shape}});
  return a;
}

Status fileRecord(const std::string &dir, const std::string &file,
                  nlohmann::json &out) {
  std::string digest;
  TPC_RETURN_IF_ERROR(sha256File(dir + "/" + file, digest));
  out = {{"file", file},
         {"bytes", std::filesystem::file_size(dir + "/" + file)},
         {"sha256", digest}};
  return Status::ok();
}

} // namespace

Status EngineBuilder::write(
    const std::string &dir,
    const std::function<void(std::string &)> &editManifest) {
  std::filesystem::create_directories(dir);
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < tp(); ++r) {
    RankBuilder &rb = ranks_[size_t(r)];
    std::string planFile = "rank" + std::to_string(r) + ".plan";
    std::string weightsFile = "rank" + std::to_string(r) + ".safetensors";
    std::string bytes;
    if (!rb.plan().SerializeToString(&bytes))
      return Status::error("cannot serialize the plan of rank " +
                           std::to_string(r));
    std::ofstream(dir + "/" + planFile, std::ios::binary)
        .write(bytes.data(), std::streamsize(bytes.size()));

    std::vector<SafetensorsEntry> entries;
    for (const RankBuilder::Tensor &t : rb.tensors())
      entries.push_back({t.name, t.desc});
    SafetensorsWriter w;
    TPC_RETURN_IF_ERROR(w.open(dir + "/" + weightsFile, entries));
    for (const RankBuilder::Tensor &t : rb.tensors())
      TPC_RETURN_IF_ERROR(w.writeTensor(t.name, t.bytes.data()));
    TPC_RETURN_IF_ERROR(w.close());

    nlohmann::json planRec, weightsRec;
    TPC_RETURN_IF_ERROR(fileRecord(dir, planFile, planRec));
    TPC_RETURN_IF_ERROR(fileRecord(dir, weightsFile, weightsRec));
    ranks.push_back({{"rank", r}, {"plan", planRec}, {"weights", weightsRec}});
  }
  nlohmann::json manifest = {
      {"format", "tpc-engine"},
      {"format_version", 1},
      {"producer", {{"name", "tpc"}, {"version", "test"}}},
      {"options", {{"tp", tp()}}},
      {"tp", tp()},
      {"inputs", specs(inputs_)},
      {"outputs", specs(outputs_)},
      {"ranks", ranks}};
  std::string text = manifest.dump(2);
  if (editManifest)
    editManifest(text);
  std::ofstream(dir + "/engine.json", std::ios::binary) << text;
  return Status::ok();
}

Status resealManifest(const std::string &dir) {
  std::ifstream in(dir + "/engine.json");
  nlohmann::json m = nlohmann::json::parse(in);
  for (nlohmann::json &rank : m["ranks"])
    for (const char *key : {"plan", "weights"}) {
      nlohmann::json rec;
      TPC_RETURN_IF_ERROR(
          fileRecord(dir, rank[key]["file"].get<std::string>(), rec));
      rank[key] = rec;
    }
  std::ofstream(dir + "/engine.json", std::ios::trunc) << m.dump(2);
  return Status::ok();
}

std::vector<double> matmulRef(const std::vector<float> &a,
                              const std::vector<float> &b, int64_t m,
                              int64_t k, int64_t n) {
  std::vector<double> c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(a[size_t(i * k + p)]) * double(b[size_t(p * n + j)]);
      c[size_t(i * n + j)] = s;
    }
  return c;
}

std::vector<float> testValues(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 12345u;
  for (float &f : v) {
    x = x * 1664525u + 1013904223u;
    f = float(int32_t(x >> 8) % 2000 - 1000) / 1000.0f;
  }
  return v;
}

void flipByte(const std::string &path, int64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  int64_t size = int64_t(f.tellg());
  int64_t at = offset < 0 ? size + offset : offset;
  f.seekg(at);
  char c = 0;
  f.read(&c, 1);
  c = char(c ^ 0x01);
  f.seekp(at);
  f.write(&c, 1);
}

} // namespace tpc::test
