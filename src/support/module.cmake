# Bugs as opposed to expected errors, the clock, random ids: used by every module.
switchboard_module(support SOURCES Bug.cpp Clock.cpp RandomId.cpp)
