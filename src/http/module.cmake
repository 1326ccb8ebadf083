# The web console (web/, served at GET /) and the Debian-packaged libraries it renders Markdown with, embedded
# in the binary as one generated source: the daemon reads no file to serve the page, and needs no Node.
find_file(SWITCHBOARD_MARKED_JS marked.umd.min.js PATHS /usr/share/javascript/marked NO_DEFAULT_PATH)
find_file(SWITCHBOARD_DOMPURIFY_JS purify.es.js PATHS /usr/share/nodejs/dompurify/dist NO_DEFAULT_PATH)
find_file(SWITCHBOARD_HIGHLIGHT_JS highlight.min.js PATHS /usr/share/javascript/highlight.js NO_DEFAULT_PATH)
find_file(SWITCHBOARD_QRCODE_JS qrcode.js PATHS /usr/share/nodejs/qrcode-generator NO_DEFAULT_PATH)
if(NOT SWITCHBOARD_MARKED_JS OR NOT SWITCHBOARD_DOMPURIFY_JS OR NOT SWITCHBOARD_HIGHLIGHT_JS OR NOT SWITCHBOARD_QRCODE_JS)
  message(FATAL_ERROR "the web console needs libjs-marked, node-dompurify, libjs-highlight.js and node-qrcode-generator: run scripts/setup")
endif()
set(SWITCHBOARD_WEB_FILES index.html console.css console.js api.js attention.js events.js search.js store.js view.js markdown.js)
set(web_assets "/vendor/marked.js=${SWITCHBOARD_MARKED_JS}|/vendor/purify.js=${SWITCHBOARD_DOMPURIFY_JS}")
string(APPEND web_assets "|/vendor/highlight.js=${SWITCHBOARD_HIGHLIGHT_JS}|/vendor/qrcode.js=${SWITCHBOARD_QRCODE_JS}")
set(web_depends ${SWITCHBOARD_MARKED_JS} ${SWITCHBOARD_DOMPURIFY_JS} ${SWITCHBOARD_HIGHLIGHT_JS} ${SWITCHBOARD_QRCODE_JS})
foreach(file ${SWITCHBOARD_WEB_FILES})
  string(APPEND web_assets "|/${file}=${PROJECT_SOURCE_DIR}/web/${file}")
  list(APPEND web_depends ${PROJECT_SOURCE_DIR}/web/${file})
endforeach()
set(web_assets_cpp ${PROJECT_BINARY_DIR}/generated/WebAssetsData.cpp)
add_custom_command(OUTPUT ${web_assets_cpp}
  COMMAND ${CMAKE_COMMAND} -DOUTPUT=${web_assets_cpp} "-DASSETS=${web_assets}"
          -P ${PROJECT_SOURCE_DIR}/cmake/EmbedWebAssets.cmake
  DEPENDS ${web_depends} ${PROJECT_SOURCE_DIR}/cmake/EmbedWebAssets.cmake
  COMMENT "Embedding the web console"
  VERBATIM)
# Its own file of the unity build: 200 KB of character literals would slow whichever batch it joined.
set_source_files_properties(${web_assets_cpp} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON SKIP_PRECOMPILE_HEADERS ON)

# HTTP and SSE on loopback: requests checked and routed to the dispatcher, events fanned out to subscribers.
switchboard_module(http
  SOURCES
    HttpConnection.cpp
    HttpSecurity.cpp
    HttpServer.cpp
    SseHub.cpp
    SseSubscriber.cpp
    WebAssets.cpp
    ${web_assets_cpp}
    WireResponse.cpp
  PUBLIC switchboard_bus switchboard_rpc
  PRIVATE switchboard_support)
