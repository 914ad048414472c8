return { name = "sibling" }
