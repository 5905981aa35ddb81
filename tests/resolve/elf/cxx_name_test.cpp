// C++ names as people write them against names as the demangler prints them, and
// gcc's clone marks. The demangled names are those of real symbols: libstdc++'s
// (Debian 12) and the fixtures'.
#include "uprof/resolve/elf/cxx_name.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(CxxName, WrittenAsPeopleWriteThem) {
  const std::string push_back = demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
  ASSERT_EQ(push_back, "std::vector<int, std::allocator<int> >::push_back(int const&)");
  EXPECT_TRUE(cxx_name_matches("std::vector<int>::push_back(int const&)", push_back));
  EXPECT_TRUE(cxx_name_matches("std::vector<int>::push_back(const int&)", push_back));
  EXPECT_TRUE(cxx_name_matches("std::vector<int, std::allocator<int>>::push_back(const int &)", push_back));
  EXPECT_FALSE(cxx_name_matches("std::vector<long>::push_back(int const&)", push_back));
  EXPECT_FALSE(cxx_name_matches("std::vector<int>::push_back(int&&)", push_back));
  EXPECT_FALSE(cxx_name_matches("std::vector<int>::push_back", push_back));

  // std::string as libstdc++'s C++11 ABI spells it.
  const std::string compare = demangle("_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7compareEPKc");
  ASSERT_EQ(compare, "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::compare(char const*) const");
  EXPECT_TRUE(cxx_name_matches("std::__cxx11::string::compare(const char*) const", compare));
  EXPECT_TRUE(cxx_name_matches(compare, compare));
  EXPECT_FALSE(cxx_name_matches("std::__cxx11::string::compare(const char*)", compare));
  // The old ABI's string is "std::string" to the demangler: that name is its, strictly.
  const std::string old_compare = demangle("_ZNKSs7compareEPKc");
  ASSERT_EQ(old_compare, "std::string::compare(char const*) const");
  EXPECT_TRUE(cxx_name_matches("std::string::compare(const char*) const", old_compare));
  EXPECT_FALSE(cxx_name_matches("std::string::compare(const char*) const", compare));
  EXPECT_TRUE(cxx_name_matches("std::string::compare(const char*) const", compare, true));

  // A template function's name starts with its return type.
  EXPECT_TRUE(cxx_name_matches("ns::twice<int>(int)", "int ns::twice<int>(int)"));
  EXPECT_TRUE(cxx_name_matches("operator new(unsigned long)", "operator new(unsigned long)"));
  EXPECT_TRUE(cxx_name_matches("operator new (unsigned  long)", "operator new(unsigned long)"));
  EXPECT_FALSE(cxx_name_matches("operator new[](unsigned long)", "operator new(unsigned long)"));
}

TEST(CxxName, AbiTagsOnlyWhenLoose) {
  const std::string tagged = demangle("_ZNKSt6locale4nameB5cxx11Ev");
  ASSERT_EQ(tagged, "std::locale::name[abi:cxx11]() const");
  EXPECT_FALSE(cxx_name_matches("std::locale::name() const", tagged));
  EXPECT_TRUE(cxx_name_matches("std::locale::name() const", tagged, true));
  EXPECT_TRUE(cxx_name_matches("std::locale::name[abi:cxx11]() const", tagged));
}

TEST(CxxName, ParametersAndQualifiers) {
  EXPECT_EQ(strip_cxx_parameters("ns::Klass::method(int) const"), "ns::Klass::method");
  EXPECT_EQ(strip_cxx_parameters("int ns::twice<int>(int)"), "ns::twice<int>");
  EXPECT_EQ(strip_cxx_parameters("ns::Klass::method(double) [clone .isra.0]"), "ns::Klass::method");
  EXPECT_EQ(strip_cxx_parameters("operator delete(void*, unsigned long)"), "operator delete");
  EXPECT_EQ(strip_cxx_parameters("std::less<int>::operator()(int const&, int const&) const"), "std::less<int>::operator()");
  EXPECT_EQ(strip_cxx_qualifiers("ns::V::get() const"), "ns::V::get()");
  EXPECT_EQ(strip_cxx_qualifiers("ns::V::get() const &&"), "ns::V::get()");
  EXPECT_EQ(strip_cxx_qualifiers("ns::V::operator&"), "ns::V::operator&");
  EXPECT_EQ(strip_cxx_qualifiers("f(int&)"), "f(int&)");
}

// gcc's marks, as `nm` shows them on the fixtures (tests/fixtures/clones.cpp) and glibc.
TEST(CxxName, CloneMarks) {
  EXPECT_EQ(clone_suffix("_ZN2ns5Klass6methodEd.isra.0"), ".isra.0");
  EXPECT_EQ(clone_suffix("_ZN2ns5Klass6methodEiRKNS_3BigEi.constprop.0.isra.0"), ".constprop.0.isra.0");
  EXPECT_EQ(clone_suffix("scale.constprop.0"), ".constprop.0");
  EXPECT_EQ(clone_suffix("check.part.0"), ".part.0");
  EXPECT_EQ(clone_suffix("_Z5inneri.cold"), ".cold");
  EXPECT_EQ(clone_suffix("f.lto_priv.0"), ".lto_priv.0");
  EXPECT_EQ(clone_suffix("main"), "");
  EXPECT_EQ(clone_suffix("memcpy"), "");
  EXPECT_EQ(clone_suffix(".part"), "");       // a name, not a base and a mark
  EXPECT_EQ(clone_suffix("version.1"), "");   // a number alone is no mark
  EXPECT_TRUE(is_cold_part("_Z5inneri.cold"));
  EXPECT_TRUE(is_cold_part("f.part.0.cold.1"));
  EXPECT_FALSE(is_cold_part("f.part.0"));
  EXPECT_TRUE(names_a_clone("scale.constprop.0"));
  EXPECT_TRUE(names_a_clone("ns::f(int) [clone .isra.0]"));
  EXPECT_TRUE(names_a_clone("*.isra.*"));
  EXPECT_FALSE(names_a_clone("ns::f(int)"));
  EXPECT_EQ(demangle("_ZN2ns5Klass6methodEd.isra.0"), "ns::Klass::method(double) [clone .isra.0]");
  EXPECT_EQ(demangle("scale"), "");
}

}  // namespace
}  // namespace uprof
