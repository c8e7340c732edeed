"""The version of mmicl (read by the build and by ``mmicl --version``)."""
__version__ = "0.2.0"
"""mmicl's version, as ``mmicl.__version__`` and ``mmicl --version`` give it."""
