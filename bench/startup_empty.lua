-- The engine's floor for bench/startup.sh: no kernel probe, so nothing is
-- compiled, loaded or attached; `begin` exits at once.
probe("begin", function() exit() end)
