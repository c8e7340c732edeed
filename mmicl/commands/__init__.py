"""The ``mmicl`` command line's commands, one module per family (``mmicl.cli`` lists them and
imports each only when it runs); ``common`` holds the option types and the error boundary they share."""

__all__: list[str] = []
