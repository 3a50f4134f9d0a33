"""dump-ir's half inside the TVM under test: ``dump`` compiles a workload with ``recorder``
attached and writes the dump directory (``repro`` when a pass raised)."""
