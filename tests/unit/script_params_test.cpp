// A script's parameters: command-line words in, typed values and --help out.
#include "script/script_params.h"

#include <gtest/gtest.h>

#include "bpf_headers/mt_abi.h"
#include "common/error.h"

namespace mt {

namespace {

Param param(const std::string &name, ParamType type, const std::string &def,
            const std::string &shorter = "") {
  Param p;
  p.name = name;
  p.type = type;
  p.default_text = def;
  p.short_name = shorter;
  p.help = name == "type" ? "the layer" : "help for " + name;
  return p;
}

}  // namespace

TEST(ScriptParams, TakesValuesInEveryForm) {
  ScriptArgs args({"--min", "5", "--name=x", "-T", "vfs", "--verbose", "--no-quiet"});
  EXPECT_EQ(args.take_value(param("min", ParamType::Int, "0")), "5");
  EXPECT_EQ(args.take_value(param("name", ParamType::String, "")), "x");
  EXPECT_EQ(args.take_value(param("type", ParamType::String, "all", "T")), "vfs");
  EXPECT_EQ(args.take_value(param("verbose", ParamType::Bool, "false")), "true");
  EXPECT_EQ(args.take_value(param("quiet", ParamType::Bool, "true")), "false");
  EXPECT_EQ(args.take_value(param("other", ParamType::Uint, "9")), "9");
  EXPECT_NO_THROW(args.check_all_used());
}

TEST(ScriptParams, LongOptionsMaySpellUnderscoresAsDashes) {
  ScriptArgs args({"--all-rings", "--min-size=4", "--no-keep-going"});
  EXPECT_EQ(args.take_value(param("all_rings", ParamType::Bool, "false")), "true");
  EXPECT_EQ(args.take_value(param("min_size", ParamType::Int, "0")), "4");
  EXPECT_EQ(args.take_value(param("keep_going", ParamType::Bool, "true")), "false");
  args.check_all_used();
  EXPECT_NE(params_help("s", {param("all_rings", ParamType::Bool, "false")}).find("--all-rings"),
            std::string::npos);
}

TEST(ScriptParams, RejectsBadValuesNamingTheOption) {
  ScriptArgs args({"--min", "abc"});
  try {
    args.take_value(param("min", ParamType::Int, "0"));
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "invalid value 'abc' for --min: expected an integer");
  }
  ScriptArgs negative({"--count=-1"});
  EXPECT_THROW(negative.take_value(param("count", ParamType::Uint, "0")), Error);
}

TEST(ScriptParams, ChoicesAreTheOnlyValuesTakenAndHelpListsThem) {
  Param layer = param("type", ParamType::String, "all", "T");
  layer.choices = {"vfs", "blk", "all"};
  EXPECT_EQ(ScriptArgs({"-T", "blk"}).take_value(layer), "blk");
  try {
    ScriptArgs({"-T", "disk"}).take_value(layer);
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "invalid value 'disk' for -T: expected one of vfs, blk, all");
  }
  Param depth = param("depth", ParamType::Uint, "8");
  depth.choices = {"8", "16"};
  EXPECT_EQ(ScriptArgs({"--depth=0x10"}).take_value(depth), "0x10");  // 16, as numbers compare
  EXPECT_THROW(ScriptArgs({"--depth", "9"}).take_value(depth), Error);
  EXPECT_NE(params_help("s", {layer}).find("the layer (one of vfs, blk, all) (default: all)"),
            std::string::npos)
      << params_help("s", {layer});
}

TEST(ScriptParams, PositionalParametersTakeTheWordsOptionsLeft) {
  ScriptArgs args({"-d", "vda", "1", "--queued", "5"});
  EXPECT_EQ(args.take_value(param("disk", ParamType::String, "", "d")), "vda");
  EXPECT_EQ(args.take_value(param("queued", ParamType::Bool, "false")), "true");
  Param interval = param("interval", ParamType::Uint, "0");
  interval.positional = true;
  Param count = param("count", ParamType::Int, "0");
  count.positional = true;
  Param more = param("more", ParamType::Int, "7");
  more.positional = true;
  EXPECT_EQ(args.take_value(interval), "1");
  EXPECT_EQ(args.take_value(count), "5");
  EXPECT_EQ(args.take_value(more), "7");  // none left: the default
  EXPECT_NO_THROW(args.check_all_used());
  std::string help =
      params_help("biolatency", {param("disk", ParamType::String, "", "d"), interval});
  EXPECT_EQ(
      help.rfind("usage: moontrace [ENGINE OPTIONS] biolatency [SCRIPT OPTIONS] [interval]\n", 0),
      0u)
      << help;
  EXPECT_NE(help.find("\n  interval uint"), std::string::npos) << help;
}

TEST(ScriptParams, PositionalValuesAreChecked) {
  Param interval = param("interval", ParamType::Uint, "0");
  interval.positional = true;
  ScriptArgs args({"x"});
  try {
    args.take_value(interval);
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "invalid value 'x' for interval: expected a non-negative integer");
  }
  ScriptArgs extra({"1", "2"});
  extra.take_value(interval);
  try {
    extra.check_all_used();
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "unexpected argument '2' (see the script's --help)");
  }
}

TEST(ScriptParams, ReportsUnknownOptions) {
  ScriptArgs args({"--nope"});
  EXPECT_THROW(args.check_all_used(), Error);
}

TEST(ScriptParams, ListsParametersInHelp) {
  ScriptArgs args({"--help"});
  EXPECT_TRUE(args.wants_help());
  std::string help = params_help("x.lua", {param("min", ParamType::Int, "3", "m")});
  EXPECT_NE(help.find("-m, --min int"), std::string::npos) << help;
  EXPECT_NE(help.find("help for min (default: 3)"), std::string::npos);
}

TEST(ScriptParams, ParsesEachValueOnceIntoWhatEveryStageReads) {
  EXPECT_EQ(parse_param(ParamType::Int, "-0x10").number, -16);
  EXPECT_EQ(static_cast<uint64_t>(parse_param(ParamType::Uint, "18446744073709551615").number),
            UINT64_MAX);
  EXPECT_EQ(parse_param(ParamType::Bool, "yes").number, 1);
  EXPECT_EQ(parse_param(ParamType::Bool, "no").number, 0);
  EXPECT_EQ(parse_param(ParamType::String, std::string(MT_PARAM_STRING_BYTES - 1, 'x')).text.size(),
            size_t(MT_PARAM_STRING_BYTES - 1));
  try {
    parse_param(ParamType::String, std::string(MT_PARAM_STRING_BYTES, 'x'));
    ADD_FAILURE() << "a string too long was taken";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "strings are limited to 63 bytes");
  }
  EXPECT_EQ(param_type_named("boolean"), ParamType::Bool);
  EXPECT_EQ(param_type_named("float"), std::nullopt);
}

}  // namespace mt
