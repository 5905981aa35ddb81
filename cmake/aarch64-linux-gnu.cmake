# Cross-compiles uprof for aarch64 (arm64) Linux with Debian's cross toolchain
# (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu, libc6-dev-arm64-cross) and links it
# statically, so the binary runs on any arm64 kernel with nothing else installed
# (scripts/arm64_live_test.sh boots it under qemu-system-aarch64).
#
# The libraries uprof needs come from Debian's arm64 -dev packages unpacked with
# `dpkg-deb -x` into a sysroot directory (no `dpkg --add-architecture`):
#   libelf-dev libdw-dev zlib1g-dev liblzma-dev libbz2-dev
#   libboost1.74-dev libboost-program-options1.74-dev
# That directory holds only those packages; libc and libstdc++ stay the cross
# toolchain's own (/usr/aarch64-linux-gnu), so it is not a --sysroot for gcc.
#
#   cmake -S . -B build-arm64/uprof -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DUPROF_AARCH64_SYSROOT=$PWD/build-arm64/sysroot -DUPROF_TESTS=OFF -DUPROF_BENCH=OFF
#   cmake --build build-arm64/uprof --target uprof
#
# UPROF_AARCH64_SYSROOT may also come from the environment; it defaults to
# build-arm64/sysroot in the source tree.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT UPROF_AARCH64_SYSROOT)
  if(DEFINED ENV{UPROF_AARCH64_SYSROOT})
    set(UPROF_AARCH64_SYSROOT "$ENV{UPROF_AARCH64_SYSROOT}")
  else()
    get_filename_component(UPROF_AARCH64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../build-arm64/sysroot" ABSOLUTE)
  endif()
endif()
set(UPROF_AARCH64_SYSROOT "${UPROF_AARCH64_SYSROOT}" CACHE PATH "arm64 -dev packages unpacked with dpkg-deb -x")
# try_compile projects read this file again: hand them the same sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES UPROF_AARCH64_SYSROOT)
if(NOT EXISTS "${UPROF_AARCH64_SYSROOT}/usr/include/libelf.h")
  message(FATAL_ERROR "aarch64 sysroot ${UPROF_AARCH64_SYSROOT} has no usr/include/libelf.h: "
                      "unpack Debian's arm64 -dev packages there (scripts/arm64_live_test.sh does)")
endif()
set(_uprof_multiarch "${UPROF_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")

# find_package / find_library / find_path look in the sysroot and the cross libc,
# never in the host's /usr; programs (pkg-config, ...) are the host's.
set(CMAKE_FIND_ROOT_PATH "${UPROF_AARCH64_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg_check_modules(... libdw libelf): the sysroot's .pc files, with their private
# dependencies (libdw.a needs -lz -llzma -lbz2), and only static archives.
if(NOT DEFINED ENV{PKG_CONFIG_LIBDIR})
  set(ENV{PKG_CONFIG_LIBDIR} "${_uprof_multiarch}/pkgconfig:${UPROF_AARCH64_SYSROOT}/usr/share/pkgconfig")
endif()
if(NOT DEFINED ENV{PKG_CONFIG_SYSROOT_DIR})
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${UPROF_AARCH64_SYSROOT}")
endif()
set(PKG_CONFIG_ARGN --static CACHE STRING "Arguments to supply to pkg-config")
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)

# find_package(Boost ... program_options): Boost's own CMake config in the sysroot,
# its static variant.
set(Boost_USE_STATIC_LIBS ON)

# Library headers of the sysroot (libelf.h, elfutils/, boost/) after the cross
# libc's; a fully static executable.
set(CMAKE_C_FLAGS_INIT "-idirafter ${UPROF_AARCH64_SYSROOT}/usr/include")
set(CMAKE_CXX_FLAGS_INIT "-idirafter ${UPROF_AARCH64_SYSROOT}/usr/include")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -L${_uprof_multiarch}")
