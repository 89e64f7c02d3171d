//===- Npy.cpp ------------------------------------------------------------===//
//
// The header of a .npy file is the repr() of a Python dict, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by a newline. Only the literal forms NumPy
// itself produces are parsed: quoted strings, True/False and tuples of
// non-negative integers.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Npy.h"

#include "runtime/support/AtomicFile.h"
#include "runtime/support/MappedFile.h"

#include <cstring>
#include <limits>
#include <optional>

namespace tpc {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/// Sanity bound on header size: NumPy itself refuses headers over 10 kB by
/// default; anything far larger is corruption, not a real array.
constexpr size_t kMaxHeaderSize = size_t(1) << 24;

struct DescrEntry {
  const char *code; // Type code and size, without the byte-order character.
  DType dtype;
};

constexpr DescrEntry kDescrs[] = {{"f4", DType::F32}, {"f8", DType::F64},
                                  {"f2", DType::F16}, {"i8", DType::I64},
                                  {"i4", DType::I32}, {"i1", DType::I8},
                                  {"u1", DType::U8},  {"b1", DType::Bool},
                                  {"i2", DType::I16}, {"u2", DType::U16},
                                  {"u4", DType::U32}, {"u8", DType::U64},
                                  // NumPy has no bfloat16: ml_dtypes'
                                  // bfloat16 arrays are saved as 2-byte
                                  // opaque items, and so are tpc's.
                                  {"V2", DType::BF16},
                                  // ml_dtypes' one-byte types (float8,
                                  // int4, ...): opaque bytes, or "f1" for
                                  // float8_e5m2. Read as u8; an engine
                                  // input of such a type takes them as its
                                  // bit patterns.
                                  {"V1", DType::U8},
                                  {"f1", DType::U8}};

/// A parsed value of the header dict.
struct Value {
  enum Kind { String, Bool, Tuple } kind = String;
  std::string str;
  bool boolean = false;
  std::vector<int64_t> ints;
};

/// Recursive-descent parser over the header text.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text_(text) {}

  /// Parses the dict; on failure returns a message without the file name.
  std::optional<std::string>
  parse(std::vector<std::pair<std::string, Value>> &entries) {
    skipSpace();
    if (!consume('{'))
      return error("expected '{'");
    for (;;) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (auto err = parseString(key))
        return err;
      skipSpace();
      if (!consume(':'))
        return error("expected ':' after key '" + key + "'");
      skipSpace();
      Value value;
      if (auto err = parseValue(key, value))
        return err;
      entries.emplace_back(key, std::move(value));
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return error("expected ',' or '}'");
    }
    skipSpace();
    if (pos_ != text_.size())
      return error("unexpected text after the dict");
    return std::nullopt;
  }

private:
  std::string error(const std::string &what) const {
    return "malformed header (" + what + " at offset " + std::to_string(pos_) +
           "): " + text_;
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool consumeWord(const char *word) {
    size_t n = std::strlen(word);
    if (text_.compare(pos_, n, word) != 0)
      return false;
    pos_ += n;
    return true;
  }

  std::optional<std::string> parseString(std::string &out) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return error("expected a quoted string");
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string::npos)
      return error("unterminated string");
    out = text_.substr(pos_, end - pos_);
    // Escapes never occur in the strings NumPy writes; refusing them keeps
    // this parser honest.
    if (out.find('\\') != std::string::npos)
      return error("escape sequences are not supported");
    pos_ = end + 1;
    return std::nullopt;
  }

  std::optional<std::string> parseInt(int64_t &out) {
    size_t start = pos_;
    uint64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      unsigned digit = unsigned(text_[pos_] - '0');
      if (v > (uint64_t(std::numeric_limits<int64_t>::max()) - digit) / 10)
        return error("dimension too large");
      v = v * 10 + digit;
      ++pos_;
    }
    if (pos_ == start)
      return error("expected a non-negative integer");
    // Python 2 wrote long integers with an 'L' suffix.
    consume('L');
    out = int64_t(v);
    return std::nullopt;
  }

  std::optional<std::string> parseValue(const std::string &key, Value &out) {
    if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
      out.kind = Value::String;
      return parseString(out.str);
    }
    if (consumeWord("True")) {
      out.kind = Value::Bool;
      out.boolean = true;
      return std::nullopt;
    }
    if (consumeWord("False")) {
      out.kind = Value::Bool;
      out.boolean = false;
      return std::nullopt;
    }
    if (consume('(')) {
      out.kind = Value::Tuple;
      for (;;) {
        skipSpace();
        if (consume(')'))
          return std::nullopt;
        int64_t v;
        if (auto err = parseInt(v))
          return err;
        out.ints.push_back(v);
        skipSpace();
        if (consume(','))
          continue;
        skipSpace();
        if (consume(')'))
          return std::nullopt;
        return error("expected ',' or ')' in tuple");
      }
    }
    if (pos_ < text_.size() && text_[pos_] == '[' && key == "descr")
      return "unsupported dtype descr (structured dtypes are not supported): " +
             text_;
    return error("unsupported value for key '" + key + "'");
  }

  const std::string &text_;
  size_t pos_ = 0;
};

/// Maps a descr string to a DType, or explains why it is unsupported.
std::optional<DType> parseDescr(const std::string &descr, std::string &why) {
  std::string code = descr;
  char order = '=';
  if (!code.empty() && std::strchr("<>=|", code[0])) {
    order = code[0];
    code = code.substr(1);
  }
  for (const DescrEntry &e : kDescrs) {
    if (code != e.code)
      continue;
    // Byte order only matters for multi-byte types; '=' is native, and this
    // runtime only targets little-endian machines.
    if (order == '>' && dtypeSize(e.dtype) > 1) {
      why = "big-endian data is not supported";
      return std::nullopt;
    }
    return e.dtype;
  }
  why = "supported: <f8 <f4 <f2 <i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1 |b1, <V2 for "
        "bf16 and |V1 for float8 and 4- and 2-bit integers";
  return std::nullopt;
}

uint32_t loadLittleEndian(const uint8_t *p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

} // namespace

const char *npyDescr(DType t) {
  switch (t) {
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  case DType::F16: return "<f2";
  case DType::I64: return "<i8";
  case DType::I32: return "<i4";
  case DType::I8: return "|i1";
  case DType::U8: return "|u1";
  case DType::I16: return "<i2";
  case DType::U16: return "<u2";
  case DType::U32: return "<u4";
  case DType::U64: return "<u8";
  case DType::Bool: return "|b1";
  case DType::BF16: return "<V2";
  default: // the storage types, one opaque byte per element
    return "|V1";
  }
  return nullptr;
}

Status parseNpyHeader(const uint8_t *bytes, size_t size,
                      const std::string &name, NpyHeader &out) {
  auto fail = [&](const std::string &msg) {
    return Status::error(name + ": " + msg);
  };
  if (size < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    return fail("not a .npy file (bad magic)");
  int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fail("unsupported .npy format version " + std::to_string(major) +
                "." + std::to_string(minor));
  // Version 1.0 has a 2-byte header length, 2.0 and 3.0 (3.0 only allows
  // UTF-8 in the header) a 4-byte one.
  int lengthBytes = major == 1 ? 2 : 4;
  size_t preamble = kMagicSize + 2 + size_t(lengthBytes);
  if (size < preamble)
    return fail("truncated header");
  size_t headerSize = loadLittleEndian(bytes + kMagicSize + 2, lengthBytes);
  if (headerSize > kMaxHeaderSize)
    return fail("header length " + std::to_string(headerSize) +
                " is implausibly large");
  if (size - preamble < headerSize)
    return fail("truncated header (announces " + std::to_string(headerSize) +
                " bytes, file has " + std::to_string(size - preamble) + ")");
  std::string text(reinterpret_cast<const char *>(bytes + preamble),
                   headerSize);

  std::vector<std::pair<std::string, Value>> entries;
  if (auto err = HeaderParser(text).parse(entries))
    return fail(*err);

  const Value *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto &[key, value] : entries) {
    const Value **slot = key == "descr"           ? &descr
                         : key == "fortran_order" ? &fortran
                         : key == "shape"         ? &shape
                                                  : nullptr;
    if (!slot)
      return fail("unexpected header key '" + key + "'");
    if (*slot)
      return fail("duplicate header key '" + key + "'");
    *slot = &value;
  }
  if (!descr || !fortran || !shape)
    return fail("header lacks one of 'descr', 'fortran_order', 'shape'");
  if (descr->kind != Value::String)
    return fail("'descr' is not a string");
  if (fortran->kind != Value::Bool)
    return fail("'fortran_order' is not True or False");
  if (shape->kind != Value::Tuple)
    return fail("'shape' is not a tuple");

  std::string why;
  std::optional<DType> dtype = parseDescr(descr->str, why);
  if (!dtype)
    return fail("unsupported dtype descr '" + descr->str + "' (" + why + ")");
  if (fortran->boolean && shape->ints.size() > 1)
    return fail("array is in Fortran order (fortran_order: True); only C "
                "order is supported, save with np.ascontiguousarray");

  // Element count with overflow checks: a corrupted shape must not wrap
  // around to a small size that then passes the length check.
  std::optional<uint64_t> dataSize =
      checkedByteSize(shape->ints, dtypeSize(*dtype));
  if (!dataSize)
    return fail("shape " + shapeToString(shape->ints) + " is too large");
  uint64_t dataBytes = *dataSize;
  size_t dataOffset = preamble + headerSize;
  uint64_t available = size - dataOffset;
  if (available < dataBytes)
    return fail("truncated: " + descr->str + " array of shape (" +
                shapeToString(shape->ints) + ") needs " +
                std::to_string(dataBytes) + " data bytes, file has " +
                std::to_string(available));
  if (available > dataBytes)
    return fail("has " + std::to_string(available - dataBytes) +
                " unexpected bytes after the array data");

  out.desc.dtype = *dtype;
  out.desc.shape = shape->ints;
  out.majorVersion = major;
  out.dataOffset = dataOffset;
  return Status::ok();
}

Status readNpy(const std::string &path, NpyArray &out) {
  return readNpy(path, out, [](const TensorDesc &) { return Status::ok(); });
}

Status readNpy(const std::string &path, NpyArray &out,
               const std::function<Status(const TensorDesc &)> &accept) {
  MappedFile file;
  TPC_RETURN_IF_ERROR(MappedFile::open(path, file));
  NpyHeader header;
  TPC_RETURN_IF_ERROR(parseNpyHeader(file.data(), file.size(), path, header));
  TPC_RETURN_IF_ERROR(accept(header.desc));
  out.desc = header.desc;
  out.data.assign(file.data() + header.dataOffset, file.data() + file.size());
  return Status::ok();
}

Status writeNpy(const std::string &path, const TensorDesc &desc,
                const void *data) {
  const char *descr = npyDescr(desc.dtype);
  if (!descr)
    return Status::error(path + ": cannot write " + desc.str() +
                         " as .npy: NumPy has no " + dtypeName(desc.dtype) +
                         " dtype");
  for (int64_t d : desc.shape)
    if (d < 0)
      return Status::error(path + ": cannot write " + desc.str() +
                           ": negative dimension");
  if (desc.bytes() > 0 && !data)
    return Status::error(path + ": no data for " + desc.str());

  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < desc.shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(desc.shape[i]);
  // A one-element tuple needs its trailing comma to stay a tuple.
  dict += desc.shape.size() == 1 ? ",), }" : "), }";

  // Pad with spaces so that the data starts on a 64-byte boundary, as NumPy
  // does; the header ends with a newline.
  auto paddedHeader = [&](size_t preamble) {
    size_t total = preamble + dict.size() + 1;
    size_t padding = (64 - total % 64) % 64;
    return dict + std::string(padding, ' ') + "\n";
  };
  std::string header = paddedHeader(kMagicSize + 4);
  int major = 1;
  if (header.size() > 0xffff) {
    major = 2;
    header = paddedHeader(kMagicSize + 6);
  }

  std::string preamble(kMagic, kMagicSize);
  preamble += char(major);
  preamble += char(0);
  size_t len = header.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    preamble += char((len >> (8 * i)) & 0xff);

  AtomicFile file;
  TPC_RETURN_IF_ERROR(file.open(path));
  TPC_RETURN_IF_ERROR(file.write(preamble.data(), preamble.size()));
  TPC_RETURN_IF_ERROR(file.write(header.data(), header.size()));
  if (desc.bytes() > 0)
    TPC_RETURN_IF_ERROR(file.write(data, desc.bytes()));
  return file.commit();
}

} // namespace tpc
