# kvault_component(NAME DEPS...)
# Builds every *.cc in the calling folder except *_test.cc into static library
# kvault_<NAME>, and every *_test.cc into one GoogleTest executable registered with
# ctest. Adding a file to a component needs no CMake edit.
function(kvault_component name)
  file(GLOB _all CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  file(GLOB _tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  set(_srcs ${_all})
  if(_tests)
    list(REMOVE_ITEM _srcs ${_tests})
  endif()
  add_library(kvault_${name} STATIC ${_srcs})
  target_include_directories(kvault_${name} PUBLIC ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_BINARY_DIR}/generated)
  target_link_libraries(kvault_${name} PUBLIC ${ARGN})
  if(KVAULT_BUILD_TESTS AND _tests)
    add_executable(kvault_${name}_test ${_tests})
    target_link_libraries(kvault_${name}_test PRIVATE kvault_${name} GTest::gtest_main)
    gtest_discover_tests(kvault_${name}_test DISCOVERY_TIMEOUT 60
                         PROPERTIES LABELS unit ENVIRONMENT "KVAULT_SOURCE_ROOT=${CMAKE_SOURCE_DIR}")
  endif()
endfunction()
