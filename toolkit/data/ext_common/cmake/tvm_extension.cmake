# Which TVM an extension builds against, and the one rule that builds it (written by `tk ext new`;
# the same file in every kind of scaffold). `tk ext build` sets the variables below after checking
# that the headers and the libraries match; run by hand, they are found from the Python given.
#
#   TVM_SOURCE_DIR     a TVM source tree: its include/ and its 3rdparty/tvm-ffi headers (those its
#                      headers were written against). Needed for compiler headers (tvm/tirx,
#                      tvm/relax...): the apache-tvm wheel ships include/tvm/runtime only.
#   TVM_PREBUILD_PATH  a prebuilt TVM with include/ and lib/ (an apache-tvm wheel's tvm/ dir).
#   TVM_LIBRARY_DIR    where libtvm_runtime (and libtvm_compiler) are: a stored tk build's lib/;
#                      default: the source tree's build/lib, else TVM_PREBUILD_PATH/lib.
#   TVM_FFI_LIBRARY    the libtvm_ffi.so to link; default: the Python's apache-tvm-ffi.
# Neither TVM_SOURCE_DIR nor TVM_PREBUILD_PATH: the tvm package the Python would import.
find_package(Python COMPONENTS Interpreter REQUIRED)

if(NOT TVM_PREBUILD_PATH AND NOT TVM_SOURCE_DIR)
  # find_spec does not import tvm: configuring stays quick and maps no libtvm.
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import importlib.util, os; s = importlib.util.find_spec('tvm'); print(os.path.dirname(s.origin) if s else '')"
    OUTPUT_VARIABLE TVM_PREBUILD_PATH OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT TVM_PREBUILD_PATH)
    message(FATAL_ERROR "No tvm importable by ${Python_EXECUTABLE}: pass -DTVM_PREBUILD_PATH or -DTVM_SOURCE_DIR")
  endif()
endif()

execute_process(
  COMMAND "${Python_EXECUTABLE}" -m tvm_ffi.config --cmakedir
  OUTPUT_VARIABLE tvm_ffi_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${Python_EXECUTABLE} -m tvm_ffi.config failed: pip install apache-tvm-ffi")
endif()
find_package(tvm_ffi CONFIG REQUIRED)
if(NOT TVM_FFI_LIBRARY)
  get_target_property(TVM_FFI_LIBRARY tvm_ffi::shared IMPORTED_LOCATION)
endif()

if(TVM_SOURCE_DIR)
  set(TVM_INCLUDE_DIRS "${TVM_SOURCE_DIR}/include")
  set(_ffi "${TVM_SOURCE_DIR}/3rdparty/tvm-ffi")
  if(EXISTS "${_ffi}/include/tvm/ffi/c_api.h")
    list(APPEND TVM_INCLUDE_DIRS "${_ffi}/include" "${_ffi}/3rdparty/dlpack/include")
  else()
    get_target_property(_ffi_inc tvm_ffi::header INTERFACE_INCLUDE_DIRECTORIES)
    list(APPEND TVM_INCLUDE_DIRS ${_ffi_inc})
  endif()
  set(_tvm_lib_dirs "${TVM_SOURCE_DIR}/build/lib" "${TVM_SOURCE_DIR}/build")
else()
  get_target_property(_ffi_inc tvm_ffi::header INTERFACE_INCLUDE_DIRECTORIES)
  set(TVM_INCLUDE_DIRS "${TVM_PREBUILD_PATH}/include" ${_ffi_inc})
  set(_tvm_lib_dirs)
endif()
if(TVM_PREBUILD_PATH)
  list(APPEND _tvm_lib_dirs "${TVM_PREBUILD_PATH}/lib")
endif()
if(TVM_LIBRARY_DIR)
  set(_tvm_lib_dirs "${TVM_LIBRARY_DIR}")
endif()
find_library(TVM_RUNTIME_LIBRARY NAMES tvm_runtime PATHS ${_tvm_lib_dirs} NO_DEFAULT_PATH)
find_library(TVM_COMPILER_LIBRARY NAMES tvm_compiler tvm PATHS ${_tvm_lib_dirs} NO_DEFAULT_PATH)
if(NOT TVM_RUNTIME_LIBRARY)
  message(FATAL_ERROR "No libtvm_runtime under ${_tvm_lib_dirs}")
endif()

# tvm_extension(NAME SOURCES... [COMPILER]): lib${NAME}.so from SOURCES, linked against
# libtvm_runtime and libtvm_ffi (COMPILER: libtvm_compiler too, for passes and codegens).
# Built, the library lands in the Python package, and its RUNPATH names the TVM and tvm-ffi it
# was built against, so `tk ext check` can tell what it would bind to. Installed (what goes into
# the wheel: cmake --install, run by `tk ext wheel`), its RUNPATH is relative: the apache-tvm and
# apache-tvm-ffi wheels put lib/ beside it in the same site-packages.
function(tvm_extension name)
  cmake_parse_arguments(ARG "COMPILER" "" "" ${ARGN})
  set(_libs "${TVM_RUNTIME_LIBRARY}" "${TVM_FFI_LIBRARY}")
  if(ARG_COMPILER)
    if(NOT TVM_COMPILER_LIBRARY)
      message(FATAL_ERROR "No libtvm_compiler (or libtvm) under ${_tvm_lib_dirs}: a runtime-only TVM cannot run passes")
    endif()
    list(GET TVM_INCLUDE_DIRS 0 _inc)
    if(NOT EXISTS "${_inc}/tvm/ir/transform.h")
      message(FATAL_ERROR "No tvm/ir/transform.h in ${_inc}: compiler headers come from a TVM source tree (-DTVM_SOURCE_DIR; the apache-tvm wheel ships include/tvm/runtime only)")
    endif()
    list(PREPEND _libs "${TVM_COMPILER_LIBRARY}")
  endif()
  add_library(${name} SHARED ${ARG_UNPARSED_ARGUMENTS})
  target_include_directories(${name} PRIVATE ${TVM_INCLUDE_DIRS})
  target_link_libraries(${name} PRIVATE ${_libs})
  set(_dirs)
  foreach(_lib ${_libs})
    get_filename_component(_dir "${_lib}" DIRECTORY)
    list(APPEND _dirs "${_dir}")
  endforeach()
  list(REMOVE_DUPLICATES _dirs)
  set_target_properties(${name} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/python/${name}/lib"
    BUILD_RPATH "${_dirs}"
    INSTALL_RPATH "$ORIGIN/../../tvm/lib;$ORIGIN/../../tvm_ffi/lib"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  install(TARGETS ${name} LIBRARY DESTINATION ${name}/lib)
  message(STATUS "${name}: TVM headers ${TVM_INCLUDE_DIRS}")
  message(STATUS "${name}: links ${_libs}")
endfunction()
