# The modules of src/: each src/<module>/module.cmake (included by src/CMakeLists.txt) lists its sources and
# declares the modules and third-party libraries it uses, PUBLIC when its headers expose them, PRIVATE otherwise:
#
#   switchboard_module(store SOURCES Database.cpp ... PUBLIC switchboard_bus SQLiteCpp PRIVATE switchboard_support)
#
# With SWITCHBOARD_MODULE_LIBRARIES each module is a static library of its own, switchboard_<module>. Every module
# sees the public headers (include/, the generated ones) and, privately, src/, so it includes another module's
# header by its path ("daemon/Daemon.h"); what keeps the layers apart is the link. With SWITCHBOARD_LAYERING_CHECK
# each module also gets a program that links all of the module's code (whole archive) and nothing but what the
# module declares: a module that calls into one it does not declare, directly or through the modules it declares,
# fails to link there, naming the missing symbol. Without module libraries (optimised builds), the modules are
# compiled together as switchboard_modules, in fewer and larger unity batches, and switchboard_<module> names it.
function(switchboard_module module)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;PUBLIC;PRIVATE")
  set(target switchboard_${module})
  set(sources "")
  foreach(source ${arg_SOURCES})
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${CMAKE_CURRENT_LIST_DIR} OUTPUT_VARIABLE source)
    list(APPEND sources ${source})
  endforeach()
  switchboard_declare_layer(${target} ${CMAKE_CURRENT_LIST_DIR} "${arg_PUBLIC}" "${arg_PRIVATE}" "${sources}")
  if(NOT SWITCHBOARD_MODULE_LIBRARIES)
    add_library(${target} INTERFACE)
    target_link_libraries(${target} INTERFACE switchboard_modules)
    target_sources(switchboard_modules PRIVATE ${sources})
    foreach(scope PUBLIC PRIVATE)
      foreach(library ${arg_${scope}})
        if(NOT library MATCHES "^switchboard_")
          target_link_libraries(switchboard_modules ${scope} ${library})
        endif()
      endforeach()
    endforeach()
    return()
  endif()
  add_library(${target} STATIC ${sources})
  switchboard_module_basics(${target})
  target_link_libraries(${target} PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE})
  switchboard_layering_check(${target})
endfunction()

# What every library of src/ has: the include paths, and what the shared precompiled header
# (src/PrecompiledHeaders.h) brings into each of its translation units.
function(switchboard_module_basics target)
  target_include_directories(${target}
    PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/generated
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(${target} PUBLIC BOOST_ASIO_NO_DEPRECATED)
  target_link_libraries(${target}
    PUBLIC Boost::headers nlohmann_json::nlohmann_json spdlog::spdlog Threads::Threads
    PRIVATE switchboard_warnings)
  switchboard_reuse_pch(${target})
endfunction()

# Records what a library declares (its directory, the libraries of ours it uses, its sources), for the manifest
# below. Libraries that are not modules (the adapters, the adapter interface) are read from their targets.
function(switchboard_declare_layer target directory public private sources)
  set_property(GLOBAL APPEND PROPERTY SWITCHBOARD_LAYERED_TARGETS ${target})
  set(ours_public "")
  set(ours_private "")
  foreach(library ${public})
    if(library MATCHES "^switchboard_")
      list(APPEND ours_public ${library})
    endif()
  endforeach()
  foreach(library ${private})
    if(library MATCHES "^switchboard_")
      list(APPEND ours_private ${library})
    endif()
  endforeach()
  list(JOIN ours_public "," ours_public)
  list(JOIN ours_private "," ours_private)
  list(JOIN sources "," sources)
  set_property(GLOBAL PROPERTY SWITCHBOARD_LAYER_${target} "${target}\t${directory}\t${ours_public}\t${ours_private}\t${sources}")
endfunction()

# A library whose layering is checked though it is not a module: its declarations are read from the target.
function(switchboard_layered target)
  set_property(GLOBAL APPEND PROPERTY SWITCHBOARD_LAYERED_TARGETS ${target})
endfunction()

# The program that proves `target` (a static library) links with only what it declares (see above). It does
# nothing; building it is the check.
function(switchboard_layering_check target)
  if(NOT SWITCHBOARD_LAYERING_CHECK OR NOT SWITCHBOARD_MODULE_LIBRARIES)
    return()
  endif()
  if(NOT TARGET switchboard_layering_main)
    add_library(switchboard_layering_main OBJECT ${PROJECT_SOURCE_DIR}/cmake/LayeringCheck.cpp)
  endif()
  add_executable(${target}_links $<TARGET_OBJECTS:switchboard_layering_main>)
  target_link_libraries(${target}_links PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${target}>")
  set_target_properties(${target}_links PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/layering)
  # Only whether it links matters: no debug information to copy into a program nobody runs.
  target_link_options(${target}_links PRIVATE -Wl,--strip-debug)
endfunction()

# The link check sees only calls; an include of a module's header that needs none of its code (a struct, an inline
# function) is checked by tests/check_layering.py, from what this writes at configure time: for each layered
# library, its source directory, the libraries of ours it declares, public and private, and its sources.
function(switchboard_write_layering_manifest file)
  get_property(targets GLOBAL PROPERTY SWITCHBOARD_LAYERED_TARGETS)
  set(lines "")
  foreach(target ${targets})
    get_property(declared GLOBAL PROPERTY SWITCHBOARD_LAYER_${target})
    if(declared)
      string(APPEND lines "${declared}\n")
      continue()
    endif()
    get_target_property(type ${target} TYPE)
    get_target_property(dir ${target} SOURCE_DIR)
    get_target_property(interface_links ${target} INTERFACE_LINK_LIBRARIES)
    set(public "")
    foreach(library ${interface_links})
      if(library MATCHES "^switchboard_" AND TARGET ${library})
        list(APPEND public ${library})
      endif()
    endforeach()
    set(private "")
    set(sources "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${target} LINK_LIBRARIES)
      foreach(library ${links})
        # switchboard_warnings is flags, not code.
        if(library MATCHES "^switchboard_" AND TARGET ${library} AND NOT library IN_LIST public
           AND NOT library STREQUAL "switchboard_warnings")
          list(APPEND private ${library})
        endif()
      endforeach()
      get_target_property(target_sources ${target} SOURCES)
      foreach(source ${target_sources})
        cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${dir} OUTPUT_VARIABLE source)
        list(APPEND sources ${source})
      endforeach()
    endif()
    list(JOIN public "," public)
    list(JOIN private "," private)
    list(JOIN sources "," sources)
    string(APPEND lines "${target}\t${dir}\t${public}\t${private}\t${sources}\n")
  endforeach()
  file(WRITE ${file} "${lines}")
endfunction()
