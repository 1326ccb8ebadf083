// Anchors the switchboard_pch target, which exists to build src/PrecompiledHeaders.h once (see CMakeLists.txt).
