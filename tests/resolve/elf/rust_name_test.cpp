// Rust's symbols, legacy and v0, read as their paths. The symbols are rustc 1.95's: the
// fixture's (tests/fixtures/rust/panics.rs, crate m), std's and rustup's.
#include "uprof/resolve/elf/rust_name.h"

#include <gtest/gtest.h>

#include "uprof/resolve/elf/cxx_name.h"

namespace uprof {
namespace {

TEST(RustName, LegacySymbolsWithoutTheirHash) {
  EXPECT_TRUE(is_rust_symbol("_ZN1m4work17h8fc5375735d8f164E"));
  EXPECT_EQ(demangle_rust("_ZN1m4work17h8fc5375735d8f164E"), "m::work");
  EXPECT_EQ(demangle_rust("_ZN1m5inner6helper17h0123456789abcdefE"), "m::inner::helper");
  // demangle() reads them as Rust before the C++ demangler, which keeps the hash.
  EXPECT_EQ(demangle("_ZN1m4work17h8fc5375735d8f164E"), "m::work");
  // Legacy escapes: $LT$ $GT$ $u7b$ (for '<', '>', '{') and ".." for "::".
  EXPECT_EQ(demangle_rust("_ZN4core3ptr42drop_in_place$LT$std..io..error..Error$GT$17h1228c2f4eccaf5e0E"),
            "core::ptr::drop_in_place<std::io::error::Error>");
  EXPECT_EQ(demangle_rust("_ZN1m4main28_$u7b$$u7b$closure$u7d$$u7d$17hf87c47ea11b0d4beE"), "m::main::{{closure}}");
  // A trait's method on a type (rustup's own binary, hyper-tls).
  EXPECT_EQ(demangle_rust("_ZN107_$LT$hyper_tls..client..HttpsConnector$LT$T$GT$$u20$as$u20$tower_service..Service$LT$"
                          "http..uri..Uri$GT$$GT$4call28_$u7b$$u7b$closure$u7d$$u7d$17h00491fb8a0961f60E"),
            "<hyper_tls::client::HttpsConnector<T> as tower_service::Service<http::uri::Uri>>::call::{{closure}}");
  // LLVM's suffix on a local copy is no part of the name.
  EXPECT_EQ(demangle_rust("_ZN1m4work17h8fc5375735d8f164E.llvm.1234567"), "m::work");
}

TEST(RustName, V0SymbolsWithoutTheCratesDisambiguator) {
  EXPECT_TRUE(is_rust_symbol("_RNvCskK7mfDs1mzF_1m4work"));
  EXPECT_EQ(demangle_rust("_RNvCskK7mfDs1mzF_1m4work"), "m::work");
  EXPECT_EQ(demangle_rust("_RNvNtCskK7mfDs1mzF_1m5inner6helper"), "m::inner::helper");
  EXPECT_EQ(demangle("_RNvNtCskK7mfDs1mzF_1m5inner6helper"), "m::inner::helper");
  // A closure inside main, and a generic function's instances; std's, a crate of its own.
  EXPECT_EQ(demangle_rust("_RNCNvCskK7mfDs1mzF_1m4main0B3_"), "m::main::{closure#0}");
  EXPECT_EQ(demangle_rust("_RINvCskK7mfDs1mzF_1m2idmEB2_"), "m::id::<u32>");
  EXPECT_EQ(demangle_rust("_RINvCskK7mfDs1mzF_1m2idyEB2_"), "m::id::<u64>");
  EXPECT_EQ(demangle_rust("_RNCNvNtNtNtCsjrHSEGnQ3l9_3std3sys11personality3gcc14find_eh_action0B9_"),
            "std::sys::personality::gcc::find_eh_action::{closure#0}");
  EXPECT_EQ(rust_without_generic_args("m::id::<u32>"), "m::id");
  EXPECT_EQ(rust_without_generic_args("core::ptr::drop_in_place::<alloc::vec::Vec<u8>>"), "core::ptr::drop_in_place");
  EXPECT_EQ(rust_without_generic_args("<m::W<u8> as m::T>::f"), "<m::W<u8> as m::T>::f");
}

TEST(RustName, OtherNamesAreNotRust) {
  for (const char* s : {"main", "_Z3addii", "_ZN2ns5Klass6methodEi", "_ZN1m4workE", "_ZN1m4work17hzzzzzzzzzzzzzzzzE",
                        "_Random", "rust_eh_personality"}) {
    SCOPED_TRACE(s);
    EXPECT_FALSE(is_rust_symbol(s));
    EXPECT_EQ(demangle_rust(s), "");
  }
  EXPECT_EQ(demangle("_ZN2ns5Klass6methodEi"), "ns::Klass::method(int)");  // C++ as before
}

}  // namespace
}  // namespace uprof
