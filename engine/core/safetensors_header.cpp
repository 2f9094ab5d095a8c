// Parsing and validation of safetensors bytes: the 8-byte header length, the JSON header and the
// layout of the data section. No I/O here, so the fuzz target exercises exactly this file.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"
#include "engine/core/safetensors_internal.h"

namespace wc {

// Note [Safetensors validation]
// A checkpoint may come from anywhere, so the parser trusts nothing and fails with one line naming
// the file and the tensor or field, never crashes, never returns a partial result. It follows the
// reference implementation (huggingface/safetensors, `Metadata::validate`) and is a little
// stricter:
// - the file holds at least the 8-byte little-endian header length N; N <= 100 MiB; 8 + N <= size;
// - the header is UTF-8 JSON, an object, nested at most kMaxJsonDepth deep, with no key twice
//   (JSON parsers silently keep the last duplicate, which would hide a tensor);
// - `__metadata__`, if present, maps strings to strings;
// - every other key is a tensor: an object with exactly "dtype" (a known name), "shape" (integers
//   >= 0 whose product times the element size fits in 64 bits) and "data_offsets" ([begin, end],
//   begin <= end <= data size, end - begin == numel * element size);
// - sorted by offset, the tensors tile the data section exactly: no overlap, no hole, and no
//   trailing bytes after the last tensor. Trailing garbage is rejected rather than ignored because
//   it usually means a truncated or concatenated write, and the reference rejects it too, so any
//   file we accept loads in Python as well.
// The data is not touched (NaN checks are separate, see find_non_finite), so parsing is cheap
// even for gigabytes of weights.

namespace {

using Json = nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
constexpr int kMaxJsonDepth = 4;  // top object > tensor entry > shape array, with room to spare

std::string tensor_where(const std::string& name) {
  return "tensor " + quoted_name(name);
}

Metadata parse_metadata(const Json& value, const std::string& file) {
  if (!value.is_object()) {
    throw Error(file, "header field '__metadata__' is not an object of strings");
  }
  Metadata metadata;
  for (const auto& [key, entry] : value.items()) {
    if (!entry.is_string()) {
      throw Error(file, "header field '__metadata__': value of " + quoted_name(key) +
                            " is not a string (metadata maps strings to strings)");
    }
    metadata.emplace(key, entry.get<std::string>());
  }
  return metadata;
}

struct Entry {
  TensorView view;
  uint64_t begin = 0;
  uint64_t end = 0;
};

const Json& required_field(const Json& entry, const char* field, const std::string& where) {
  const auto it = entry.find(field);
  if (it == entry.end()) throw Error(where, std::string("missing field '") + field + "'");
  return *it;
}

Entry parse_entry(const std::string& name, const Json& value, uint64_t data_size,
                  const std::string& file) {
  const std::string where = file + ": " + tensor_where(name);
  if (name.empty()) throw Error(file, "a tensor has an empty name");
  if (!value.is_object()) throw Error(where, "entry is not an object");
  for (const auto& field : value.items()) {
    if (field.key() != "dtype" && field.key() != "shape" && field.key() != "data_offsets") {
      throw Error(where, "unknown field " + quoted_name(field.key()));
    }
  }

  Entry entry;
  entry.view.name = name;
  entry.view.file = file;

  const Json& dtype = required_field(value, "dtype", where);
  if (!dtype.is_string()) throw Error(where, "field 'dtype' is not a string");
  const auto parsed_dtype = dtype_from_name(dtype.get_ref<const std::string&>());
  if (!parsed_dtype) {
    throw Error(where, "unsupported dtype " + quoted_name(dtype.get_ref<const std::string&>()) +
                           " (supported: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL)");
  }
  entry.view.dtype = *parsed_dtype;

  const Json& shape = required_field(value, "shape", where);
  if (!shape.is_array()) throw Error(where, "field 'shape' is not an array");
  for (const Json& dim : shape) {
    if (!dim.is_number_integer()) throw Error(where, "field 'shape' holds a non-integer");
    if (!dim.is_number_unsigned()) {
      throw Error(where,
                  "field 'shape' holds a negative dimension " + std::to_string(dim.get<int64_t>()));
    }
    const uint64_t size = dim.get<uint64_t>();
    if (size > static_cast<uint64_t>(INT64_MAX)) {
      throw Error(where, "field 'shape' holds a dimension too large for 64 bits");
    }
    entry.view.shape.push_back(static_cast<int64_t>(size));
  }
  const auto numel = shape_numel(entry.view.shape);
  uint64_t expected_bytes = 0;
  if (!numel || __builtin_mul_overflow(static_cast<uint64_t>(*numel),
                                       static_cast<uint64_t>(dtype_size(entry.view.dtype)),
                                       &expected_bytes)) {
    throw Error(where, "shape " + shape_to_string(entry.view.shape) +
                           " has more bytes than fit in 64 bits");
  }

  const Json& offsets = required_field(value, "data_offsets", where);
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    throw Error(where, "field 'data_offsets' is not [begin, end] with non-negative integers");
  }
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  const std::string range =
      "data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]";
  if (entry.begin > entry.end) throw Error(where, range + " has begin > end");
  if (entry.end > data_size) {
    throw Error(where, range + " runs past the end of the data (" + std::to_string(data_size) +
                           " bytes): the file is truncated or the offsets are wrong");
  }
  if (entry.end - entry.begin != expected_bytes) {
    throw Error(where, range + " holds " + std::to_string(entry.end - entry.begin) +
                           " bytes but shape " + shape_to_string(entry.view.shape) + " of " +
                           std::string(dtype_name(entry.view.dtype)) + " needs " +
                           std::to_string(expected_bytes));
  }
  entry.view.byte_size = static_cast<size_t>(expected_bytes);
  return entry;
}

}  // namespace

nlohmann::json parse_json_strictly(const char* text, size_t size, const std::string& file,
                                   const char* document, int max_depth,
                                   const char* top_level_noun) {
  std::vector<std::set<std::string>> open_objects;
  std::string top_key;
  auto on_event = [&](int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= max_depth) {
          throw Error(file, std::string(document) + " is nested deeper than expected" +
                                (top_key.empty() ? "" : " (inside " + quoted_name(top_key) + ")"));
        }
        if (event == Json::parse_event_t::object_start) open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        open_objects.pop_back();
        break;
      case Json::parse_event_t::key: {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (depth == 1) top_key = key;
        if (!open_objects.back().insert(key).second) {
          if (depth == 1) {
            throw Error(file,
                        std::string(top_level_noun) + " " + quoted_name(key) + " appears twice");
          }
          throw Error(file, std::string(top_level_noun) + " " + quoted_name(top_key) + ": key " +
                                quoted_name(key) + " appears twice");
        }
        break;
      }
      default:
        break;
    }
    return true;
  };
  try {
    return Json::parse(text, text + size, on_event);
  } catch (const Json::exception& error) {
    throw Error(file, std::string(document) + " is not valid JSON: " + sanitized(error.what()));
  }
}

namespace {

// Length of the well-formed UTF-8 sequence starting at text[i], or 0 if it is not one.
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const size_t length = lead < 0x80           ? 1
                        : (lead >> 5) == 0x6  ? 2
                        : (lead >> 4) == 0xe  ? 3
                        : (lead >> 3) == 0x1e ? 4
                                              : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return 0;
  }
  return length;
}

}  // namespace

std::string sanitized(std::string_view text) {
  constexpr size_t kMaxChars = 200;
  static const char kHex[] = "0123456789abcdef";
  const std::string_view kept = text.substr(0, kMaxChars);
  std::string out;
  for (size_t i = 0; i < kept.size();) {
    const auto byte = static_cast<unsigned char>(kept[i]);
    const size_t length = utf8_sequence_length(kept, i);
    if (length == 0 || byte < 0x20 || byte == 0x7f) {
      // Control characters and broken UTF-8 would garble a terminal or a log line.
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
      ++i;
    } else {
      out.append(kept.substr(i, length));
      i += length;
    }
  }
  if (text.size() > kMaxChars) out += "...";
  return out;
}

std::string quoted_name(std::string_view text) {
  return "'" + sanitized(text) + "'";
}

SafetensorsContents parse_safetensors(const uint8_t* bytes, size_t size, const std::string& file) {
  if (size == 0) throw Error(file, "empty file (not a safetensors file)");
  if (size < 8) {
    throw Error(file, "truncated: " + std::to_string(size) +
                          " bytes, shorter than the 8-byte header length");
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | bytes[i];
  if (header_size > kMaxHeaderBytes) {
    throw Error(file, "header length " + std::to_string(header_size) +
                          " exceeds the 100 MiB limit (corrupt or not a safetensors file)");
  }
  if (header_size > size - 8) {
    throw Error(file, "header length " + std::to_string(header_size) +
                          " runs past the end of the " + std::to_string(size) +
                          "-byte file: the file is truncated");
  }

  const Json header = parse_json_strictly(reinterpret_cast<const char*>(bytes + 8), header_size,
                                          file, "header", kMaxJsonDepth, "tensor");
  if (!header.is_object()) throw Error(file, "header is not a JSON object");

  const uint64_t data_size = size - 8 - header_size;
  const uint8_t* data = bytes + 8 + header_size;
  SafetensorsContents contents;
  contents.header_size = header_size;
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      contents.metadata = parse_metadata(value, file);
    } else {
      entries.push_back(parse_entry(key, value, data_size, file));
    }
  }

  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;
  const std::string* previous = nullptr;
  for (Entry& entry : entries) {
    if (entry.begin < covered) {
      throw Error(file, tensor_where(entry.view.name) + ": data_offsets overlap those of " +
                            tensor_where(*previous));
    }
    if (entry.begin > covered) {
      throw Error(file, tensor_where(entry.view.name) + ": unused bytes [" +
                            std::to_string(covered) + ", " + std::to_string(entry.begin) +
                            ") before its data (the tensors must tile the data section)");
    }
    covered = entry.end;
    previous = &entry.view.name;
    entry.view.data = data + entry.begin;
  }
  if (covered != data_size) {
    throw Error(file, std::to_string(data_size - covered) +
                          " trailing bytes after the last tensor's data (truncated write or "
                          "trailing garbage)");
  }
  contents.tensors.reserve(entries.size());
  for (Entry& entry : entries) contents.tensors.push_back(std::move(entry.view));
  return contents;
}

}  // namespace wc
