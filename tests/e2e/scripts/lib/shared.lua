-- A module on MOONTRACE_PATH, found by require (scripts_test).
return { name = "shared" }
