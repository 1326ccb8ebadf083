# SQLite on its own thread: the durable event log (the egress's seq supply), sessions, rules, migrations.
switchboard_module(store
  SOURCES
    Database.cpp
    EventFields.cpp
    EventLog.cpp
    EventTable.cpp
    Migrations.cpp
    RuleStore.cpp
    SearchIndex.cpp
    SessionStore.cpp
    Store.cpp
    StoreError.cpp
    StoreWorker.cpp
  PUBLIC switchboard_bus switchboard_protocol SQLiteCpp
  PRIVATE switchboard_support)
