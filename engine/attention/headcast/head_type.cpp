// Names of head types, for stats, JSON casts and the panel.
#include "engine/attention/headcast/head_type.h"

#include <array>

namespace wc::attention {
namespace {

constexpr std::array<const char*, kHeadTypeCount> kNames = {"dense",   "sink",   "dummy",
                                                            "spatial", "global", "neighbour"};

}  // namespace

const char* head_type_name(HeadType type) {
  return kNames[static_cast<size_t>(type)];
}

std::optional<HeadType> parse_head_type(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<HeadType>(i);
  }
  if (name == "S") return HeadType::kSink;
  if (name == "D") return HeadType::kDummy;
  if (name == "P") return HeadType::kSpatial;
  if (name == "G") return HeadType::kGlobal;
  if (name == "N") return HeadType::kNeighbour;
  return std::nullopt;
}

std::map<std::string, int> head_type_counts(const std::vector<std::vector<HeadType>>& cast) {
  std::map<std::string, int> counts;
  for (const auto& layer : cast) {
    for (HeadType type : layer) ++counts[head_type_name(type)];
  }
  return counts;
}

std::string head_type_counts_text(const std::map<std::string, int>& counts) {
  std::string text;
  for (const auto& [name, count] : counts) {
    text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + name;
  }
  return text;
}

}  // namespace wc::attention
