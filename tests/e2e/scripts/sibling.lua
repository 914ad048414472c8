-- A module next to the script, found by require without a path (scripts_test).
return { name = "sibling" }
