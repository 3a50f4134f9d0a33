"""trace's half inside the TVM under test: ``record`` times one compile's passes, dlight
rules, codegen and Python calls."""
