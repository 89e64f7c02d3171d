//===- EngineManifest.cpp - engine.json -----------------------------------===//
#include "runtime/engine/EngineManifest.h"

#include "runtime/support/Sha256.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tpc::runtime {

using nlohmann::json;

namespace {

/// Every message about the manifest starts with this, so that a user can
/// tell which file of the folder is wrong.
const char *const kManifestName = "engine.json";

Status manifestError(const std::string &msg) {
  return Status::error(std::string(kManifestName) + ": " + msg);
}

/// Reads member `key` of `obj`, an integer or a string as `out` is; `where`
/// names the enclosing object in messages.
template <typename T>
Status getMember(const json &obj, const char *key, const std::string &where,
                 T &out) {
  constexpr bool integer = std::is_integral_v<T>;
  auto it = obj.find(key);
  if (it == obj.end())
    return manifestError(where + "\"" + key + "\" is missing");
  if (integer ? !it->is_number_integer() : !it->is_string())
    return manifestError(where + "\"" + key + "\" must be " +
                         (integer ? "an integer" : "a string") + ", got " +
                         it->dump());
  out = it->get<T>();
  return Status::ok();
}

Status parseTensorSpecs(const json &root, const char *key,
                        std::vector<TensorSpec> &out) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_array())
    return manifestError(std::string("\"") + key + "\" must be an array");
  std::set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    const json &e = (*it)[i];
    std::string where = std::string(key) + "[" + std::to_string(i) + "] ";
    if (!e.is_object())
      return manifestError(where + "must be an object");
    TensorSpec spec;
    TPC_RETURN_IF_ERROR(getMember(e, "name", where, spec.name));
    if (spec.name.empty())
      return manifestError(where + "has an empty name");
    if (!seen.insert(spec.name).second)
      return manifestError(std::string(key) + " lists '" + spec.name +
                           "' twice");
    std::string dtype;
    TPC_RETURN_IF_ERROR(getMember(e, "dtype", where, dtype));
    std::optional<DType> dt = parseDType(dtype);
    if (!dt)
      return manifestError(where + "('" + spec.name + "') has unknown dtype '" +
                           dtype + "'");
    spec.desc.dtype = *dt;
    auto shape = e.find("shape");
    if (shape == e.end() || !shape->is_array())
      return manifestError(where + "('" + spec.name +
                           "') needs a \"shape\" array");
    for (const json &d : *shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        return manifestError(where + "('" + spec.name +
                             "') has an invalid dimension " + d.dump() +
                             " (dimensions are non-negative integers)");
      spec.desc.shape.push_back(d.get<int64_t>());
    }
    // Run-time dimensions: how each dimension follows the plan's symbols
    // (the plan holds the expressions the runtime evaluates).
    if (auto dims = e.find("dims"); dims != e.end()) {
      if (!dims->is_array() || dims->size() != spec.desc.shape.size())
        return manifestError(where + "('" + spec.name +
                             "') has \"dims\" that are not one string per "
                             "dimension");
      for (const json &d : *dims) {
        if (!d.is_string())
          return manifestError(where + "('" + spec.name +
                               "') has a \"dims\" entry that is not a string");
        spec.dims.push_back(d.get<std::string>());
      }
    }
    out.push_back(std::move(spec));
  }
  return Status::ok();
}

/// The string member `key`, or "" when it is absent or not a string: the
/// producer is informational only.
std::string optionalString(const json &obj, const char *key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

/// A file name must stay inside the engine folder.
bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

bool isHexDigest(const std::string &s) {
  if (s.size() != 64)
    return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

Status parseFileRecord(const json &rank, const char *key,
                       const std::string &where, FileRecord &out) {
  auto it = rank.find(key);
  if (it == rank.end() || !it->is_object())
    return manifestError(where + "needs a \"" + key + "\" object");
  std::string sub = where + key + " ";
  TPC_RETURN_IF_ERROR(getMember(*it, "file", sub, out.file));
  if (!isPlainFileName(out.file))
    return manifestError(sub + "file '" + out.file +
                         "' is not a plain file name inside the engine folder");
  int64_t bytes = 0;
  TPC_RETURN_IF_ERROR(getMember(*it, "bytes", sub, bytes));
  if (bytes < 0)
    return manifestError(sub + "bytes is negative");
  out.bytes = uint64_t(bytes);
  TPC_RETURN_IF_ERROR(getMember(*it, "sha256", sub, out.sha256));
  if (!isHexDigest(out.sha256))
    return manifestError(sub + "sha256 '" + out.sha256 +
                         "' is not 64 lower-case hex digits");
  return Status::ok();
}

Status parseRanks(const json &root, EngineManifest &m) {
  auto it = root.find("ranks");
  if (it == root.end() || !it->is_array())
    return manifestError("\"ranks\" must be an array");
  if (it->size() != size_t(m.tp))
    return manifestError("\"ranks\" has " + std::to_string(it->size()) +
                         " entries but tp is " + std::to_string(m.tp));
  m.ranks.assign(size_t(m.tp), RankRecord());
  std::vector<bool> seen(size_t(m.tp), false);
  std::set<std::string> files;
  for (size_t i = 0; i < it->size(); ++i) {
    const json &e = (*it)[i];
    std::string where = "ranks[" + std::to_string(i) + "] ";
    if (!e.is_object())
      return manifestError(where + "must be an object");
    int64_t r = 0;
    TPC_RETURN_IF_ERROR(getMember(e, "rank", where, r));
    if (r < 0 || r >= m.tp)
      return manifestError(where + "has rank " + std::to_string(r) +
                           ", outside [0, " + std::to_string(m.tp) + ")");
    if (seen[size_t(r)])
      return manifestError("rank " + std::to_string(r) + " is listed twice");
    seen[size_t(r)] = true;
    RankRecord &rec = m.ranks[size_t(r)];
    rec.rank = int(r);
    TPC_RETURN_IF_ERROR(parseFileRecord(e, "plan", where, rec.plan));
    TPC_RETURN_IF_ERROR(parseFileRecord(e, "weights", where, rec.weights));
    for (const std::string *f : {&rec.plan.file, &rec.weights.file})
      if (!files.insert(*f).second)
        return manifestError("file '" + *f + "' is listed twice");
  }
  return Status::ok();
}

} // namespace

namespace {

/// The "generation" object of a decode engine: names that must be inputs
/// and outputs of the engine with the shapes a decode step has.
Status parseGeneration(const json &root, EngineManifest &out) {
  auto g = root.find("generation");
  if (g == root.end())
    return Status::ok();
  const std::string where = "generation: ";
  if (!g->is_object())
    return manifestError("\"generation\" must be an object");
  GenerationSpec &spec = out.generation;
  TPC_RETURN_IF_ERROR(
      getMember(*g, "kv_cache_length", where, spec.kvCacheLength));
  TPC_RETURN_IF_ERROR(getMember(*g, "batch", where, spec.batch));
  TPC_RETURN_IF_ERROR(getMember(*g, "vocab", where, spec.vocab));
  TPC_RETURN_IF_ERROR(getMember(*g, "ids_input", where, spec.idsInput));
  TPC_RETURN_IF_ERROR(
      getMember(*g, "position_input", where, spec.positionInput));
  TPC_RETURN_IF_ERROR(getMember(*g, "logits_output", where, spec.logitsOutput));
  spec.maskInput = optionalString(*g, "mask_input");
  spec.positionsInput = optionalString(*g, "positions_input");
  if (spec.kvCacheLength < 2 || spec.batch < 1 || spec.vocab < 1)
    return manifestError(where + "kv_cache_length, batch and vocab must be "
                                 "positive (a cache of at least 2)");
  // The logits of the last new token.
  const TensorSpec *logits = out.findOutput(spec.logitsOutput);
  if (!logits || logits->desc.dtype != DType::F32 ||
      logits->desc.shape != Shape{spec.batch, 1, spec.vocab})
    return manifestError(where + "'" + spec.logitsOutput +
                         "' must be an f32 output [batch, 1, vocab]");
  // The new tokens of a forward: one, or a run-time count 1..N (a prompt
  // prefilled at once), the same symbol in the ids and the position ids.
  const TensorSpec *ids = out.findInput(spec.idsInput);
  if (ids && ids->desc.shape.size() == 2)
    spec.maxNewTokens = ids->desc.shape[1];
  std::string tokens = "1";
  if (spec.maxNewTokens != 1) {
    tokens = ids->dims.size() == 2 ? ids->dims[1] : std::string();
    const PlanSymbol *sym = nullptr;
    for (const PlanSymbol &s : out.symbols)
      if (s.name == tokens)
        sym = &s;
    if (!sym || sym->min != 1 || sym->max != spec.maxNewTokens)
      return manifestError(where + "input '" + spec.idsInput + "' takes " +
                           std::to_string(spec.maxNewTokens) +
                           " tokens per forward; a decode engine takes one, "
                           "or a run-time count from 1 (--input-shape " +
                           spec.idsInput + "=1x1..N)");
  }
  // `tokensAt`: the dimension that counts the new tokens, if any.
  auto input = [&](const std::string &name, Shape shape, bool integer,
                   int tokensAt) -> Status {
    if (name.empty())
      return Status::ok();
    const TensorSpec *t = out.findInput(name);
    if (!t)
      return manifestError(where + "'" + name + "' is not an input");
    bool typeOk = !integer || t->desc.dtype == DType::I64 ||
                  t->desc.dtype == DType::I32;
    bool dimsOk =
        tokensAt < 0 || spec.maxNewTokens == 1 ||
        (t->dims.size() == shape.size() && t->dims[size_t(tokensAt)] == tokens);
    if (t->desc.shape != shape || !typeOk || !dimsOk) {
      std::string want = "[";
      for (size_t d = 0; d < shape.size(); ++d)
        want += (d ? ", " : "") +
                (int(d) == tokensAt ? tokens : std::to_string(shape[d]));
      return manifestError(where + "input '" + name + "' is " + t->str() +
                           ", not " + (integer ? "integer " : "") + want + "]");
    }
    return Status::ok();
  };
  TPC_RETURN_IF_ERROR(
      input(spec.idsInput, {spec.batch, spec.maxNewTokens}, true, 1));
  TPC_RETURN_IF_ERROR(input(spec.positionInput, {1}, true, -1));
  TPC_RETURN_IF_ERROR(
      input(spec.maskInput, {spec.batch, spec.kvCacheLength}, false, -1));
  TPC_RETURN_IF_ERROR(
      input(spec.positionsInput, {spec.batch, spec.maxNewTokens}, true, 1));
  return Status::ok();
}

} // namespace

Status EngineManifest::parse(const std::string &text, const std::string &dir,
                             EngineManifest &out) {
  out = EngineManifest();
  out.dir = dir;
  out.engineId = Sha256::hashHex(text);
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return manifestError("not valid JSON");
  if (!root.is_object())
    return manifestError("must hold a JSON object");

  std::string format;
  TPC_RETURN_IF_ERROR(getMember(root, "format", "", format));
  if (format != "tpc-engine")
    return manifestError("\"format\" is '" + format +
                         "', expected 'tpc-engine' (not a tpc engine folder)");
  int64_t version = 0;
  TPC_RETURN_IF_ERROR(getMember(root, "format_version", "", version));
  if (version > kEngineFormatVersion)
    return manifestError(
        "engine format version " + std::to_string(version) +
        " is newer than this runtime supports (version " +
        std::to_string(kEngineFormatVersion) +
        "); rebuild the engine with a matching tpc or update the runtime");
  if (version < 1)
    return manifestError("invalid format_version " + std::to_string(version));
  out.formatVersion = int(version);

  if (auto p = root.find("producer"); p != root.end() && p->is_object()) {
    out.producerName = optionalString(*p, "name");
    out.producerVersion = optionalString(*p, "version");
  }
  if (auto syms = root.find("symbols"); syms != root.end()) {
    if (!syms->is_array())
      return manifestError("\"symbols\" is not an array");
    for (const json &e : *syms) {
      PlanSymbol sym;
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string() ||
          !e.contains("min") || !e["min"].is_number_integer() ||
          !e.contains("max") || !e["max"].is_number_integer())
        return manifestError("a \"symbols\" entry is not {name, min, max}");
      sym.name = e["name"].get<std::string>();
      sym.min = e["min"].get<int64_t>();
      sym.max = e["max"].get<int64_t>();
      if (sym.name.empty() || sym.min < 0 || sym.min > sym.max)
        return manifestError("run-time dimension '" + sym.name +
                             "' has an invalid range");
      out.symbols.push_back(sym);
    }
  }
  if (auto o = root.find("options"); o != root.end())
    out.optionsJson = o->dump();
  else
    out.optionsJson = "{}";

  int64_t tp = 0;
  TPC_RETURN_IF_ERROR(getMember(root, "tp", "", tp));
  if (tp < 1 || tp > 4096)
    return manifestError("tp must be between 1 and 4096, got " +
                         std::to_string(tp));
  out.tp = int(tp);
  TPC_RETURN_IF_ERROR(parseTensorSpecs(root, "inputs", out.inputs));
  TPC_RETURN_IF_ERROR(parseTensorSpecs(root, "outputs", out.outputs));
  if (out.outputs.empty())
    return manifestError("the engine has no outputs");
  TPC_RETURN_IF_ERROR(parseGeneration(root, out));
  return parseRanks(root, out);
}

Status EngineManifest::load(const std::string &dir, EngineManifest &out,
                            bool holdFolder) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::notFound("'" + dir + "' is not an engine folder (no such "
                         "directory)");
  std::shared_ptr<EngineFolder> folder;
  TPC_RETURN_IF_ERROR(EngineFolder::open(dir, folder));
  std::ifstream in(folder->pathOf(kManifestName), std::ios::binary);
  if (!in)
    return Status::notFound(std::string(kManifestName) + ": missing in '" + dir +
                         "' (not an engine folder?)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return manifestError("read error");
  TPC_RETURN_IF_ERROR(parse(text.str(), dir, out));
  if (!holdFolder)
    folder->release();
  out.folder = std::move(folder);
  return Status::ok();
}

std::string EngineManifest::pathOf(const std::string &file) const {
  return folder ? folder->pathOf(file) : dir + "/" + file;
}

Status EngineFolder::open(const std::string &dir,
                          std::shared_ptr<EngineFolder> &out) {
  // A compile swaps the new engine in first and takes the old one's lock
  // exclusively before deleting it: a reader that locked the old folder
  // after that swap finds it gone from `dir`, and opens what is there now.
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::shared_ptr<EngineFolder> f(new EngineFolder());
    f->fd_.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!f->fd_.valid())
      return Status::error("'" + dir + "' is not an engine folder (" +
                           std::strerror(errno) + ")");
    if (::flock(f->fd_.get(), LOCK_SH) != 0)
      return Status::error("cannot lock the engine folder '" + dir +
                           "': " + std::strerror(errno));
    f->locked_ = true;
    struct stat held, now;
    if (::fstat(f->fd_.get(), &held) == 0 && ::stat(dir.c_str(), &now) == 0 &&
        held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
      out = std::move(f);
      return Status::ok();
    }
  }
  return Status::error("the engine folder '" + dir +
                       "' kept being replaced while it was opened");
}

std::string EngineFolder::pathOf(const std::string &file) const {
  return "/proc/self/fd/" + std::to_string(fd_.get()) + "/" + file;
}

void EngineFolder::release() {
  if (locked_ && ::flock(fd_.get(), LOCK_UN) == 0)
    locked_ = false;
}

const TensorSpec *EngineManifest::findInput(const std::string &name) const {
  for (const TensorSpec &s : inputs)
    if (s.name == name)
      return &s;
  return nullptr;
}

const TensorSpec *EngineManifest::findOutput(const std::string &name) const {
  for (const TensorSpec &s : outputs)
    if (s.name == name)
      return &s;
  return nullptr;
}

Status verifyFile(const EngineManifest &manifest, const FileRecord &record,
                  bool checkDigest) {
  std::string path = manifest.pathOf(record.file);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status::dataLoss(record.file + ": missing from the engine folder '" +
                         manifest.dir + "'");
  if (!S_ISREG(st.st_mode))
    return Status::dataLoss(record.file + ": not a regular file");
  if (uint64_t(st.st_size) != record.bytes)
    return Status::dataLoss(record.file + ": size mismatch (engine.json says " +
                         std::to_string(record.bytes) + " bytes, file has " +
                         std::to_string(uint64_t(st.st_size)) + ")");
  if (!checkDigest)
    return Status::ok();
  std::string digest;
  TPC_RETURN_IF_ERROR(sha256File(path, digest).withContext(record.file + ": "));
  if (digest != record.sha256)
    return Status::dataLoss(record.file + ": sha256 mismatch (engine.json says " +
                         record.sha256 + ", file has " + digest + ")");
  return Status::ok();
}

std::string TensorSpec::str() const {
  if (dims.empty())
    return desc.str();
  std::string s = std::string(dtypeName(desc.dtype)) + "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? " x " : "") + dims[i];
  return s + "]";
}

} // namespace tpc::runtime
