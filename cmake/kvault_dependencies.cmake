# The build's dependencies, found wherever they are installed: Debian/Ubuntu or Fedora
# packages, a conda environment (CMAKE_PREFIX_PATH=$CONDA_PREFIX, or an active one), or any
# prefix named by CMAKE_PREFIX_PATH. What cannot be found stops the configuration with one
# error naming the package to install. Each library ends as the imported target the
# components link: SQLite::SQLite3, nlohmann_json::nlohmann_json, CLI11::CLI11,
# PkgConfig::HTTPLIB, GTest::gtest_main (and CURL_INCLUDE_DIRS for src/llm).
#
# KVAULT_PYTHON (optional): the Python the worker will run under. When given, it is asked
# for PyTorch's version and extension headers and for pybind11's headers, so that a Python
# that cannot build candidates fails here rather than at the first `kvault verify`.

# An active conda environment is searched like a prefix of its own.
if(DEFINED ENV{CONDA_PREFIX} AND NOT "$ENV{CONDA_PREFIX}" IN_LIST CMAKE_PREFIX_PATH)
  list(APPEND CMAKE_PREFIX_PATH "$ENV{CONDA_PREFIX}")
endif()

# kvault_missing(WHAT DEBIAN FEDORA CONDA): stops with the packages that provide WHAT.
function(kvault_missing what debian fedora conda)
  message(FATAL_ERROR
    "KernelVault needs ${what}, which CMake could not find. Install it:\n"
    "  Debian/Ubuntu: apt-get install ${debian}\n"
    "  Fedora/RHEL:   dnf install ${fedora}\n"
    "  conda:         conda install -c conda-forge ${conda}\n"
    "or pass -DCMAKE_PREFIX_PATH=<the prefix where it is installed>.")
endfunction()

# kvault_header_only(TARGET HEADER): an INTERFACE target over the folder holding HEADER,
# for header-only libraries installed without their CMake package files.
function(kvault_header_only target header)
  string(MAKE_C_IDENTIFIER "KVAULT_DIR_${header}" var)
  find_path(${var} ${header})
  if(NOT ${var})
    set(KVAULT_HEADER_FOUND FALSE PARENT_SCOPE)
    return()
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${${var}})
  set(KVAULT_HEADER_FOUND TRUE PARENT_SCOPE)
endfunction()

find_package(Threads REQUIRED)

find_package(SQLite3 QUIET)
if(NOT SQLite3_FOUND)
  kvault_missing("SQLite 3 (headers and library)" libsqlite3-dev sqlite-devel libsqlite)
endif()
if(KVAULT_PORTABLE_BINARY)
  find_library(KVAULT_SQLITE_STATIC NAMES libsqlite3.a)
  if(NOT KVAULT_SQLITE_STATIC)
    kvault_missing("a static SQLite (libsqlite3.a) for KVAULT_PORTABLE_BINARY"
                   libsqlite3-dev sqlite-static libsqlite)
  endif()
  set_target_properties(SQLite::SQLite3 PROPERTIES IMPORTED_LOCATION ${KVAULT_SQLITE_STATIC}
                        INTERFACE_LINK_LIBRARIES "dl;m;Threads::Threads")
  add_link_options(-static-libstdc++ -static-libgcc)
endif()

find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  kvault_header_only(nlohmann_json::nlohmann_json nlohmann/json.hpp)
  if(NOT KVAULT_HEADER_FOUND)
    kvault_missing("nlohmann_json >= 3.10" nlohmann-json3-dev json-devel nlohmann_json)
  endif()
endif()

find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  kvault_header_only(CLI11::CLI11 CLI/CLI.hpp)
  if(NOT KVAULT_HEADER_FOUND)
    kvault_missing("CLI11" libcli11-dev cli11-devel cli11)
  endif()
endif()

# libcurl's headers only (src/llm loads the library at run time: src/llm/curl_library.h).
find_package(CURL QUIET)
if(NOT CURL_FOUND)
  kvault_missing("libcurl's development files" libcurl4-openssl-dev libcurl-devel libcurl)
endif()

# cpp-httplib for `kvault serve`: its pkg-config file (Debian), its CMake package
# (conda-forge, Fedora, vcpkg) or only its header.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
endif()
if(NOT TARGET PkgConfig::HTTPLIB)
  find_package(httplib QUIET)
  if(TARGET httplib::httplib)
    add_library(PkgConfig::HTTPLIB INTERFACE IMPORTED GLOBAL)
    set_target_properties(PkgConfig::HTTPLIB PROPERTIES INTERFACE_LINK_LIBRARIES httplib::httplib)
  else()
    kvault_header_only(PkgConfig::HTTPLIB httplib.h)
    if(NOT KVAULT_HEADER_FOUND)
      kvault_missing("cpp-httplib" libcpp-httplib-dev cpp-httplib-devel cpp-httplib)
    endif()
  endif()
endif()

if(KVAULT_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    kvault_missing("GoogleTest for the tests (or configure with -DKVAULT_BUILD_TESTS=OFF)"
                   libgtest-dev gtest-devel gtest)
  endif()
endif()

set(KVAULT_PYTHON "" CACHE FILEPATH
    "Python the worker runs under, checked for PyTorch and pybind11 headers (optional)")
if(KVAULT_PYTHON)
  execute_process(
    COMMAND ${KVAULT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/kvault_check_python.py
    RESULT_VARIABLE _kvault_python_rc OUTPUT_VARIABLE _kvault_python_out
    ERROR_VARIABLE _kvault_python_err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _kvault_python_rc EQUAL 0)
    message(FATAL_ERROR "KVAULT_PYTHON=${KVAULT_PYTHON} cannot build candidates:\n"
                        "${_kvault_python_out}\n${_kvault_python_err}")
  endif()
  message(STATUS "Worker Python: ${_kvault_python_out}")
endif()
