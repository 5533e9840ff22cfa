"""The operating system's calls the box makes itself, each behind one module: inotify,
ioctl numbers, the C allocator, files opened without following links, signals caught
early, and child processes ended in bounded time. No other part of referee here."""
