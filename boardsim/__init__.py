import os

# The repository's root, here rather than in boardsim.geometry, so that the modules that only need
# it (boardsim.runtime, boardsim.mpycache: every test process imports them) do not import shapely.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
