// Note [Checked JSON]: valid text parses as nlohmann does; a number out of range, a key given
// twice and malformed text are wc::Errors naming the place and the field path.
#include "engine/core/json_text.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "engine/core/error.h"
#include "engine/core/json_object_reader.h"

namespace wc {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json(text, "cfg.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ParseJson, ParsesValidTextAsNlohmannDoes) {
  const std::string text =
      R"({"a": 1, "b": [1.5, {"c": "x", "d": [true, null]}], "e": {}, "f": [], "g": -3e5})";
  EXPECT_EQ(parse_json(text, "cfg.json"), nlohmann::json::parse(text));
  EXPECT_EQ(parse_json("[1, 2]", "x"), nlohmann::json::parse("[1, 2]"));
  EXPECT_EQ(parse_json("7", "x"), 7);
  // The same key in different objects is no repeat.
  EXPECT_EQ(parse_json(R"({"a": {"k": 1}, "b": {"k": 2}, "k": 3})", "x")["b"]["k"], 2);
}

TEST(ParseJson, NamesTheFieldOfANumberOutOfRange) {
  for (const auto& [text, field] : std::initializer_list<std::pair<const char*, const char*>>{
           {R"({"hidden": 1e400})", "field 'hidden'"},
           {R"({"sampler": {"steps": 2, "shift": -1e999}})", "field 'sampler.shift'"},
           {R"({"a": [1, 2, 1e400]})", "field 'a[2]'"},
           {R"({"a": [{"x": 1}, {"y": 1e400}]})", "field 'a[1].y'"}}) {
    const std::string e = error_of(text);
    EXPECT_EQ(e.rfind("cfg.json: ", 0), 0u) << e;
    EXPECT_NE(e.find(field), std::string::npos) << text << " -> " << e;
    EXPECT_NE(e.find("out_of_range"), std::string::npos) << e;
  }
}

TEST(ParseJson, RefusesAKeyGivenTwiceByItsPath) {
  EXPECT_EQ(error_of(R"({"a": 1, "a": 2})"), "cfg.json: field 'a': given twice");
  EXPECT_EQ(error_of(R"({"s": {"steps": 1, "shift": 2, "steps": 3}})"),
            "cfg.json: field 's.steps': given twice");
  EXPECT_EQ(error_of(R"({"l": [{"k": 1}, {"k": 1, "k": 2}]})"),
            "cfg.json: field 'l[1].k': given twice");
}

TEST(ParseJson, RefusesMalformedTextByName) {
  for (const char* text :
       {"", "{", R"({"a": })", R"({"a": 1,})", "[1, 2", "nan", R"({"a": NaN})"}) {
    const std::string e = error_of(text);
    EXPECT_EQ(e.rfind("cfg.json: ", 0), 0u) << text << " -> " << e;
    EXPECT_NE(e.find("not valid JSON"), std::string::npos) << text << " -> " << e;
  }
}

// An integer above 2^63 − 1 parses as unsigned; read as int64 it used to wrap, so the error
// showed a negative number the file never held ("got -9223372036854775808").
TEST(ObjectReaderIntegers, ShowTheNumberTheFileHoldsAndNeverWrap) {
  const nlohmann::json j = parse_json(
      R"({"a": 18446744073709551615, "b": 9223372036854775808, "c": -3, "d": 7, "e": [1, 18446744073709551611]})",
      "f.json");
  const auto message = [&](const std::function<void(ObjectReader&)>& read) {
    ObjectReader r(j, "f.json", "");
    try {
      read(r);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([](ObjectReader& r) { r.integer("a", 0, 100); }),
            "f.json: field 'a': must be in [0, 100], got 18446744073709551615");
  EXPECT_EQ(message([](ObjectReader& r) { r.integer("b", -5, 5); }),
            "f.json: field 'b': must be in [-5, 5], got 9223372036854775808");
  EXPECT_EQ(message([](ObjectReader& r) { r.integer("c", 0, 5); }),
            "f.json: field 'c': must be in [0, 5], got -3");
  EXPECT_EQ(message([](ObjectReader& r) { r.integer("c", -5, -1); }), "no error");
  EXPECT_EQ(message([](ObjectReader& r) { r.integer("d", 8, 9); }),
            "f.json: field 'd': must be in [8, 9], got 7");
  EXPECT_EQ(message([](ObjectReader& r) { EXPECT_EQ(r.integer("d", -1, 7), 7); }), "no error");
  EXPECT_EQ(message([](ObjectReader& r) { r.integers("e", 2, -10, 10); }),
            "f.json: field 'e[1]': must be in [-10, 10], got 18446744073709551611");
}

}  // namespace
}  // namespace wc
