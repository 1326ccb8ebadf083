# The event bus, the bridge to wire events, and the egress that numbers and serializes them once for every sink.
switchboard_module(bus
  SOURCES Bridge.cpp Egress.cpp EventBus.cpp
  PUBLIC switchboard_protocol switchboard_json
  PRIVATE switchboard_support)
