"""The ledger and every file beside it: the SQLite store, its lock, the watch on its
folder, the inputs kept when the disk refused them, and the page's mark.

Nothing is imported here: the clips' cutter and the page import the one module they need,
not the store's SQLite."""
