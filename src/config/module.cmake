# The settings: flags over variables over the config file over defaults, checked once, from one table.
switchboard_module(config
  SOURCES ConfigFile.cpp Configuration.cpp NamedKeys.cpp SettingTable.cpp WorktreeSetupEntry.cpp
  PRIVATE tomlplusplus::tomlplusplus)
