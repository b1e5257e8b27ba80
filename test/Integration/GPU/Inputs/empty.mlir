// An empty module: the passes under test add their functions to it.
