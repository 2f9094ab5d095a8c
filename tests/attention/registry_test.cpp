// The registry: unknown names and malformed settings are clear errors.
#include "engine/attention/registry.h"

#include <gtest/gtest.h>

#include "engine/attention/headcast/head_type.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

TEST(Registry, UnknownPolicyNamesTheKnownOnes) {
  try {
    create_policy("no-such-policy", ModelShape{});
    FAIL() << "expected wc::Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no-such-policy"), std::string::npos);
  }
}

TEST(HeadType, NamesRoundTrip) {
  for (int i = 0; i < kHeadTypeCount; ++i) {
    const auto type = static_cast<HeadType>(i);
    EXPECT_EQ(parse_head_type(head_type_name(type)), type);
  }
  EXPECT_FALSE(parse_head_type("bogus").has_value());
}

TEST(HeadType, CountsACastByName) {
  const std::vector<std::vector<HeadType>> cast = {
      {HeadType::kDummy, HeadType::kGlobal, HeadType::kDummy},
      {HeadType::kGlobal, HeadType::kSink, HeadType::kDummy}};
  const std::map<std::string, int> counts = head_type_counts(cast);
  EXPECT_EQ(counts, (std::map<std::string, int>{{"dummy", 3}, {"global", 2}, {"sink", 1}}));
  EXPECT_EQ(head_type_counts_text(counts), "3 dummy, 2 global, 1 sink");
  EXPECT_TRUE(head_type_counts({}).empty());
  EXPECT_EQ(head_type_counts_text({}), "");
}

}  // namespace
}  // namespace wc::attention
