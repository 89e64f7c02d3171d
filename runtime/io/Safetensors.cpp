//===- Safetensors.cpp ----------------------------------------------------===//
#include "runtime/io/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

namespace tpc {

namespace {

/// The reference implementation refuses headers above 100 MB; a larger
/// length field is corruption, and honouring it would parse garbage.
constexpr uint64_t kMaxHeaderSize = 100u << 20;

constexpr const char *kMetadataKey = "__metadata__";

struct DTypeName {
  const char *name;
  DType dtype;
};

constexpr DTypeName kDTypeNames[] = {
    {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16},
    {"F64", DType::F64}, {"I64", DType::I64}, {"I32", DType::I32},
    {"I16", DType::I16}, {"I8", DType::I8},   {"U64", DType::U64},
    {"U32", DType::U32}, {"U16", DType::U16}, {"U8", DType::U8},
    {"BOOL", DType::Bool}, {"F8_E4M3", DType::F8E4M3FN},
    {"F8_E5M2", DType::F8E5M2}};

std::string rangeString(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

} // namespace

const char *safetensorsDTypeName(DType t) {
  for (const DTypeName &e : kDTypeNames)
    if (e.dtype == t)
      return e.name;
  // The float8 formats safetensors has no name for, and the 4- and 2-bit
  // integers (one element per byte here): their bytes, typed by the plan.
  if (isStorageOnlyDType(t))
    return "U8";
  return "invalid";
}

bool safetensorsHolds(DType stored, DType planned) {
  return stored == planned ||
         (stored == DType::U8 && isStorageOnlyDType(planned) &&
          std::string(safetensorsDTypeName(planned)) == "U8");
}

std::optional<DType> parseSafetensorsDType(const std::string &name) {
  for (const DTypeName &e : kDTypeNames)
    if (name == e.name)
      return e.dtype;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// SafetensorsWriter
//===----------------------------------------------------------------------===//

Status SafetensorsWriter::fail(const std::string &msg) {
  return failWith(Status::error(path_ + ": " + msg));
}

Status SafetensorsWriter::failWith(Status st) {
  failed_ = true;
  stream_.reset();
  file_.discard();
  return st;
}

Status
SafetensorsWriter::open(const std::string &path,
                        const std::vector<SafetensorsEntry> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  stream_.reset();
  *this = SafetensorsWriter();
  path_ = path;
  opened_ = true;

  for (const SafetensorsEntry &e : tensors) {
    if (e.name == kMetadataKey)
      return fail("'" + e.name + "' is reserved and cannot name a tensor");
    if (!isValidDType(int32_t(e.desc.dtype)))
      return fail("tensor '" + e.name + "' has an invalid dtype");
    std::optional<uint64_t> bytes =
        checkedByteSize(e.desc.shape, dtypeSize(e.desc.dtype));
    if (!bytes)
      return fail("tensor '" + e.name + "' has an invalid shape " +
                  shapeToString(e.desc.shape));
    if (!byName_.emplace(e.name, slots_.size()).second)
      return fail("duplicate tensor name '" + e.name + "'");
    Slot slot;
    slot.name = e.name;
    slot.desc = e.desc;
    slot.bytes = *bytes;
    slots_.push_back(std::move(slot));
  }

  // Wider elements first: every size is a multiple of its element size, so
  // each tensor then starts at a multiple of its own element size.
  std::stable_sort(slots_.begin(), slots_.end(),
                   [](const Slot &a, const Slot &b) {
                     return dtypeSize(a.desc.dtype) > dtypeSize(b.desc.dtype);
                   });
  uint64_t offset = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].offset = offset;
    offset += slots_[i].bytes;
    byName_[slots_[i].name] = i;
  }

  // ordered_json keeps the tensors in file order, which makes the header
  // easy to read with `head -c`.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto &[k, v] : metadata)
      meta[k] = v;
    header[kMetadataKey] = std::move(meta);
  }
  for (const Slot &s : slots_) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = safetensorsDTypeName(s.desc.dtype);
    entry["shape"] = s.desc.shape;
    entry["data_offsets"] = {s.offset, s.offset + s.bytes};
    header[s.name] = std::move(entry);
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception &e) {
    // dump() throws on strings that are not valid UTF-8.
    return fail(std::string("cannot encode header: ") + e.what());
  }
  // Pad with spaces so that the data buffer starts on an 8-byte boundary.
  text.append((8 - text.size() % 8) % 8, ' ');
  if (text.size() > kMaxHeaderSize)
    return fail("header of " + std::to_string(text.size()) +
                " bytes exceeds the format's 100 MB limit");

  uint8_t length[8];
  for (int i = 0; i < 8; ++i)
    length[i] = uint8_t(uint64_t(text.size()) >> (8 * i));
  Status st = file_.open(path);
  if (!st)
    return fail(st.message());
  // The sink outlives moves of this writer: it holds the descriptor, not
  // the AtomicFile.
  stream_ = std::make_unique<HashingWriter>(
      [fd = file_.fd(), name = file_.path()](uint64_t at, const void *data,
                                             size_t size) {
        return AtomicFile::writeAt(fd, name, at, data, size);
      },
      0);
  st = stream_->append(length, sizeof(length));
  if (st)
    st = stream_->append(text.data(), text.size());
  if (!st)
    return failWith(std::move(st));
  dataStart_ = sizeof(length) + text.size();
  return Status::ok();
}

std::vector<std::string> SafetensorsWriter::fileOrder() const {
  std::vector<std::string> names;
  for (const Slot &s : slots_)
    names.push_back(s.name);
  return names;
}

Status SafetensorsWriter::finishCurrent() {
  if (current_ < 0)
    return Status::ok();
  const Slot &s = slots_[size_t(current_)];
  current_ = -1;
  if (s.written != s.bytes)
    return fail("tensor '" + s.name + "' (" + s.desc.str() + ") received " +
                std::to_string(s.written) + " of " + std::to_string(s.bytes) +
                " bytes");
  return Status::ok();
}

Status SafetensorsWriter::beginTensor(const std::string &name) {
  if (!opened_ || failed_)
    return Status::error(path_ + ": writer is not open or has failed");
  TPC_RETURN_IF_ERROR(finishCurrent());
  auto it = byName_.find(name);
  if (it == byName_.end())
    return fail("tensor '" + name +
                "' was not declared when the file was "
                "opened");
  Slot &s = slots_[it->second];
  if (s.begun)
    return fail("tensor '" + name + "' is written twice");
  s.begun = true;
  current_ = int(it->second);
  return Status::ok();
}

Status SafetensorsWriter::append(const void *data, size_t size) {
  if (!opened_ || failed_)
    return Status::error(path_ + ": writer is not open or has failed");
  if (current_ < 0)
    return fail("append() without a current tensor (call beginTensor first)");
  Slot &s = slots_[size_t(current_)];
  if (size > s.bytes - s.written)
    return fail("tensor '" + s.name + "' (" + s.desc.str() + ") is " +
                std::to_string(s.bytes) + " bytes, but " +
                std::to_string(s.written + size) + " were appended");
  if (size == 0)
    return Status::ok();
  if (!data)
    return fail("append() of null data to tensor '" + s.name + "'");
  uint64_t at = dataStart_ + s.offset + s.written;
  Status st = Status::ok();
  if (sequential_ && at == stream_->end()) {
    st = stream_->append(data, size);
  } else {
    // Out of file order: what is buffered goes first, then every write is
    // direct and the file is not hashed here.
    if (sequential_)
      st = stream_->flush();
    sequential_ = false;
    if (st)
      st = file_.writeAt(at, data, size);
  }
  if (!st)
    return failWith(std::move(st));
  s.written += size;
  return Status::ok();
}

Status SafetensorsWriter::writeTensor(const std::string &name,
                                      const void *data) {
  TPC_RETURN_IF_ERROR(beginTensor(name));
  return append(data, size_t(slots_[size_t(current_)].bytes));
}

Status SafetensorsWriter::close() {
  if (!opened_ || failed_)
    return Status::error(path_ + ": writer is not open or has failed");
  TPC_RETURN_IF_ERROR(finishCurrent());
  for (const Slot &s : slots_)
    if (!s.begun)
      return fail("tensor '" + s.name + "' was never written");
  Status st = stream_->flush();
  if (!st)
    return failWith(std::move(st));
  if (sequential_)
    digest_ = stream_->finishHex();
  stream_.reset();
  opened_ = false;
  st = file_.commit();
  if (!st) {
    failed_ = true;
    digest_.clear();
  }
  return st;
}

//===----------------------------------------------------------------------===//
// SafetensorsFile
//===----------------------------------------------------------------------===//

const SafetensorsTensor *SafetensorsFile::find(const std::string &name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &tensors_[it->second];
}

Status SafetensorsFile::open(const std::string &path, SafetensorsFile &out) {
  out = SafetensorsFile();
  auto fail = [&](const std::string &msg) {
    return Status::error(path + ": " + msg);
  };

  MappedFile file;
  TPC_RETURN_IF_ERROR(MappedFile::open(path, file));
  uint64_t size = file.size();
  if (size < 8)
    return fail("file of " + std::to_string(size) +
                " bytes is too small for a safetensors header");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | file.data()[i];
  if (headerSize > kMaxHeaderSize)
    return fail("header length " + std::to_string(headerSize) +
                " exceeds the format's 100 MB limit (corrupt or not a "
                "safetensors file)");
  if (headerSize > size - 8)
    return fail("header length " + std::to_string(headerSize) +
                " exceeds the file size " + std::to_string(size));
  const char *text = reinterpret_cast<const char *>(file.data() + 8);
  if (headerSize < 2 || text[0] != '{')
    return fail("header does not start with a JSON object");

  // Duplicate top-level keys would silently keep only the last entry; the
  // parser callback sees every key, so count them there.
  std::set<std::string> seen;
  std::string duplicate;
  auto onEvent = [&](int depth, nlohmann::json::parse_event_t event,
                     nlohmann::json &parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1 &&
        !seen.insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + headerSize, onEvent);
  } catch (const nlohmann::json::exception &e) {
    return fail(std::string("header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty())
    return fail("header names '" + duplicate + "' more than once");
  if (!header.is_object())
    return fail("header is not a JSON object");

  uint64_t dataOffset = 8 + headerSize;
  uint64_t bufferSize = size - dataOffset;
  const uint8_t *buffer = file.data() + dataOffset;
  std::vector<SafetensorsTensor> tensors;
  std::vector<std::pair<uint64_t, uint64_t>> ranges; // Parallel to tensors.
  std::map<std::string, std::string> metadata;

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    const nlohmann::json &value = it.value();
    if (name == kMetadataKey) {
      if (!value.is_object())
        return fail("'__metadata__' is not an object");
      for (auto m = value.begin(); m != value.end(); ++m) {
        if (!m.value().is_string())
          return fail("'__metadata__' entry '" + m.key() + "' is not a string");
        metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    std::string where = "tensor '" + name + "': ";
    if (!value.is_object())
      return fail(where + "entry is not an object");
    for (auto f = value.begin(); f != value.end(); ++f)
      if (f.key() != "dtype" && f.key() != "shape" && f.key() != "data_offsets")
        return fail(where + "unexpected field '" + f.key() + "'");
    auto dtypeIt = value.find("dtype");
    auto shapeIt = value.find("shape");
    auto offsetsIt = value.find("data_offsets");
    if (dtypeIt == value.end() || shapeIt == value.end() ||
        offsetsIt == value.end())
      return fail(where + "needs 'dtype', 'shape' and 'data_offsets'");
    if (!dtypeIt->is_string())
      return fail(where + "'dtype' is not a string");
    std::string dtypeName = dtypeIt->get<std::string>();
    std::optional<DType> dtype = parseSafetensorsDType(dtypeName);
    if (!dtype)
      return fail(where + "unsupported dtype '" + dtypeName +
                  "' (supported: F32 F16 BF16 F64 I64 I32 I16 I8 U64 U32 "
                  "U16 U8 BOOL F8_E4M3 F8_E5M2)");

    if (!shapeIt->is_array())
      return fail(where + "'shape' is not an array");
    Shape shape;
    for (const nlohmann::json &d : *shapeIt) {
      if (!d.is_number_unsigned() ||
          d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        return fail(where + "'shape' holds " + d.dump() +
                    ", not a non-negative integer");
      shape.push_back(int64_t(d.get<uint64_t>()));
    }

    if (!offsetsIt->is_array() || offsetsIt->size() != 2 ||
        !(*offsetsIt)[0].is_number_unsigned() ||
        !(*offsetsIt)[1].is_number_unsigned())
      return fail(where + "'data_offsets' is not a pair of non-negative "
                          "integers");
    uint64_t begin = (*offsetsIt)[0].get<uint64_t>();
    uint64_t end = (*offsetsIt)[1].get<uint64_t>();
    if (begin > end)
      return fail(where + "data_offsets " + rangeString(begin, end) +
                  " end before they begin");
    if (end > bufferSize)
      return fail(where + "data_offsets " + rangeString(begin, end) +
                  " are out of bounds of the " + std::to_string(bufferSize) +
                  "-byte data buffer");
    std::optional<uint64_t> bytes = checkedByteSize(shape, dtypeSize(*dtype));
    if (!bytes)
      return fail(where + "shape " + shapeToString(shape) + " is too large");
    if (*bytes != end - begin)
      return fail(where + dtypeName + " shape [" + shapeToString(shape) +
                  "] needs " + std::to_string(*bytes) +
                  " bytes, but data_offsets " + rangeString(begin, end) +
                  " cover " + std::to_string(end - begin));

    SafetensorsTensor t;
    t.name = name;
    t.desc.dtype = *dtype;
    t.desc.shape = std::move(shape);
    t.data = buffer + begin;
    t.size = size_t(end - begin);
    t.fileOffset = dataOffset + begin;
    tensors.push_back(std::move(t));
    ranges.emplace_back(begin, end);
  }

  // The ranges must tile [0, bufferSize): sorted by start, each begins where
  // the previous one ended.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return ranges[a] < ranges[b]; });
  uint64_t expected = 0;
  const std::string *previous = nullptr;
  for (size_t i : order) {
    auto [begin, end] = ranges[i];
    if (begin < expected)
      return fail("tensors '" + *previous + "' and '" + tensors[i].name +
                  "' overlap (data_offsets " + rangeString(begin, end) +
                  " start before offset " + std::to_string(expected) + ")");
    if (begin > expected)
      return fail("the data buffer has a hole: bytes " +
                  rangeString(expected, begin) + " belong to no tensor");
    expected = end;
    previous = &tensors[i].name;
  }
  if (expected != bufferSize)
    return fail("the tensors cover " + std::to_string(expected) +
                " bytes but the data buffer has " + std::to_string(bufferSize) +
                " bytes");

  out.file_ = std::move(file);
  for (size_t i : order) {
    out.byName_[tensors[i].name] = out.tensors_.size();
    out.tensors_.push_back(std::move(tensors[i]));
  }
  out.metadata_ = std::move(metadata);
  out.dataOffset_ = dataOffset;
  return Status::ok();
}

} // namespace tpc
