// The registry: unknown names and malformed settings are clear errors.
#include "engine/attention/registry.h"

#include <gtest/gtest.h>

#include "engine/attention/head_type.h"
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

}  // namespace
}  // namespace wc::attention
