"""The write path: a request's body -> validated records -> rows with their measures (one
``evaluate()`` call) -> group commit (``batcher``) or a bulk thread or process (``bulk``) ->
the store. Events take the same road without measures."""
