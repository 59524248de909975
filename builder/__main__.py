import gc
import os
import sys

from .cli import main

# A build allocates hundreds of thousands of objects that all live until it ends: the
# cyclic collector would walk them again and again for nothing (~10% of a build), and
# freeing them one by one at exit costs a tenth of a second at 1,000 lessons. Nothing
# here makes reference cycles that need collecting, and every file and pool is closed by
# the time main() returns, so the process ends as soon as its output is flushed.
gc.disable()
code = main()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
