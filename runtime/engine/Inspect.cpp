//===- Inspect.cpp - What an engine folder holds --------------------------===//
#include "runtime/engine/Inspect.h"

#include "kernels/cpu/Bgemm.h"
#include "kernels/cpu/QuantMatMul.h"
#include "kernels/cpu/Sgemm.h"
#include "kernels/cpu/VectorMath.h"

#include "runtime/engine/RankPlan.h"
#include "runtime/support/MappedFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <set>
#include <regex>
#include <sstream>

namespace tpc::runtime {

Status readRankPlan(const EngineManifest &m, int rank, RankPlan &out) {
  if (rank < 0 || rank >= m.tp)
    return Status::error("rank " + std::to_string(rank) +
                         " does not exist in an engine with tp " +
                         std::to_string(m.tp));
  const RankRecord &rec = m.ranks[size_t(rank)];
  TPC_RETURN_IF_ERROR(verifyFile(m, rec.plan));
  MappedFile file;
  TPC_RETURN_IF_ERROR(MappedFile::open(m.pathOf(rec.plan.file), file)
                          .withContext(rec.plan.file + ": "));
  return parseRankPlan(file.data(), file.size(), rec.plan.file, out);
}

namespace {

Status summarizeRank(const EngineManifest &m, int rank, bool verifyWeights,
                     RankSummary &out) {
  const RankRecord &rec = m.ranks[size_t(rank)];
  TPC_RETURN_IF_ERROR(verifyFile(m, rec.weights, verifyWeights));
  RankPlan plan;
  TPC_RETURN_IF_ERROR(readRankPlan(m, rank, plan));

  out.rank = rank;
  out.planFile = rec.plan.file;
  out.weightsFile = rec.weights.file;
  out.steps = plan.steps.size();
  out.buffers = plan.buffers.size();
  out.arena = plan.arena;
  std::set<std::string> weights;
  uint64_t arenaSum = 0;
  for (const PlanBuffer &b : plan.buffers) {
    if (b.kind == BufferKind::Arena)
      arenaSum += b.bytes;
    else if (b.kind == BufferKind::State)
      out.stateBytes += b.bytes;
    else if (weights.insert(b.tensor).second) {
      out.weightBytes += b.bytes;
      out.weightBytesByDType[dtypeName(b.desc.dtype)] += b.bytes;
    }
  }
  // Prefer the compiler's figure; older plans may not record it.
  if (!out.arena.unplannedBytes)
    out.arena.unplannedBytes = arenaSum;

  std::map<std::string, CollectiveSummary> collectives;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    ++out.kernelCounts[s.kernel];
    if (s.kind != StepKind::Kernel) {
      CollectiveSummary &c = collectives[s.kernel];
      c.kind = s.kernel;
      ++c.count;
      // The full tensor: the output of a gather, the input otherwise.
      uint32_t id = s.kind == StepKind::AllGather
                        ? (s.outputs.empty() ? kAbsentBuffer : s.outputs[0])
                        : (s.inputs.empty() ? kAbsentBuffer : s.inputs[0]);
      if (id != kAbsentBuffer)
        c.bytes += plan.buffers[id].bytes;
      continue;
    }
    // A weight MatMul reads a weight buffer, or carries the role the
    // sharding pass gave it (its weight may reach it through a transpose
    // step, as a tied LM head does).
    std::string role = s.attrs.getString("tp_role", "");
    if ((s.kernel == "MatMul" || s.kernel == "Gemm" ||
         s.kernel == "MatMulBias" || s.kernel == "MatMulNBits") &&
        s.inputs.size() >= 2 && s.inputs[1] != kAbsentBuffer &&
        (plan.buffers[s.inputs[1]].kind == BufferKind::Weight ||
         !role.empty())) {
      const PlanBuffer &w = plan.buffers[s.inputs[1]];
      out.weightMatMuls.push_back(
          {i, s.kernel, s.node,
           w.kind == BufferKind::Weight ? w.tensor : std::string("(computed)"),
           w.desc, role, s.attrs.getString("tp_reason", "")});
      if (s.kernel == "MatMulNBits") {
        out.weightMatMuls.back().bits = s.attrs.getInt("bits", 0);
        out.weightMatMuls.back().blockSize = s.attrs.getInt("block_size", 0);
      }
    }
  }
  for (auto &kv : collectives)
    out.collectives.push_back(kv.second);
  return Status::ok();
}


std::string specList(const std::vector<TensorSpec> &specs) {
  std::string s;
  for (const TensorSpec &t : specs)
    s += (s.empty() ? "" : ", ") + t.name + " " + t.str();
  return s.empty() ? "none" : s;
}

nlohmann::json specsJson(const std::vector<TensorSpec> &specs) {
  nlohmann::json a = nlohmann::json::array();
  for (const TensorSpec &t : specs)
    a.push_back({{"name", t.name},
                 {"dtype", dtypeName(t.desc.dtype)},
                 {"shape", t.desc.shape}});
  for (size_t i = 0; i < specs.size(); ++i)
    if (!specs[i].dims.empty())
      a[i]["dims"] = specs[i].dims;
  return a;
}

/// The weight MatMul/Gemm steps as a table with aligned columns.
std::string formatWeightMatMuls(const std::vector<WeightMatMul> &rows) {
  std::vector<std::vector<std::string>> cells = {
      {"step", "kernel", "node", "weight (local)", "tp_role", ""}};
  for (const WeightMatMul &w : rows)
    cells.push_back({std::to_string(w.step), w.kernel,
                     w.node.empty() ? "-" : w.node,
                     w.weightTensor + " " + w.weight.str() +
                         (w.bits ? " " + std::to_string(w.bits) +
                                       "-bit, blocks of " +
                                       std::to_string(w.blockSize)
                                 : std::string()),
                     w.tpRole.empty() ? "-" : w.tpRole,
                     w.tpReason.empty() ? "" : "(" + w.tpReason + ")"});
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto &row : cells)
    for (size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  std::string out = "  weight matmuls:\n";
  for (const auto &row : cells) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i)
      line += "  " + row[i] +
              (i + 1 < row.size() ? std::string(width[i] - row[i].size(), ' ')
                                  : std::string());
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

} // namespace

std::string humanBytes(uint64_t n) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof(buf), "%llu B", (unsigned long long)n);
  else
    std::snprintf(buf, sizeof(buf), "%llu (%.1f %s)", (unsigned long long)n, v,
                  units[u]);
  return buf;
}

Status inspectEngine(const std::string &dir, EngineSummary &out,
                     bool verifyWeights) {
  out = EngineSummary();
  TPC_RETURN_IF_ERROR(
      EngineManifest::load(dir, out.manifest, /*holdFolder=*/true));
  FolderRelease release(out.manifest);
  out.ranks.resize(size_t(out.manifest.tp));
  out.weightsVerified = verifyWeights;
  for (int r = 0; r < out.manifest.tp; ++r)
    TPC_RETURN_IF_ERROR(summarizeRank(out.manifest, r, verifyWeights,
                                      out.ranks[size_t(r)]));
  return Status::ok();
}

std::string formatSummaryText(const EngineSummary &s) {
  const EngineManifest &m = s.manifest;
  std::ostringstream os;
  os << "engine   " << m.dir << "\n";
  os << "format   tpc-engine version " << m.formatVersion;
  if (!m.producerName.empty())
    os << ", produced by " << m.producerName << " " << m.producerVersion;
  os << "\n";
  os << "tp       " << m.tp << "\n";
  os << "cpu      " << cpu::sgemmKernelName() << " GEMM, "
     << cpu::bgemmKernelName(cpu::bgemmKernel()) << " bf16 GEMM, "
     << cpu::vectorIsaName(cpu::vectorMathIsa()) << " vector math, "
     << cpu::blockQuantKernelName()
     << " 4/8-bit GEMM on this machine (chosen at load)\n";
  os << "files    sizes and plan digests checked; weight digests "
     << (s.weightsVerified ? "checked" : "not checked (--no-verify)") << "\n";
  os << "inputs   " << specList(m.inputs) << "\n";
  os << "outputs  " << specList(m.outputs) << "\n";
  if (!m.symbols.empty()) {
    os << "dims     ";
    for (size_t k = 0; k < m.symbols.size(); ++k)
      os << (k ? ", " : "") << m.symbols[k].name << " " << m.symbols[k].min
         << ".." << m.symbols[k].max;
    os << " at run time, read from the inputs; every size and the arena "
          "below are at the maxima\n";
  }
  if (const GenerationSpec &g = m.generation; g.kvCacheLength)
    os << "decode   "
       << (g.maxNewTokens > 1
               ? "up to " + std::to_string(g.maxNewTokens) +
                     " tokens per forward (a prompt prefilled at once, then "
                     "one at a time; tpc generate)"
               : std::string("one token per forward (tpc generate)"))
       << ": KV caches of " << g.kvCacheLength << " positions; ids '"
       << g.idsInput << "', cache position '" << g.positionInput << "'"
       << (g.maskInput.empty() ? "" : ", mask '" + g.maskInput + "'")
       << (g.positionsInput.empty() ? ""
                                    : ", positions '" + g.positionsInput + "'")
       << ", logits '" << g.logitsOutput << "'\n";
  for (const RankSummary &r : s.ranks) {
    os << "\nrank " << r.rank << " (" << r.planFile << ", " << r.weightsFile
       << ")\n";
    os << "  steps           " << r.steps << "\n";
    os << "  buffers         " << r.buffers << "\n";
    os << "  weight bytes    " << humanBytes(r.weightBytes);
    if (r.weightBytesByDType.size() > 1) {
      const char *sep = " (";
      for (const auto &kv : r.weightBytesByDType) {
        os << sep << kv.first << " " << humanBytes(kv.second);
        sep = ", ";
      }
      os << ")";
    }
    os << "\n";
    if (r.stateBytes)
      os << "  state bytes     " << humanBytes(r.stateBytes)
         << " (KV caches, kept across forwards)\n";
    os << "  arena bytes     " << humanBytes(r.arena.bytes);
    if (r.arena.lowerBoundBytes)
      os << " (" << std::fixed << std::setprecision(2)
         << double(r.arena.bytes) / double(r.arena.lowerBoundBytes)
         << std::defaultfloat << " x the liveness lower bound, "
         << humanBytes(r.arena.lowerBoundBytes) << ")";
    os << "\n";
    os << "  unplanned bytes " << humanBytes(r.arena.unplannedBytes) << "\n";
    if (r.collectives.empty())
      os << "  collectives     none\n";
    for (const CollectiveSummary &c : r.collectives)
      os << "  collective      " << c.kind << " x" << c.count << ", "
         << humanBytes(c.bytes) << " per forward\n";
    os << "  kernels:\n";
    for (const auto &kv : r.kernelCounts) {
      char line[128];
      std::snprintf(line, sizeof(line), "    %-24s %6d\n", kv.first.c_str(),
                    kv.second);
      os << line;
    }
    if (!r.weightMatMuls.empty())
      os << formatWeightMatMuls(r.weightMatMuls);
  }
  return os.str();
}

std::string formatSummaryJson(const EngineSummary &s) {
  using nlohmann::json;
  const EngineManifest &m = s.manifest;
  json root = {{"engine", m.dir},
               {"format_version", m.formatVersion},
               {"producer", {{"name", m.producerName},
                             {"version", m.producerVersion}}},
               {"tp", m.tp},
               {"weights_verified", s.weightsVerified},
               {"gemm_kernel", cpu::sgemmKernelName()},
               {"bf16_gemm_kernel", cpu::bgemmKernelName(cpu::bgemmKernel())},
               {"nbits_gemm_kernel", cpu::blockQuantKernelName()},
               {"vector_math", cpu::vectorIsaName(cpu::vectorMathIsa())},
               {"inputs", specsJson(m.inputs)},
               {"outputs", specsJson(m.outputs)}};
  if (!m.symbols.empty()) {
    json syms = json::array();
    for (const PlanSymbol &sym : m.symbols)
      syms.push_back({{"name", sym.name}, {"min", sym.min}, {"max", sym.max}});
    root["symbols"] = syms;
  }
  if (const GenerationSpec &g = m.generation; g.kvCacheLength)
    root["generation"] = {{"kv_cache_length", g.kvCacheLength},
                          {"batch", g.batch},
                          {"vocab", g.vocab},
                          {"ids_input", g.idsInput},
                          {"position_input", g.positionInput},
                          {"mask_input", g.maskInput},
                          {"positions_input", g.positionsInput},
                          {"logits_output", g.logitsOutput},
                          {"tokens_per_forward", g.maxNewTokens}};
  json ranks = json::array();
  for (const RankSummary &r : s.ranks) {
    json collectives = json::array();
    for (const CollectiveSummary &c : r.collectives)
      collectives.push_back(
          {{"kind", c.kind}, {"count", c.count}, {"bytes", c.bytes}});
    json kernels = json::object();
    for (const auto &kv : r.kernelCounts)
      kernels[kv.first] = kv.second;
    json matmuls = json::array();
    for (const WeightMatMul &w : r.weightMatMuls)
      matmuls.push_back(
          {{"step", w.step},
           {"kernel", w.kernel},
           {"node", w.node},
           {"weight", w.weightTensor},
           {"weight_dtype", dtypeName(w.weight.dtype)},
           {"weight_shape", w.weight.shape},
           {"tp_role", w.tpRole.empty() ? json(nullptr) : json(w.tpRole)},
           {"tp_reason",
            w.tpReason.empty() ? json(nullptr) : json(w.tpReason)}});
    for (size_t j = 0; j < r.weightMatMuls.size(); ++j)
      if (r.weightMatMuls[j].bits)
        matmuls[j]["quantization"] = {
            {"bits", r.weightMatMuls[j].bits},
            {"block_size", r.weightMatMuls[j].blockSize}};
    json byDType = json::object();
    for (const auto &kv : r.weightBytesByDType)
      byDType[kv.first] = kv.second;
    ranks.push_back({{"rank", r.rank},
                     {"plan", r.planFile},
                     {"weights", r.weightsFile},
                     {"steps", r.steps},
                     {"buffers", r.buffers},
                     {"weight_bytes", r.weightBytes},
                     {"weight_bytes_by_dtype", byDType},
                     {"arena_bytes", r.arena.bytes},
                     {"state_bytes", r.stateBytes},
                     {"unplanned_bytes", r.arena.unplannedBytes},
                     {"arena_lower_bound_bytes", r.arena.lowerBoundBytes},
                     {"collectives", collectives},
                     {"kernels", kernels},
                     {"weight_matmuls", matmuls}});
  }
  root["ranks"] = ranks;
  // Names come from the ONNX file: replace invalid UTF-8 rather than throw.
  return root.dump(2, ' ', false, json::error_handler_t::replace);
}

namespace {
/// Hugging Face's tp_plan word for a tpc role.
const char *planWord(const std::string &role) {
  if (role == "column")
    return "colwise";
  if (role == "row")
    return "rowwise";
  return "replicate";
}
} // namespace

/// The layer a node belongs to, from the number its name gives it
/// (".../layers.3/...", "h.3", "block_3", "layer.3"); -1 when it has none.
/// Names only label the report: the roles themselves come from the dataflow.
static int layerOf(const std::string &name) {
  static const std::regex layer(
      "(?:^|[/._])(?:layers?|h|blocks?|encoder_layer|decoder_layer)[._/]?"
      "([0-9]+)(?:[/._]|$)");
  std::smatch m;
  if (!std::regex_search(name, m, layer))
    return -1;
  return std::stoi(m[1].str());
}

/// "4 column, 4 row, 1 replicated", leaving out zero counts.
static std::string roleCounts(const std::map<std::string, int> &roles) {
  std::string out;
  for (const char *role : {"column", "row", "replicated"}) {
    auto it = roles.find(role);
    if (it != roles.end() && it->second > 0)
      out += (out.empty() ? "" : ", ") + std::to_string(it->second) + " " +
             role;
  }
  return out;
}

/// "per layer: 2 column, 2 row (layers 0-11); not numbered by layer: 1
/// replicated" when node or weight names number the layers; empty
/// otherwise.
static std::string perLayerLine(const std::vector<WeightMatMul> &mms) {
  std::map<int, std::map<std::string, int>> byLayer;
  for (const WeightMatMul &w : mms) {
    int layer = layerOf(w.node);
    if (layer < 0)
      layer = layerOf(w.weightTensor);
    ++byLayer[layer][w.tpRole.empty() ? "replicated" : w.tpRole];
  }
  if (byLayer.size() == 1 && byLayer.count(-1))
    return ""; // no name numbers a layer
  // Runs of consecutive layers with the same counts.
  std::string out;
  int runStart = -1, prev = -1;
  std::string prevCounts;
  auto flush = [&]() {
    if (runStart < 0)
      return;
    out += (out.empty() ? "  per layer: " : "; ") + prevCounts + " (layer" +
           (runStart == prev ? " " + std::to_string(runStart)
                             : "s " + std::to_string(runStart) + "-" +
                                   std::to_string(prev)) +
           ")";
  };
  for (const auto &[layer, roles] : byLayer) {
    if (layer < 0)
      continue;
    std::string counts = roleCounts(roles);
    if (runStart >= 0 && counts == prevCounts && layer == prev + 1) {
      prev = layer;
      continue;
    }
    flush();
    runStart = prev = layer;
    prevCounts = counts;
  }
  flush();
  if (out.empty())
    return "";
  if (byLayer.count(-1))
    out += "; not numbered by layer: " + roleCounts(byLayer[-1]);
  return out + "\n";
}

std::string formatShardingSummary(const EngineSummary &s) {
  if (s.ranks.empty())
    return "";
  const RankSummary &r0 = s.ranks.front();
  std::map<std::string, int> roles;
  std::map<std::string, std::vector<std::string>> replicated;
  for (const WeightMatMul &w : r0.weightMatMuls) {
    std::string role = w.tpRole.empty() ? "replicated" : w.tpRole;
    ++roles[role];
    if (role == "replicated")
      replicated[w.tpReason.empty() ? "no reason recorded" : w.tpReason]
          .push_back(w.node.empty() ? w.weightTensor : w.node);
  }
  std::ostringstream os;
  os << "sharding: tp=" << s.manifest.tp << ", " << r0.weightMatMuls.size()
     << " weight MatMuls: " << roles["column"] << " column, " << roles["row"]
     << " row, " << roles["replicated"] << " replicated\n";
  os << perLayerLine(r0.weightMatMuls);
  for (const auto &[why, nodes] : replicated) {
    os << "  replicated (" << why << "):";
    for (size_t i = 0; i < nodes.size() && i < 4; ++i)
      os << (i ? ", " : " ") << nodes[i];
    if (nodes.size() > 4)
      os << ", and " << nodes.size() - 4 << " more";
    os << "\n";
  }
  os << "collectives per forward, per rank:";
  if (r0.collectives.empty())
    os << " none";
  for (size_t i = 0; i < r0.collectives.size(); ++i) {
    const CollectiveSummary &c = r0.collectives[i];
    os << (i ? ", " : " ") << c.count << " " << c.kind << " ("
       << humanBytes(c.bytes) << ")";
  }
  os << "\nweights per rank:";
  for (const RankSummary &r : s.ranks)
    os << " " << humanBytes(r.weightBytes) << (&r == &s.ranks.back() ? "" : ",");
  os << "\n";
  return os.str();
}

std::string formatShardingPlan(const EngineSummary &s) {
  using nlohmann::json;
  json nodes = json::object(), weights = json::object();
  if (!s.ranks.empty())
    for (const WeightMatMul &w : s.ranks.front().weightMatMuls) {
      const char *word = planWord(w.tpRole);
      if (!w.node.empty())
        nodes[w.node] = word;
      if (!w.weightTensor.empty())
        weights[w.weightTensor] = word;
    }
  json root = {{"format", "tpc-sharding-plan"},
               {"version", 1},
               {"tp", s.manifest.tp},
               {"nodes", nodes},
               {"weights", weights}};
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace tpc::runtime
