# `switchboard run`: one headless turn as a client of the daemon, its flags and its output; `switchboard export`,
# a session's document from the daemon (the same kind of client).
switchboard_module(run
  SOURCES
    ExportCommand.cpp
    HeadlessRun.cpp
    McpConfigFile.cpp
    PromptSource.cpp
    RuleText.cpp
    RunCommand.cpp
    RunCommandLine.cpp
    RunRecorder.cpp
    StructuredOutput.cpp
    TextOutput.cpp
  PUBLIC switchboard_client switchboard_daemon switchboard_protocol switchboard_transport
  PRIVATE switchboard_config switchboard_json switchboard_process CLI11::CLI11)
