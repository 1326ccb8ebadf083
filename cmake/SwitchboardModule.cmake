# One static library per module of src/ (each src/<module>/CMakeLists.txt calls switchboard_module), with the
# modules and third-party libraries it uses declared: PUBLIC when its headers expose them, PRIVATE otherwise.
#
#   switchboard_module(store SOURCES Database.cpp ... PUBLIC switchboard_bus SQLiteCpp PRIVATE switchboard_support)
#
# makes the target switchboard_store. Every module sees the public headers (include/, the generated ones) and,
# privately, src/, so it includes another module's header by its path ("daemon/Daemon.h"); what keeps the layers
# apart is the link. With SWITCHBOARD_LAYERING_CHECK each module also gets a program that links all of the
# module's code (whole archive) and nothing but what the module declares: a module that calls into one it does not
# declare, directly or through the modules it declares, fails to link there, naming the missing symbol.
function(switchboard_module module)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;PUBLIC;PRIVATE")
  set(target switchboard_${module})
  add_library(${target} STATIC ${arg_SOURCES})
  target_include_directories(${target}
    PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/generated
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  # What the shared precompiled header (src/PrecompiledHeaders.h) brings into every translation unit.
  target_compile_definitions(${target} PUBLIC BOOST_ASIO_NO_DEPRECATED)
  target_link_libraries(${target}
    PUBLIC Boost::headers nlohmann_json::nlohmann_json spdlog::spdlog Threads::Threads ${arg_PUBLIC}
    PRIVATE switchboard_warnings ${arg_PRIVATE})
  switchboard_reuse_pch(${target})
  switchboard_layering_check(${target})
endfunction()

# Every library whose layering is checked: the modules, the adapters and the adapter interface.
function(switchboard_layered target)
  set_property(GLOBAL APPEND PROPERTY SWITCHBOARD_LAYERED_TARGETS ${target})
endfunction()

# The program that proves `target` (a static library) links with only what it declares (see above). It does
# nothing; building it is the check.
function(switchboard_layering_check target)
  switchboard_layered(${target})
  if(NOT SWITCHBOARD_LAYERING_CHECK)
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
# library, its source directory, its sources and the libraries of ours it declares, public and private.
function(switchboard_write_layering_manifest file)
  get_property(targets GLOBAL PROPERTY SWITCHBOARD_LAYERED_TARGETS)
  set(lines "")
  foreach(target ${targets})
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
        if(library MATCHES "^switchboard_" AND TARGET ${library} AND NOT library IN_LIST public)
          # switchboard_warnings and the like are flags, not code.
          if(NOT library STREQUAL "switchboard_warnings")
            list(APPEND private ${library})
          endif()
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
