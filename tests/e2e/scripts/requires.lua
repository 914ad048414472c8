-- modules from the stdlib, next to the script, and from MOONTRACE_PATH
local fmt = require "fmt"
local sibling = require "sibling"
local shared = require "shared"
printf("fmt=%s sibling=%s shared=%s\n", fmt.bytes(1536), sibling.name, shared.name)
probe("begin", function() exit() end)
