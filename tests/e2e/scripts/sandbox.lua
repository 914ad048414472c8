-- prints which unsafe globals the script can see, then stops
for _, name in ipairs({ "os", "io", "load", "loadfile", "dofile", "debug" }) do
  printf("%s=%s\n", name, type(_G[name]))
end
printf("package.loadlib=%s\n", type(package.loadlib))
if os then
  printf("os.execute=%s\n", tostring(os.execute("true")))
end
probe("begin", function() exit() end)
