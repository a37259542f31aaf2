# The tests use lowp from this checkout (python/lowp) and its build tree's
# liblowp.so (or $LOWP_LIBRARY), never an installed copy.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
