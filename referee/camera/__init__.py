"""The camera over the table: frames from a source, read in a process of its own."""
