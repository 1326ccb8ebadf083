# Decoding with the path of the first failure, and the serializer every encoded event goes through.
switchboard_module(json
  SOURCES DecodeContext.cpp Decoders.cpp JsonWriter.cpp
  PRIVATE switchboard_support)
# The serializer's string escaping runs for every byte of every event: at -O2 bench_egress quoted short strings
# a quarter slower (14 ns against 11 ns per 6-byte string), so in release builds it keeps -O3, in a translation
# unit of its own (CMake leaves a source with its own options out of the unity batches) and without the
# precompiled header, which GCC built at the other level.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/JsonWriter.cpp PROPERTIES COMPILE_OPTIONS $<$<CONFIG:Release>:-O3>
                                                                           SKIP_PRECOMPILE_HEADERS ON)
